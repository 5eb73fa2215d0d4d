/**
 * Foundation: real node streams go in over HTTP exactly once, whatever the node's retries and restarts do.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/logger.js';
import { exportEvents, importEvents } from '../../src/replay.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { dumpDatabase } from '../helpers/dump.js';
import { fixtureNames, readFixture, readGolden, type FixtureLine } from '../helpers/fixtures.js';
import { replay, startTestService, type TestService } from '../helpers/service.js';

const quiet = createLogger('silent');

async function ingestAll(db: TestDatabase, lines: FixtureLine[]): Promise<number[]> {
  const p = testPipeline(db.sql, quiet);
  const statuses: number[] = [];
  for (const l of lines) statuses.push((await applied(p, l.path, l.body)).status);
  return statuses;
}

/** Deterministic PRNG (mulberry32) so a failing order can be reproduced. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An order a node can produce: every message is eventually delivered in order, but after some deliveries the node
 * "restarts" and re-sends a window of its backlog (earlier messages, in their original order), or retries one at once.
 */
function nodeRetryOrder(lines: FixtureLine[], seed: number): FixtureLine[] {
  const rand = rng(seed);
  const out: FixtureLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]);
    const r = rand();
    if (r < 0.3) out.push(lines[i]); // answer lost, immediate retry
    else if (r < 0.45) {
      const from = Math.floor(rand() * (i + 1));
      out.push(...lines.slice(from, i + 1)); // restart: backlog re-sent
    }
  }
  return out;
}

