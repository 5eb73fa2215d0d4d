/**
 * The projector (src/projector/projector.ts): the observer acknowledges at the log, the projector applies the log to
 * every derived table in batches. A batch of any size gives the tables one-by-one application gives, forks included;
 * a message it cannot apply stops it there (the observer keeps acknowledging) until it is fixed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/service.js';
import { importEvents } from '../../src/replay.js';
import { mempoolMinedNext } from '../../src/store/ingest/index.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { createTestDatabase, emptyChainTables, type TestDatabase } from '../helpers/db.js';
import { dumpEverything, rankSeq, rankSurrogateIds } from '../helpers/dump.js';
import { FIXTURES_DIR, fixtureNames, readFixture } from '../helpers/fixtures.js';
import { testPipeline } from '../helpers/pipeline.js';
import type { Projector as ProjectorT } from '../../src/projector/projector.js';
import { settled, startTestService } from '../helpers/service.js';

const quiet = createLogger('silent');
const BATCHES = [1, 7, 500, 10000];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sp-projector-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A generated chain with forks, microblock streams, mempool traffic (replace-by-fee pairs, drops) and BNS names, as a TSV file. */
async function generatedChain(): Promise<string> {
  const gen = new ChainGenerator({
    blocks: 60, txsPerBlock: 6, seed: 'projector', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 3, bns: true, bnsPerBlock: 2,
  });
  const lines: string[] = [];
  let i = 0;
  for await (const m of gen.messages()) lines.push(`${++i}\t${new Date(1_700_000_000_000 + i * 1000).toISOString()}\t${m.path}\t${m.body}`);
  expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
  const file = path.join(dir, 'generated.tsv');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/**
 * Stores an unconfirmed microblock whose parent is a block of the stream (past its first ten blocks, with a child in
 * the stream): nothing in a node's stream makes project_block_fast decline a block that extends the tip inside a batch
 * (the conditions are in sendsWithoutWaiting's comment), so the child, sent ahead, is declined.
 */
function strayMicroblock(file: string): (sql: TestDatabase['sql']) => Promise<unknown> {
  const blocks = readFileSync(file, 'utf8').trimEnd().split('\n')
    .map((l) => l.split('\t'))
    .filter((f) => f[2] === '/new_block')
    .map((f) => JSON.parse(f.slice(3).join('\t')) as { index_block_hash: string; parent_index_block_hash: string; block_height: number });
  const parent = blocks.find((b, i) => i > 10 && blocks[i + 1]?.parent_index_block_hash === b.index_block_hash);
  expect(parent).toBeDefined();
  return (sql) => sql`
    INSERT INTO microblocks (microblock_hash, index_block_hash, microblock_sequence, microblock_parent_hash,
      parent_index_block_hash, block_height, parent_burn_block_height, parent_burn_block_hash, parent_burn_block_time,
      block_time, microblock_canonical, canonical, seq)
    VALUES ('0x' || repeat('ab', 32), '', 0, '0x' || repeat('00', 32), ${parent!.index_block_hash},
      ${parent!.block_height + 1}, 0, '0x', 0, 0, true, true, 0)`;
}

describe('batch projection = one-by-one projection', () => {
  const dbs: TestDatabase[] = [];
  beforeAll(async () => {
    for (const n of BATCHES) dbs.push(await createTestDatabase(`sp_batch${n}`));
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  async function importAt(file: string, before?: (sql: TestDatabase['sql']) => Promise<unknown>) {
    const dumps: Record<string, readonly unknown[]>[] = [];
    const metrics: ReturnType<ProjectorT['metrics']>[] = [];
    for (let i = 0; i < BATCHES.length; i++) {
      const db = dbs[i];
      await emptyChainTables(db.sql);
      await before?.(db.sql);
      // the service's rule for the derived tables: in the batch's transaction for batches of 1 and 7, behind (on a
      // second connection, as import-events has every batch) for batches of catch-up size
      const pipeline = testPipeline(db.sql, quiet, { projector: { maxBatch: BATCHES[i] } });
      const stats = await importEvents(file, pipeline, quiet);
      expect(stats.messages).toBeGreaterThan(0);
      metrics.push(pipeline.projector.metrics());
      await pipeline.stop();
      dumps.push(await dumpEverything(db.sql));
    }
    const batches = metrics.map((m) => m.batches);
    // the sizes were really different: fewer transactions with bigger batches
    expect(batches[0]).toBeGreaterThanOrEqual(batches[1]);
    expect(batches[1]).toBeGreaterThanOrEqual(batches[2]);
    return { dumps, batches, metrics };
  }

  for (const name of fixtureNames()) {
    it(`${name}: batches of ${BATCHES.join(', ')} give the same tables`, async () => {
      const { dumps, batches, metrics } = await importAt(path.join(FIXTURES_DIR, 'events', `${name}.tsv`));
      // blocks are sent ahead only inside a batch, after its first block; nothing here misses the one-statement path
      expect(metrics[0].blocks_sent_ahead).toBe(0);
      expect(metrics.every((m) => m.send_ahead_retries === 0)).toBe(true);
      const [one, ...rest] = dumps;
      if ((one.event_log as unknown[]).length > 1) expect(batches[0]).toBeGreaterThan(batches[2]);
      expect(Object.values(one).some((rows) => rows.length > 0)).toBe(true);
      for (const other of rest) expect(other).toEqual(one);
    }, 300_000);
  }

  it(`a generated chain with forks and microblock streams: batches of ${BATCHES.join(', ')} give the same tables`, async () => {
    const minedNextBefore = mempoolMinedNext.txs;
    const { dumps, batches, metrics } = await importAt(await generatedChain());
    const [one, ...rest] = dumps;
    expect(metrics[2].blocks_sent_ahead).toBeGreaterThan(metrics[1].blocks_sent_ahead);
    // batches of one and of seven messages write their derived tables in their own transaction; batches of catch-up
    // size leave them to the flush behind (a second connection), and the tables are still the same
    expect(metrics[0].derived_behind).toBe(0);
    expect(metrics[1].derived_behind).toBe(0);
    expect(metrics[2].derived_behind).toBeGreaterThan(0);
    expect(metrics[3].derived_behind).toBeGreaterThan(0);
    // in the batches of more than one message, mempool txs mined by the next block were inserted pruned
    expect(mempoolMinedNext.txs).toBeGreaterThan(minedNextBefore);
    expect(batches[0]).toBeGreaterThan(batches[1]);
    expect(batches[1]).toBeGreaterThan(batches[2]);
    expect((one.blocks as { canonical: boolean }[]).some((b) => !b.canonical)).toBe(true);
    // the mempool rules had work to do: txs replaced by fee, mined, and names registered
    const mempool = one.mempool_txs as { status: string; pruned: boolean }[];
    expect(mempool.some((m) => m.status === 'dropped_replace_by_fee')).toBe(true);
    expect(mempool.some((m) => m.pruned && m.status === 'pending')).toBe(true);
    expect((one.bns_names as unknown[]).length).toBeGreaterThan(0);
    for (const other of rest) expect(other).toEqual(one);
  }, 400_000);

  it('a block sent ahead that misses the one-statement path: the batch is applied again, each block waiting, with the same tables', async () => {
    // the stray microblock is stored before the import: the block after its parent is sent ahead and declined
    const file = await generatedChain();
    const { dumps, metrics } = await importAt(file, strayMicroblock(file));
    expect(metrics[0].send_ahead_retries).toBe(0);
    expect(metrics[2].send_ahead_retries).toBeGreaterThan(0);
    // the rolled-back attempt consumed sequence values: compare their order, as after any failed batch
    const [one, ...rest] = dumps.map((d) => rankSeq(rankSurrogateIds(d)));
    for (const other of rest) expect(other).toEqual(one);
  }, 400_000);

  it('batches cut anywhere, the same batch again in the same process: the log projected afresh gives the tables one-by-one gives', async () => {
    // The batches of an import depend on how fast the log grows; here the whole log is copied first, so each batch
    // size cuts it at the same places every time. The stray microblock makes blocks sent ahead miss the one-statement
    // path, so batches fail part-way and are applied again (messages of several steps are in flight when they fail).
    const file = await generatedChain();
    const stray = strayMicroblock(file);
    const [ref, db] = dbs;
    await emptyChainTables(ref.sql);
    await stray(ref.sql);
    const single = testPipeline(ref.sql, quiet, { projector: { maxBatch: 1 } });
    await importEvents(file, single, quiet);
    await single.stop();
    const want = rankSeq(rankSurrogateIds(await dumpEverything(ref.sql)));
    const log = await ref.sql`SELECT * FROM event_log ORDER BY id`;
    let retries = 0;
    for (const [maxBatch, derivedBehindFrom] of [[2, 2], [3, 100], [5, 2], [6, 2], [8, 100], [11, 2], [500, 2], [500, 2], [500, 100000], [500, 2]]) {
      await emptyChainTables(db.sql);
      await stray(db.sql);
      await db.sql`INSERT INTO event_log ${db.sql(log as never)}`;
      const p = testPipeline(db.sql, quiet, { projector: { maxBatch, derivedBehindFrom } });
      await p.start();
      await p.projector.settledLog();
      retries += p.projector.metrics().send_ahead_retries;
      await p.stop();
      expect(rankSeq(rankSurrogateIds(await dumpEverything(db.sql))), `batches of ${maxBatch}`).toEqual(want);
    }
    expect(retries).toBeGreaterThan(0);
  }, 400_000);
});

describe('a message the projector cannot apply', () => {
  it('stops the projector there with a clear error while the observer keeps acknowledging; after the fix and a restart everything is applied in order', async () => {
    const lines = readFixture('mocknet');
    const blocks = lines.filter((l) => l.path === '/new_block');
    const stuck = JSON.parse(blocks[4].body) as { block_height: number; index_block_hash: string };
    const svc = await startTestService();
    let restarted: Awaited<ReturnType<typeof startService>> | undefined;
    const clean = await createTestDatabase('sp_clean');
    try {
      // test-only: the database refuses this one block (a bug the projector cannot get past)
      await svc.db.sql.unsafe(`
        CREATE FUNCTION refuse_block() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'forced failure for block %', NEW.block_height; END $$;
        CREATE TRIGGER refuse_block BEFORE INSERT ON blocks FOR EACH ROW
          WHEN (NEW.index_block_hash = '${stuck.index_block_hash}') EXECUTE FUNCTION refuse_block();`);
      for (const l of lines) {
        const res = await fetch(svc.observer + l.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: l.body });
        await res.arrayBuffer();
        expect(res.status, `${l.id} ${l.path}`).toBe(200); // acknowledged: it is in the log
      }
      const [{ logged, stuckId }] = await svc.db.sql<{ logged: number; stuckId: number }[]>`
        SELECT (SELECT max(id) FROM event_log)::int AS logged,
          (SELECT id FROM event_log WHERE path = '/new_block' AND body::json->>'index_block_hash' = ${stuck.index_block_hash})::int AS "stuckId"`;
      type Status = { state: string; acknowledged_id: number; applied_id: number; pending_messages: number; failure: { id: number; reason: string } | null };
      let status: Status | undefined;
      for (let i = 0; i < 400 && status?.state !== 'failed'; i++) {
        status = (await (await fetch(svc.api + '/extended/v1/status/ingest')).json()) as Status;
        if (status.state !== 'failed') await new Promise((r) => setTimeout(r, 25));
      }
      expect(status).toMatchObject({ state: 'failed', acknowledged_id: logged, applied_id: stuckId - 1, failure: { id: stuckId } });
      expect(status!.failure!.reason).toContain(`forced failure for block ${stuck.block_height}`);
      expect(status!.pending_messages).toBe(logged - stuckId + 1);
      // the observer's own status says the same
      expect(((await (await fetch(svc.observer + '/status')).json()) as Status).failure?.id).toBe(stuckId);
      // REST shows the chain up to the block before
      const tip = (await (await fetch(svc.api + '/extended')).json()) as { chain_tip: { block_height: number } };
      expect(tip.chain_tip.block_height).toBe(stuck.block_height - 1);

      // the fix, then a restart on the same database: everything applied, in order, as a clean ingest
      await svc.db.sql.unsafe('DROP TRIGGER refuse_block ON blocks; DROP FUNCTION refuse_block()');
      await svc.service.close();
      restarted = await startService(
        loadConfig({ DATABASE_URL: svc.db.url, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_ANON_RPM: '0' }),
        quiet,
      );
      await settled(`http://127.0.0.1:${restarted.observerPort}`);
      const after = (await (await fetch(`http://127.0.0.1:${restarted.apiPort}/extended/v1/status/ingest`)).json()) as Status;
      expect(after).toMatchObject({ state: 'caught_up', acknowledged_id: logged, applied_id: logged, pending_messages: 0, failure: null });

      const file = path.join(dir, 'mocknet.tsv');
      writeFileSync(file, lines.map((l) => `${l.id}\t${l.timestamp}\t${l.path}\t${l.body}`).join('\n') + '\n');
      const pipeline = testPipeline(clean.sql, quiet);
      await importEvents(file, pipeline, quiet);
      await pipeline.stop();
      const want = await dumpEverything(clean.sql);
      const got = await dumpEverything(svc.db.sql);
      // arrival times of mempool txs came from the clock here and from the file there
      for (const d of [want, got]) d.mempool_txs = (d.mempool_txs as Record<string, unknown>[]).map((r) => ({ ...r, receipt_time: 0 }));
      // the failed attempts consumed change_seq values (a sequence is not rolled back): seq keeps its order, not its values
      const [w, g] = [rankSeq(want), rankSeq(got)];
      for (const t of Object.keys(w)) expect(g[t], t).toEqual(w[t]);
    } finally {
      await restarted?.close();
      await svc.db.drop();
      await clean.drop();
    }
  }, 300_000);
});


describe('the mempool table is vacuumed where nothing else does it', () => {
  it('with autovacuum off, a VACUUM of mempool_txs, mempool_pending and the deferred derived rows every vacuumEvery applied messages (and none with it on)', async () => {
    const db = await createTestDatabase('sp_projector_vacuum');
    try {
      const [{ off }] = await db.sql<{ off: boolean }[]>`SELECT current_setting('autovacuum') = 'off' AS off`;
      const vacuums = async () => {
        const [r] = await db.sql<{ n: number }[]>`
          SELECT min(vacuum_count)::int AS n FROM pg_stat_user_tables WHERE relname IN ('mempool_txs', 'mempool_pending', 'derived_deferred', 'nft_custody_deferred')`;
        return r.n;
      };
      const before = await vacuums();
      const pipeline = testPipeline(db.sql, quiet, { projector: { maxBatch: 20, vacuumEvery: 40 } });
      const stats = await importEvents(path.join(FIXTURES_DIR, 'events', 'epoch-3-transition.tsv'), pipeline, quiet);
      expect(stats.messages).toBeGreaterThan(200);
      // the VACUUM runs in the background: wait for the statistics to show it
      let after = before;
      for (let i = 0; i < 50 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await vacuums();
        if (!off) break;
      }
      if (off) expect(after).toBeGreaterThan(before);
      else expect(after).toBe(before);
    } finally {
      await db.drop();
    }
  });
});
