// The schema a database ends with does not depend on the way it got there: migrated from empty in one go, or upgraded
// from an older release (a prefix of the numbered migrations, applied as releases before sql/functions applied them).
// And sql/functions is applied by content: a changed file again, an unchanged one never.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FUNCTION_FILES, functionFiles, migrate, migrationFiles, sqlDir } from '../../src/store/migrate.js';
import { connectDatabase } from '../../src/store/connect.js';
import type { Sql } from '../../src/store/sql.js';
import type { Logger } from 'pino';
import { createEmptyTestDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { pgBin } from '../helpers/instances.js';

const run = promisify(execFile);
const MINUTES = 60_000;

/**
 * `pg_dump --schema-only` of a database. Normalised for one thing only: the random key of pg_dump's `\restrict` /
 * `\unrestrict` lines, new with every run. The database name appears nowhere (no --create); object order is pg_dump's
 * own (by kind, then name), not the order of creation.
 */
async function schemaDump(db: TestDatabase): Promise<string> {
  const { stdout } = await run(pgBin('pg_dump'), ['--schema-only', '--dbname', db.url], { maxBuffer: 64 * 1024 * 1024 });
  return stdout
    .split('\n')
    .filter((l) => !/^\\(un)?restrict /.test(l))
    .join('\n');
}

/** A copy of sql/ to edit: the numbered migrations `keep` selects, and sql/functions unless `functions` is false. */
function sqlCopy(opts: { keep?: (file: string) => boolean; functions?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-sql-'));
  for (const f of migrationFiles()) if (!opts.keep || opts.keep(f)) cpSync(path.join(sqlDir(), f), path.join(dir, f));
  if (opts.functions !== false) cpSync(path.join(sqlDir(), 'functions'), path.join(dir, 'functions'), { recursive: true });
  return dir;
}

/**
 * What a release before sql/functions did to these migrations: each file in its own transaction, recorded in a
 * schema_migrations without checksums.
 */
async function migrateAsOldRelease(sql: Sql, files: string[]): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
  for (const f of files) {
    const text = readFileSync(path.join(sqlDir(), f), 'utf8');
    await sql.begin(async (tx) => {
      await tx.unsafe(text);
      await tx`INSERT INTO schema_migrations (version) VALUES (${f})`;
    });
  }
}

function capturingLog() {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = {
    info: () => undefined,
    warn: (obj: Record<string, unknown>, msg: string) => void warnings.push({ obj, msg }),
  } as unknown as Pick<Logger, 'info' | 'warn'>;
  return { warnings, log };
}

async function functionRows(sql: Sql) {
  return sql<{ file: string; sha256: string; applied_at: Date }[]>`SELECT file, sha256, applied_at FROM schema_functions ORDER BY file`;
}

describe('schema equality', () => {
  const dbs: TestDatabase[] = [];
  const dirs: string[] = [];
  let oneGo: string;

  beforeAll(async () => {
    const db = await createEmptyTestDatabase('sp_schema_onego');
    dbs.push(db);
    await migrate(db.sql);
    oneGo = await schemaDump(db);
  }, 10 * MINUTES);

  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  // Older releases: the one with the mempool rules (0017), the projector (0070), and the last one before sql/functions
  // (every migration up to 0141).
  const all = migrationFiles();
  const releases: [string, number][] = [
    ['0017_mempool_reference_rules.sql', all.indexOf('0017_mempool_reference_rules.sql') + 1],
    ['0070_projector.sql', all.indexOf('0070_projector.sql') + 1],
    ['0141_hook_deliveries_lz4.sql', all.indexOf('0141_hook_deliveries_lz4.sql') + 1],
  ];

  it.each(releases)(
    'a database of the release whose last migration was %s, migrated now, has the schema of one migrated in one go',
    async (_last, k) => {
      expect(k).toBeGreaterThan(0);
      const db = await createEmptyTestDatabase('sp_schema_steps');
      dbs.push(db);
      await migrateAsOldRelease(db.sql, all.slice(0, k));
      const { log, warnings } = capturingLog();
      const applied = await migrate(db.sql, undefined, { log });
      expect(applied).toEqual([...all.slice(k), ...FUNCTION_FILES.map((f) => `functions/${f}`)]);
      // the old release's rows carry no checksum: nothing to warn about
      expect(warnings).toEqual([]);
      expect(await schemaDump(db)).toBe(oneGo);
    },
    10 * MINUTES,
  );

  it('two processes migrating an empty database at once both succeed, with the schema of one migrated alone', async () => {
    const db = await createEmptyTestDatabase('sp_schema_twice');
    dbs.push(db);
    const other = await connectDatabase({ databaseUrl: db.url, dataDir: '/nonexistent', max: 1 });
    try {
      const [a, b] = await Promise.all([migrate(db.sql), migrate(other.sql)]);
      // each migration and each functions file applied once, by one of them (every file again by a run that saw a
      // migration pending is allowed: the union is what matters)
      const all = [...migrationFiles(), ...FUNCTION_FILES.map((f) => `functions/${f}`)];
      expect(new Set([...a, ...b])).toEqual(new Set(all));
      expect(a.filter((f) => !f.startsWith('functions/') && b.includes(f))).toEqual([]);
    } finally {
      await other.close();
    }
    expect(await schemaDump(db)).toBe(oneGo);
  }, 10 * MINUTES);

  it('every function, trigger function and view of a migrated database has its definition in sql/functions', async () => {
    const defined = new Set<string>();
    for (const f of functionFiles()) {
      const text = readFileSync(path.join(sqlDir(), 'functions', f), 'utf8');
      for (const m of text.matchAll(/^CREATE OR REPLACE (?:FUNCTION|VIEW) ([a-z0-9_]+)/gm)) {
        expect(defined.has(m[1]), `${m[1]} is defined twice in sql/functions`).toBe(false);
        defined.add(m[1]);
      }
      // every definition of a functions file replaces: a plain CREATE would fail on its second application
      expect(text).not.toMatch(/^CREATE (?!OR REPLACE )(?:FUNCTION|VIEW)/m);
    }
    const [db] = dbs;
    const present = await db.sql<{ name: string }[]>`
      SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
      UNION ALL
      SELECT viewname FROM pg_views WHERE schemaname = 'public'
      ORDER BY 1`;
    expect(present.map((r) => r.name)).toEqual([...defined].sort());
  });
});

describe('functions files are applied by content', () => {
  let db: TestDatabase;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('sp_schema_fn');
  }, 10 * MINUTES);

  afterAll(async () => {
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('an unchanged file is not applied again; a changed one is, and only it', async () => {
    const before = await functionRows(db.sql);
    expect(before.map((r) => r.file)).toEqual([...FUNCTION_FILES].sort());
    expect(await migrate(db.sql)).toEqual([]);
    expect(await functionRows(db.sql)).toEqual(before);

    // a marker in the body of one function of mempool.sql
    const dir = sqlCopy();
    dirs.push(dir);
    const file = path.join(dir, 'functions', 'mempool.sql');
    const text = readFileSync(file, 'utf8');
    const edited = text.replace(
      /(CREATE OR REPLACE FUNCTION tip_burn_height_set\(p_height bigint\) RETURNS void LANGUAGE sql AS \$\$\n)/,
      '$1  -- edited by the schema-equality test\n',
    );
    expect(edited).not.toBe(text);
    writeFileSync(file, edited);
    expect(await migrate(db.sql, dir)).toEqual(['functions/mempool.sql']);
    const [def] = await db.sql<{ d: string }[]>`SELECT pg_get_functiondef('tip_burn_height_set(bigint)'::regprocedure) AS d`;
    expect(def.d).toContain('edited by the schema-equality test');
    const after = await functionRows(db.sql);
    for (const r of after) {
      const old = before.find((b) => b.file === r.file)!;
      if (r.file === 'mempool.sql') {
        expect(r.sha256).not.toBe(old.sha256);
        expect(r.applied_at.getTime()).toBeGreaterThan(old.applied_at.getTime());
      } else {
        expect(r).toEqual(old);
      }
    }
    // applied once: the next migrate has nothing to do
    expect(await migrate(db.sql, dir)).toEqual([]);

    // back to the repository's file: applied again, and the database holds its definition
    expect(await migrate(db.sql)).toEqual(['functions/mempool.sql']);
    const [restored] = await db.sql<{ d: string }[]>`SELECT pg_get_functiondef('tip_burn_height_set(bigint)'::regprocedure) AS d`;
    expect(restored.d).not.toContain('edited by the schema-equality test');
  }, 5 * MINUTES);

  it('a functions file that fails changes nothing: the error stops migrate and the next run tries the file again', async () => {
    const dir = sqlCopy();
    dirs.push(dir);
    const file = path.join(dir, 'functions', 'projector.sql');
    const text = readFileSync(file, 'utf8');
    // a marker in project_mempool, then a statement that fails after it
    const marked = text.replace(/(CREATE OR REPLACE FUNCTION project_mempool\([^$]*\$\$\n)/, '$1-- edited by the schema-equality test\n');
    expect(marked).not.toBe(text);
    writeFileSync(file, marked + '\nCREATE OR REPLACE FUNCTION cache_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$ nonsense;\n');
    const before = await functionRows(db.sql);
    await expect(migrate(db.sql, dir)).rejects.toThrow(/syntax error/);
    expect(await functionRows(db.sql)).toEqual(before);
    const [def] = await db.sql<{ d: string }[]>`SELECT pg_get_functiondef('project_mempool(bigint, json, boolean, text[])'::regprocedure) AS d`;
    expect(def.d).not.toContain('edited by the schema-equality test');
    writeFileSync(file, text);
    expect(await migrate(db.sql, dir)).toEqual([]);
  });

  it('a numbered migration applied in the run applies every functions file again (its bodies may be older ones)', async () => {
    // 0071 defines mempool_prune with its body of that time; the functions file's definition must win again
    await db.sql`DELETE FROM schema_migrations WHERE version = '0071_mempool_rbf_joins.sql'`;
    const [current] = await db.sql<{ d: string }[]>`SELECT pg_get_functiondef('mempool_prune(text[])'::regprocedure) AS d`;
    const applied = await migrate(db.sql);
    expect(applied).toEqual(['0071_mempool_rbf_joins.sql', ...FUNCTION_FILES.map((f) => `functions/${f}`)]);
    const [after] = await db.sql<{ d: string }[]>`SELECT pg_get_functiondef('mempool_prune(text[])'::regprocedure) AS d`;
    expect(after.d).toBe(current.d);
    expect(await migrate(db.sql)).toEqual([]);
  }, 5 * MINUTES);

  it('a file in sql/functions that FUNCTION_FILES does not list stops migrate, naming it', async () => {
    const dir = sqlCopy();
    dirs.push(dir);
    writeFileSync(path.join(dir, 'functions', 'extra.sql'), 'SELECT 1;\n');
    await expect(migrate(db.sql, dir)).rejects.toThrow(/not listed: extra\.sql/);
    rmSync(path.join(dir, 'functions', 'bns.sql'));
    await expect(migrate(db.sql, dir)).rejects.toThrow(/missing: bns\.sql/);
  });
});

describe('numbered migrations changed after they were applied', () => {
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase('sp_schema_warn');
    dir = sqlCopy();
  }, 10 * MINUTES);

  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are named in a warning when their checksum was recorded, and never run again', async () => {
    const quiet = capturingLog();
    expect(await migrate(db.sql, dir, { log: quiet.log })).toEqual([]);
    expect(quiet.warnings).toEqual([]);

    const file = '0105_miner_rewards_height.sql';
    writeFileSync(path.join(dir, file), readFileSync(path.join(dir, file), 'utf8') + '\nCREATE TABLE must_not_exist (x int);\n');
    const { log, warnings } = capturingLog();
    expect(await migrate(db.sql, dir, { log })).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].obj).toEqual({ migration: file });
    expect(warnings[0].msg).toContain(`sql/${file}`);
    const [t] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'must_not_exist'`;
    expect(t.n).toBe(0);

    // a row recorded before checksums were kept: no checksum to compare, no warning
    await db.sql`UPDATE schema_migrations SET checksum = NULL WHERE version = ${file}`;
    const old = capturingLog();
    expect(await migrate(db.sql, dir, { log: old.log })).toEqual([]);
    expect(old.warnings).toEqual([]);
  });
});
