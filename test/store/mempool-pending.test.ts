/**
 * mempool_pending (sql/0145_mempool_pending.sql): the statement triggers on mempool_txs keep one row per mempool tx
 * that is not pruned, with that tx's receipt time and height and its parties. After every message of every fixture
 * and of a generated chain with forks (restored txs), microblock streams, replace-by-fee drops and the garbage
 * collection, the table equals `mempool_txs WHERE NOT pruned`, and so does the migration's backfill. No index of
 * mempool_txs names a column the mempool rules change, so those rewrites can be heap-only updates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, expectBackfillEquals, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

const COLUMNS = `tx_id || '|' || receipt_time || '|' || receipt_block_height || '|' || sender_address || '|' ||
  COALESCE(sponsor_address, '-') || '|' || COALESCE(token_transfer_recipient, '-') || '|' ||
  COALESCE(contract_call_contract_id, '-') || '|' || COALESCE(smart_contract_contract_id, '-')`;

const pending: DerivedTable<string[]> = {
  name: 'mempool_pending',
  read: async (sql: Sql) =>
    (await sql<{ l: string }[]>`SELECT ${sql.unsafe(COLUMNS)} AS l FROM mempool_pending ORDER BY tx_id`).map((r) => r.l),
  recompute: async (sql: Sql) =>
    (await sql<{ l: string }[]>`SELECT ${sql.unsafe(COLUMNS)} AS l FROM mempool_txs WHERE NOT pruned ORDER BY tx_id`).map((r) => r.l),
  // the migration's backfill: the pending rows of mempool_txs
  backfill: async (sql: Sql) => {
    await sql`TRUNCATE mempool_pending`;
    await sql`INSERT INTO mempool_pending (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
        token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
      SELECT tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address, token_transfer_recipient,
        contract_call_contract_id, smart_contract_contract_id
      FROM mempool_txs WHERE NOT pruned`;
  },
};

describe('mempool_pending: the pending mempool kept by triggers on mempool_txs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_mempool_pending');
  });
  afterAll(async () => {
    await db?.drop();
  });

  // receipt_time (rewritten only when a tx comes back) and rbf_lazy (set once when a tx first loses replace-by-fee)
  // are in indexes that keep replace-by-fee's reads off the size of a payer+nonce group (sql/0150)
  it('no index of mempool_txs names a column the mempool rules rewrite at every block', async () => {
    const rows = await db.sql<{ indexdef: string }[]>`SELECT indexdef FROM pg_indexes WHERE tablename = 'mempool_txs'`;
    expect(rows.length).toBeGreaterThan(0);
    for (const { indexdef } of rows) {
      for (const col of ['pruned', 'status', 'replaced_by_tx_id', 'receipt_block_height']) {
        expect(indexdef, indexdef).not.toMatch(new RegExp(`\\b${col}\\b`));
      }
    }
  });

  for (const name of fixtureNames()) {
    it(`${name}: equals the pending rows of mempool_txs, after a re-delivery and the backfill`, async () => {
      await checkOnFixture(db.sql, log, name, pending);
    });
  }

  it('a generated chain with forks, microblock streams and replace-by-fee: after every message', async () => {
    const gen = { blocks: 80, txsPerBlock: 6, seed: 'pending', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 4 };
    const after = ['/new_block', '/new_mempool_tx', '/drop_mempool_tx', '/new_microblocks', '/new_burn_block'];
    const { summary } = await checkOnGeneratedChain(db.sql, log, gen, pending, { after });
    expect(summary.orphanedBlocks).toBeGreaterThan(0);
    // the chain exercised every way in and out: pending rows now, dropped, restored-then-mined and collected ones
    const [s] = await db.sql<{ pending: number; dropped: number; mined: number }[]>`
      SELECT count(*) FILTER (WHERE NOT pruned)::int AS pending,
        count(*) FILTER (WHERE status LIKE 'dropped%')::int AS dropped,
        count(*) FILTER (WHERE pruned AND status = 'pending')::int AS mined
      FROM mempool_txs`;
    expect(s.pending).toBeGreaterThan(0);
    expect(s.dropped).toBeGreaterThan(0);
    expect(s.mined).toBeGreaterThan(100);
    await expectBackfillEquals(db.sql, pending);
  });

  it('a delete from mempool_txs takes the row out of mempool_pending', async () => {
    const [row] = await db.sql<{ tx_id: string }[]>`SELECT tx_id FROM mempool_pending LIMIT 1`;
    expect(row).toBeDefined();
    await db.sql`DELETE FROM mempool_txs WHERE tx_id = ${row.tx_id}`;
    expect(await pending.read(db.sql)).toEqual(await pending.recompute(db.sql));
    expect((await db.sql`SELECT 1 FROM mempool_pending WHERE tx_id = ${row.tx_id}`).length).toBe(0);
  });
});
