/**
 * /new_microblocks on its own (src/store/ingest/microblocks.ts): a stream on the canonical tip is stored
 * once; a later message whose chain leaves out a streamed microblock orphans it (a microblock fork inside the stream,
 * its txs back in the mempool until the message's own txs leave it); a stream with a gap, or on a block that is not
 * the tip, is logged and not stored. What the push publisher gets (push_outbox) says the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase, emptyChainTables, type TestDatabase } from '../helpers/db.js';
import { createLogger } from '../../src/logger.js';
import { ChainGenerator } from '../../load/generator/index.js';

const log = createLogger('silent');

interface StreamTx {
  txid: string;
  microblock_sequence: number;
  microblock_hash: string;
  microblock_parent_hash: string;
}
interface StreamBody {
  parent_index_block_hash: string;
  transactions: StreamTx[];
  events: { txid: string }[];
}

describe('microblock messages', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_microblock_messages');
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** The generated messages up to (not including) the first stream, and that stream's message. */
  async function upToFirstStream(): Promise<{ before: { path: string; body: string }[]; stream: StreamBody }> {
    const gen = new ChainGenerator({ blocks: 12, txsPerBlock: 8, seed: 'microblock-messages', microblockEvery: 2 });
    const before: { path: string; body: string }[] = [];
    for await (const m of gen.messages()) {
      if (m.path === '/new_microblocks') return { before, stream: JSON.parse(m.body) as StreamBody };
      before.push(m);
    }
    throw new Error('the generator streamed no microblocks');
  }

  async function outbox(id: number) {
    const [r] = await db.sql<{ result: { txIds: string[]; unconfirmedOrphans: string[]; ignoredReason?: string } }[]>`
      SELECT result FROM push_outbox WHERE event_id = ${id}`;
    return r.result;
  }

  it('a fork inside the stream, a gap, a stream off the tip', async () => {
    await emptyChainTables(db.sql);
    const { before, stream } = await upToFirstStream();
    const p = testPipeline(db.sql, log);
    p.pushOutbox = true;
    for (const m of before) expect((await applied(p, m.path, m.body)).status).toBe(200);
    const lastId = async () => (await db.sql<{ id: number }[]>`SELECT max(id)::int AS id FROM event_log`)[0].id;

    const seq = (n: number) => stream.transactions.filter((t) => t.microblock_sequence === n);
    const [m0, m1] = [seq(0)[0].microblock_hash, seq(1)[0].microblock_hash];
    expect(seq(0).length).toBeGreaterThan(0);
    expect(seq(1).length).toBeGreaterThan(0);

    // the stream: both microblocks stored, every tx of it announced
    expect((await applied(p, '/new_microblocks', JSON.stringify(stream))).status).toBe(200);
    expect((await outbox(await lastId())).txIds.sort()).toEqual(stream.transactions.map((t) => t.txid).sort());

    // the same stream again (another encoding: an identical body is a retry the log keeps once): nothing new
    const { events, ...rest } = stream;
    const again = JSON.stringify({ events, ...rest });
    expect((await applied(p, '/new_microblocks', again)).status).toBe(200);
    expect(await outbox(await lastId())).toMatchObject({ txIds: [], unconfirmedOrphans: [] });

    // microblock 1 again under another hash (same parent, m0): the stored m1 is off the new chain, so it is orphaned
    const m1b = '0x' + 'cd'.repeat(32);
    const forked: StreamBody = {
      ...stream,
      transactions: stream.transactions.map((t) => (t.microblock_sequence === 1 ? { ...t, microblock_hash: m1b } : t)),
    };
    expect((await applied(p, '/new_microblocks', JSON.stringify(forked))).status).toBe(200);
    const fork = await outbox(await lastId());
    const m1Txs = seq(1).map((t) => t.txid).sort();
    expect([...fork.unconfirmedOrphans].sort()).toEqual(m1Txs);
    // the txs stored now (m1b's), then those the fork returned to the mempool
    expect(fork.txIds.slice(0, m1Txs.length).sort()).toEqual(m1Txs);
    const rows = await db.sql<{ microblock_hash: string; microblock_canonical: boolean }[]>`
      SELECT microblock_hash, microblock_canonical FROM microblocks WHERE index_block_hash = ''`;
    expect(Object.fromEntries(rows.map((r) => [r.microblock_hash, r.microblock_canonical]))).toEqual({ [m0]: true, [m1]: false, [m1b]: true });
    const txRows = await db.sql<{ microblock_hash: string; microblock_canonical: boolean; n: number }[]>`
      SELECT microblock_hash, microblock_canonical, count(*)::int AS n FROM txs WHERE index_block_hash = ''
      GROUP BY 1, 2 ORDER BY 1, 2`;
    expect(txRows.find((r) => r.microblock_hash === m1)).toEqual({ microblock_hash: m1, microblock_canonical: false, n: m1Txs.length });
    expect(txRows.find((r) => r.microblock_hash === m1b)).toEqual({ microblock_hash: m1b, microblock_canonical: true, n: m1Txs.length });
    // the events of the orphaned microblock follow its txs
    const [{ off }] = await db.sql<{ off: number }[]>`
      SELECT count(*)::int AS off FROM events WHERE index_block_hash = '' AND microblock_hash = ${m1} AND NOT microblock_canonical`;
    expect(off).toBe(stream.events.filter((e) => m1Txs.includes(e.txid)).length);
    // returned to the mempool by the fork, then mined again by the message (in m1b): pruned, not dropped
    const mempool = await db.sql<{ tx_id: string; pruned: boolean; status: string }[]>`
      SELECT tx_id, pruned, status FROM mempool_txs WHERE tx_id = ANY(${m1Txs}) ORDER BY tx_id`;
    expect(mempool.map((m) => [m.pruned, m.status])).toEqual(m1Txs.map(() => [true, 'pending']));

    // a gap: a microblock of sequence 3 whose parent nobody streamed
    const gap: StreamBody = {
      ...stream,
      transactions: seq(1).map((t) => ({ ...t, microblock_sequence: 3, microblock_hash: '0x' + 'ef'.repeat(32), microblock_parent_hash: '0x' + '12'.repeat(32) })),
      events: [],
    };
    const counted = async () => (await db.sql<{ n: number }[]>`SELECT n FROM microblock_stream_count`)[0]?.n ?? 0;
    const countBefore = await counted();
    expect((await applied(p, '/new_microblocks', JSON.stringify(gap))).status).toBe(200);
    expect(await outbox(await lastId())).toMatchObject({ txIds: [], unconfirmedOrphans: [], ignoredReason: 'microblock stream has a gap' });
    // a stream on a block that is not the tip
    const offTip: StreamBody = { ...stream, parent_index_block_hash: '0x' + '34'.repeat(32) };
    expect((await applied(p, '/new_microblocks', JSON.stringify(offTip))).status).toBe(200);
    expect(await outbox(await lastId())).toMatchObject({ txIds: [], ignoredReason: 'microblock parent is not the canonical tip' });
    // neither stored anything, nor counted its microblocks
    const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM microblocks`;
    expect(n).toBe(3);
    expect(await counted()).toBe(countBefore);
  });
});