describe('ingest of every recorded node stream over HTTP', () => {
  for (const name of fixtureNames()) {
    describe(name, () => {
      let svc: TestService;
      const lines = readFixture(name);
      beforeAll(async () => {
        svc = await startTestService();
      });
      afterAll(async () => svc?.stop());

      it('answers 200 to every message and stores what the stream implies', async () => {
        const statuses = await replay(svc.observer, lines);
        expect(statuses.filter((s) => s !== 200)).toEqual([]);
        const sql = svc.db.sql;
        const blocks = lines.filter((l) => l.path === '/new_block').map((l) => JSON.parse(l.body));
        const distinct = new Set(blocks.map((b) => b.index_block_hash));
        const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blocks`;
        expect(n).toBe(distinct.size);
        // every committed event of a successful tx of every block is stored once (per block that carries it)
        const seen = new Set<string>();
        let expectedEvents = 0;
        for (const b of blocks) {
          if (seen.has(b.index_block_hash)) continue;
          seen.add(b.index_block_hash);
          const ok = new Set(b.transactions.filter((t: { status: string }) => t.status === 'success').map((t: { txid: string }) => t.txid));
          expectedEvents += b.events.filter((e: { committed: boolean; txid: string }) => e.committed && ok.has(e.txid)).length;
        }
        const [{ e }] = await sql<{ e: number }[]>`SELECT count(*)::int AS e FROM events WHERE index_block_hash <> ''`;
        expect(e).toBe(expectedEvents);
        // the canonical tip is what the reference reported after the same stream
        const golden = readGolden<{ request: string; body: { chain_tip?: { block_height: number; index_block_hash: string } } }[]>(`${name}.json`);
        const status = golden.find((g) => g.request === '/extended');
        const res = await fetch(svc.api + '/extended');
        const ours = (await res.json()) as { chain_tip?: { block_height: number; index_block_hash: string } };
        expect(ours.chain_tip?.index_block_hash).toBe(status?.body.chain_tip?.index_block_hash);
        expect(ours.chain_tip?.block_height).toBe(status?.body.chain_tip?.block_height);
        // every tx of every canonical block is stored canonical
        const [{ bad }] = await sql<{ bad: number }[]>`
          SELECT count(*)::int AS bad FROM txs t JOIN blocks b USING (index_block_hash) WHERE t.canonical <> b.canonical`;
        expect(bad).toBe(0);
      });

      it('is idempotent: every message twice, and node-style backlog re-sends, give the same database', async () => {
        const once = await createTestDatabase();
        const twice = await createTestDatabase();
        const shuffled = await createTestDatabase();
        try {
          expect((await ingestAll(once, lines)).every((s) => s === 200)).toBe(true);
          expect((await ingestAll(twice, lines.flatMap((l) => [l, l]))).every((s) => s === 200)).toBe(true);
          expect((await ingestAll(shuffled, nodeRetryOrder(lines, 42))).every((s) => s === 200)).toBe(true);
          const reference = await dumpDatabase(once.sql);
          expect(await dumpDatabase(twice.sql)).toEqual(reference);
          expect(await dumpDatabase(shuffled.sql)).toEqual(reference);
        } finally {
          await Promise.all([once.drop(), twice.drop(), shuffled.drop()]);
        }
      }, 900_000); // three full ingests of the largest streams: a quarter of an hour on a loaded 2-core machine
    });
  }
});

describe('forks', () => {
  it('mainnet-reorg-scenario2: the orphaned branch ends non-canonical, the winning branch canonical', async () => {
    const db = await createTestDatabase();
    try {
      const lines = readFixture('mainnet-reorg-scenario2');
      expect((await ingestAll(db, lines)).every((s) => s === 200)).toBe(true);
      const rows = await db.sql<{ index_block_hash: string; block_height: number; canonical: boolean }[]>`
        SELECT index_block_hash, block_height, canonical FROM blocks ORDER BY block_height, index_block_hash`;
      // walk the winning chain back from the highest block
      const byHash = new Map(lines.filter((l) => l.path === '/new_block').map((l) => {
        const b = JSON.parse(l.body);
        return [b.index_block_hash as string, b.parent_index_block_hash as string];
      }));
      const top = rows.reduce((a, r) => (r.block_height > a.block_height ? r : a));
      const winning = new Set<string>();
      for (let h: string | undefined = top.index_block_hash; h && byHash.has(h); h = byHash.get(h)) winning.add(h);
      expect(winning.size).toBe(4);
      for (const r of rows) expect([r.index_block_hash, r.canonical]).toEqual([r.index_block_hash, winning.has(r.index_block_hash)]);
      const orphaned = rows.filter((r) => !r.canonical).map((r) => r.index_block_hash);
      expect(orphaned.length).toBe(1);
      const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM txs WHERE index_block_hash = ANY(${orphaned}) AND canonical`;
      expect(n).toBe(0);
      const [{ c }] = await db.sql<{ c: number }[]>`SELECT count(*)::int AS c FROM txs WHERE index_block_hash = ANY(${[...winning]}) AND NOT canonical`;
      expect(c).toBe(0);
      // the orphaned block's own tx was re-mined on the winning branch, so it is not left in the mempool
      const [{ m }] = await db.sql<{ m: number }[]>`SELECT count(*)::int AS m FROM mempool_txs WHERE NOT pruned`;
      expect(m).toBe(0);
    } finally {
      await db.drop();
    }
  });
});

describe('replay tooling', () => {
  it('import(export(x)) gives an identical database', async () => {
    const src = await createTestDatabase();
    const dst = await createTestDatabase();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-export-'));
    try {
      const lines = readFixture('fuzzed-transactions-1');
      await ingestAll(src, lines);
      const file = path.join(dir, 'out.tsv');
      expect(await exportEvents(src.sql, file)).toBe(lines.length);
      const exported = readFileSync(file, 'utf8').trim().split('\n');
      expect(exported.map((l) => l.split('\t')[2])).toEqual(lines.map((l) => l.path));
      const stats = await importEvents(file, testPipeline(dst.sql, quiet), quiet);
      expect(stats.messages).toBe(lines.length);
      expect(await dumpDatabase(dst.sql)).toEqual(await dumpDatabase(src.sql));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await Promise.all([src.drop(), dst.drop()]);
    }
  });
});
