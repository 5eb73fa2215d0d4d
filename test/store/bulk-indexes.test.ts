/**
 * Bulk import without the API-only indexes (sql/0115, src/store/bulk-indexes.ts): an import that defers
 * them ends with the same indexes and the same tables as one that keeps them; indexes an interrupted import left
 * deferred are created by the next start-up; `auto` defers only into an empty database and for a large file.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { importEvents, shouldDeferIndexes, DEFER_INDEXES_MIN_BYTES, IMPORT_PROJECTOR } from '../../src/replay.js';
import { migrate } from '../../src/store/migrate.js';
import { DEFERRABLE_INDEXES, deferIndexes, deferredIndexCount, ifNotExists, restoreDeferredIndexes } from '../../src/store/bulk-indexes.js';
import { analyzeDatabase, analyzeIndexedColumns } from '../../src/store/maintenance.js';
import type { Sql } from '../../src/store/sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { dumpDatabase } from '../helpers/dump.js';
import { FIXTURES_DIR } from '../helpers/fixtures.js';
import { testPipeline } from '../helpers/pipeline.js';

const quiet = createLogger('silent');

async function indexDefs(sql: Sql): Promise<string[]> {
  return (
    await sql<{ d: string }[]>`SELECT indexdef AS d FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`
  ).map((r) => r.d);
}

describe('bulk import indexes', () => {
  let a: TestDatabase;
  let b: TestDatabase;
  beforeAll(async () => {
    [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  });
  afterAll(async () => {
    await Promise.all([a?.drop(), b?.drop()]);
  });

  it('names only indexes the migrations create, none of them unique', async () => {
    const rows = await a.sql<{ name: string; unique: boolean }[]>`
      SELECT c.relname AS name, i.indisunique AS unique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = ANY(${DEFERRABLE_INDEXES as string[]})`;
    expect(rows.map((r) => r.name).sort()).toEqual([...DEFERRABLE_INDEXES].sort());
    expect(rows.filter((r) => r.unique)).toEqual([]);
  });

  it('an import that defers them ends with the same indexes and tables as one that keeps them', async () => {
    const file = path.join(FIXTURES_DIR, 'events', 'epoch-3-transition.tsv');
    const before = await indexDefs(a.sql);
    // `a` with import-events' projector (growth ANALYZEs of the indexed columns), `b` with the service's
    const deferred = await importEvents(file, testPipeline(a.sql, quiet, { projector: IMPORT_PROJECTOR }), quiet, { deferIndexes: 'on' });
    const kept = await importEvents(file, testPipeline(b.sql, quiet), quiet, { deferIndexes: 'off' });
    expect(deferred.deferredIndexes).toBe(DEFERRABLE_INDEXES.length);
    expect(kept.deferredIndexes).toBeUndefined();
    expect(deferred.messages).toBe(kept.messages);
    expect(await deferredIndexCount(a.sql)).toBe(0);
    expect(await indexDefs(a.sql)).toEqual(before);
    expect(await indexDefs(a.sql)).toEqual(await indexDefs(b.sql));
    expect(await dumpDatabase(a.sql)).toEqual(await dumpDatabase(b.sql));
  });

  it('an import ends with statistics of the whole imported database', async () => {
    // both databases were imported by the test above; tx_id is unique, so ANALYZE puts every value in the histogram:
    // min(distinct values, statistics target + 1) bounds at the default target of 100, from an ANALYZE that saw them all
    for (const db of [a, b]) {
      const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(DISTINCT tx_id)::int AS n FROM txs`;
      expect(n).toBeGreaterThan(11);
      const [s] = await db.sql<{ bounds: number | null }[]>`
        SELECT cardinality(histogram_bounds::text::text[]) AS bounds FROM pg_stats
        WHERE schemaname = current_schema() AND tablename = 'txs' AND attname = 'tx_id'`;
      expect(s.bounds).toBe(Math.min(n, 101));
      // the last ANALYZE is whole: a column no index names has statistics too (in `a`, the growth ANALYZEs left it out)
      const [raw] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'txs' AND attname = 'raw_tx'`;
      expect(raw.n).toBe(1);
    }
  });

  it('indexes left deferred (an interrupted import) are created by the next start-up', async () => {
    const before = await indexDefs(a.sql);
    expect(await deferIndexes(a.sql)).toBe(DEFERRABLE_INDEXES.length);
    const during = await indexDefs(a.sql);
    expect(before.length - during.length).toBe(DEFERRABLE_INDEXES.length);
    expect(await deferredIndexCount(a.sql)).toBe(DEFERRABLE_INDEXES.length);
    // deferring again drops nothing more and loses no definition
    expect(await deferIndexes(a.sql)).toBe(0);
    expect(await deferredIndexCount(a.sql)).toBe(DEFERRABLE_INDEXES.length);
    // an import that keeps them leaves them deferred only if asked to
    await migrate(a.sql, undefined, { keepDeferredIndexes: true });
    expect(await deferredIndexCount(a.sql)).toBe(DEFERRABLE_INDEXES.length);
    await migrate(a.sql);
    expect(await deferredIndexCount(a.sql)).toBe(0);
    expect(await indexDefs(a.sql)).toEqual(before);
  });

  it('builders running side by side (an import with its parallel builds, a start-up) create each index once', async () => {
    const before = await indexDefs(a.sql);
    expect(await deferIndexes(a.sql)).toBe(DEFERRABLE_INDEXES.length);
    const seen: number[] = [];
    const [x, y] = await Promise.all([
      restoreDeferredIndexes(a.sql, (done) => seen.push(done), 3),
      restoreDeferredIndexes(a.sql, undefined, 2),
    ]);
    expect([...x, ...y].sort()).toEqual([...DEFERRABLE_INDEXES].sort());
    expect(seen).toEqual(x.map((_, i) => i + 1));
    expect(await deferredIndexCount(a.sql)).toBe(0);
    expect(await indexDefs(a.sql)).toEqual(before);
  });

  it('a parallel ANALYZE reaches every table of the schema, at the target it is given', async () => {
    const tables = ['analyze_probe_a', 'analyze_probe_b', 'analyze_probe_c'];
    for (const t of tables) {
      await a.sql.unsafe(`CREATE TABLE ${t} (v integer)`);
      await a.sql.unsafe(`INSERT INTO ${t} SELECT g FROM generate_series(1, 500) g`);
    }
    const bounds = async () =>
      (
        await a.sql<{ t: string; n: number }[]>`
          SELECT tablename AS t, cardinality(histogram_bounds::text::text[]) AS n FROM pg_stats
          WHERE schemaname = current_schema() AND tablename = ANY(${tables}) AND attname = 'v' ORDER BY tablename`
      ).map((r) => [r.t, r.n]);
    expect(await bounds()).toEqual([]);
    await analyzeDatabase(a.sql, 10, 3);
    expect(await bounds()).toEqual(tables.map((t) => [t, 11]));
    await analyzeDatabase(a.sql, undefined, 2);
    expect(await bounds()).toEqual(tables.map((t) => [t, 101]));
    for (const t of tables) await a.sql.unsafe(`DROP TABLE ${t}`);
  });

  it('the indexed-columns ANALYZE covers the columns indexes name (keys, expressions, predicates) and no other', async () => {
    await a.sql.unsafe(`CREATE TABLE analyze_cols_a (k integer, p integer, e integer, payload text)`);
    await a.sql.unsafe(`CREATE INDEX analyze_cols_a_k ON analyze_cols_a (k) WHERE p > 0`);
    await a.sql.unsafe(`CREATE INDEX analyze_cols_a_e ON analyze_cols_a ((e + 1))`);
    await a.sql.unsafe(`CREATE TABLE analyze_cols_b (id integer PRIMARY KEY, payload text)`);
    await a.sql.unsafe(`CREATE TABLE analyze_cols_c (v integer, payload text)`);
    for (const t of ['analyze_cols_a', 'analyze_cols_b', 'analyze_cols_c']) {
      const cols = t === 'analyze_cols_a' ? 'g, g, g, md5(g::text)' : 'g, md5(g::text)';
      await a.sql.unsafe(`INSERT INTO ${t} SELECT ${cols} FROM generate_series(1, 300) g`);
    }
    const analyzed = async () =>
      (
        await a.sql<{ c: string }[]>`
          SELECT tablename || '.' || attname AS c FROM pg_stats
          WHERE schemaname = current_schema() AND tablename LIKE 'analyze_cols_%' ORDER BY 1`
      ).map((r) => r.c);
    expect(await analyzed()).toEqual([]);
    await analyzeIndexedColumns(a.sql);
    // a: the index key, the predicate's column and the expression's; b: its primary key; c (no index): every column
    expect(await analyzed()).toEqual([
      'analyze_cols_a.e',
      'analyze_cols_a.k',
      'analyze_cols_a.p',
      'analyze_cols_b.id',
      'analyze_cols_c.payload',
      'analyze_cols_c.v',
    ]);
    // the statistics an indexed column gets are a whole ANALYZE's
    const [k] = await a.sql<{ n: number }[]>`
      SELECT cardinality(histogram_bounds::text::text[]) AS n FROM pg_stats
      WHERE schemaname = current_schema() AND tablename = 'analyze_cols_a' AND attname = 'k'`;
    expect(k.n).toBe(101);
    for (const t of ['analyze_cols_a', 'analyze_cols_b', 'analyze_cols_c']) await a.sql.unsafe(`DROP TABLE ${t}`);
  });

  it('auto defers into an empty database for a large file, and while an earlier import left some deferred', async () => {
    const fresh = await createTestDatabase();
    try {
      expect(await shouldDeferIndexes(fresh.sql, 'auto', DEFER_INDEXES_MIN_BYTES)).toBe(true);
      expect(await shouldDeferIndexes(fresh.sql, 'auto', DEFER_INDEXES_MIN_BYTES - 1)).toBe(false);
      expect(await shouldDeferIndexes(fresh.sql, 'off', DEFER_INDEXES_MIN_BYTES)).toBe(false);
      expect(await shouldDeferIndexes(fresh.sql, 'on', 0)).toBe(true);
      // a database that holds a chain keeps its indexes: its API is being read
      expect(await shouldDeferIndexes(a.sql, 'auto', DEFER_INDEXES_MIN_BYTES)).toBe(false);
      await deferIndexes(a.sql, [DEFERRABLE_INDEXES[0]]);
      expect(await shouldDeferIndexes(a.sql, 'auto', 0)).toBe(true);
      await migrate(a.sql);
      expect(await deferredIndexCount(a.sql)).toBe(0);
    } finally {
      await fresh.drop();
    }
  });

  it('rewrites an index definition to create it only if missing', () => {
    expect(ifNotExists('CREATE INDEX x ON public.t USING btree (a)')).toBe('CREATE INDEX IF NOT EXISTS x ON public.t USING btree (a)');
    expect(ifNotExists('CREATE UNIQUE INDEX x ON public.t USING btree (a)')).toBe(
      'CREATE UNIQUE INDEX IF NOT EXISTS x ON public.t USING btree (a)',
    );
    expect(() => ifNotExists('DROP TABLE t')).toThrow(/unexpected index definition/);
  });
});
