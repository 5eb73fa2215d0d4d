/**
 * The one-statement block path (sql/0013_ingest_block_fast.sql) writes exactly what the general block transaction
 * writes: every fixture and a generated chain with forks, microblock streams and mempool traffic are replayed twice,
 * once with blocks on the tip taking the fast path and once with every block in the general transaction, and the two
 * databases are compared table by table (push_outbox included: both record the same results for the push publisher).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase, type TestDatabase, emptyChainTables } from '../helpers/db.js';
import { dumpDatabase } from '../helpers/dump.js';
import { fixtureNames, readFixture } from '../helpers/fixtures.js';
import { blockPaths } from '../../src/store/ingest/index.js';
import { createLogger } from '../../src/logger.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

async function reset(sql: Sql) {
  await emptyChainTables(sql);
}

async function everything(sql: Sql) {
  return {
    ...(await dumpDatabase(sql)),
    pox_events: await sql`SELECT * FROM pox_events ORDER BY value_md5`,
    stx_totals: await sql`SELECT principal, received::text, sent::text, fees::text, rewards::text FROM stx_totals ORDER BY principal`,
    // the result as the publisher reads it back (key order of jsonb is not significant)
    push_outbox: (
      await sql<{ path: string; sha: string; result: Record<string, unknown> }[]>`
        SELECT l.path, l.body_sha256 AS sha, o.result FROM push_outbox o JOIN event_log l ON l.id = o.event_id ORDER BY o.event_id`
    ).map((r) => ({
      ...r,
      result: {
        ...r.result,
        eventId: undefined,
        // in the order the UPDATE returned them: the rows' places in the heap, which the two paths' writes leave apart
        txIds: [...(r.result.txIds as string[])].sort(),
        unconfirmedOrphans: [...((r.result.unconfirmedOrphans as string[] | undefined) ?? [])].sort(),
      },
    })),
  };
}

describe('block ingest: one-statement path = general transaction', () => {
  let fast: TestDatabase;
  let general: TestDatabase;
  beforeAll(async () => {
    fast = await createTestDatabase('sp_fast');
    general = await createTestDatabase('sp_general');
  });
  afterAll(async () => {
    await fast?.drop();
    await general?.drop();
  });

  async function replayBoth(messages: { path: string; body: string }[]) {
    await Promise.all([reset(fast.sql), reset(general.sql)]);
    const a = testPipeline(fast.sql, log);
    const b = testPipeline(general.sql, log);
    a.pushOutbox = true;
    b.pushOutbox = true;
    b.fastBlocks = false;
    // the same receipt time for a message in both databases (the observer's clock: receipt times of microblock rows
    // and of txs a microblock fork returns to the mempool)
    const t0 = Date.now();
    const at = (i: number) => ({ receivedAt: t0 + i * 1000 });
    const before = { ...blockPaths };
    for (const [i, m] of messages.entries()) expect((await applied(a, m.path, m.body, at(i))).status).toBe(200);
    const taken = { fast: blockPaths.fast - before.fast, general: blockPaths.general - before.general };
    for (const [i, m] of messages.entries()) expect((await applied(b, m.path, m.body, at(i))).status).toBe(200);
    // delivered again: duplicates go to the general path, which finds them stored
    for (const [i, m] of messages.entries()) expect((await applied(a, m.path, m.body, at(i))).status).toBe(200);
    expect(await everything(fast.sql)).toEqual(await everything(general.sql));
    return taken;
  }

  for (const name of fixtureNames()) {
    it(`${name}: the same rows`, async () => {
      const lines = readFixture(name);
      const blocks = lines.filter((l) => l.path === '/new_block').length;
      const taken = await replayBoth(lines);
      expect(taken.fast + taken.general).toBe(blocks);
    });
  }

  it('a generated chain with forks, microblock streams and mempool traffic: the same rows, both paths taken', async () => {
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 5, seed: 'fast-path', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 4 });
    const messages: { path: string; body: string }[] = [];
    for await (const m of gen.messages()) messages.push(m);
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
    expect(messages.some((m) => m.path === '/new_mempool_tx')).toBe(true);
    const taken = await replayBoth(messages);
    expect(taken.fast).toBeGreaterThan(10);
    expect(taken.general).toBeGreaterThan(3);
  });

  it('microblock forks: blocks that confirm part of the stream on the tip, or none of it: the same rows', async () => {
    // The generator's anchor blocks confirm the whole two-microblock stream of their parent. Every other one of those
    // here confirms its first microblock only (its txs of the second leave the block), or none at all, so the block
    // orphans the rest of the stream, and its txs return to the mempool.
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 5, seed: 'microblock-fork', forks: true, forkEvery: 9, forkDepth: 1, microblockEvery: 3 });
    const messages: { path: string; body: string }[] = [];
    let confirming = 0;
    for await (const m of gen.messages()) {
      if (m.path !== '/new_block') {
        messages.push(m);
        continue;
      }
      const b = JSON.parse(m.body) as {
        parent_microblock: string;
        parent_microblock_sequence: number;
        transactions: { txid: string; microblock_sequence: number | null; microblock_hash: string | null }[];
        events: { txid: string }[];
      };
      const streamed = b.transactions.filter((t) => t.microblock_hash);
      if (!streamed.length || confirming++ % 2 === 0) {
        messages.push(m);
        continue;
      }
      // confirming++ odd: 1, 3, 5 … alternately keep the first microblock, or none
      const keepFirst = confirming % 4 === 2;
      const first = streamed.find((t) => t.microblock_sequence === 0)!.microblock_hash!;
      const dropped = new Set(streamed.filter((t) => !keepFirst || t.microblock_sequence !== 0).map((t) => t.txid));
      b.parent_microblock = keepFirst ? first : '0x' + '0'.repeat(64);
      b.parent_microblock_sequence = 0;
      b.transactions = b.transactions.filter((t) => !dropped.has(t.txid));
      b.events = b.events.filter((e) => !dropped.has(e.txid));
      messages.push({ path: m.path, body: JSON.stringify(b) });
    }
    expect(confirming).toBeGreaterThan(3);
    await replayBoth(messages);
    // the forks happened: unconfirmed microblock txs orphaned, and back in the mempool
    const [{ n }] = await fast.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM txs WHERE index_block_hash = '' AND NOT microblock_canonical`;
    expect(n).toBeGreaterThan(0);
  });
});
