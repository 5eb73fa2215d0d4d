/**
 * The mempool garbage collection (sql/0017, sql/0101: the reference's deleteGarbageCollectedMempoolTxs): at
 * every stored block, pending txs received 256 blocks before the tip it is given (2,560 minutes before now once the tip
 * is a Nakamoto block) become dropped_api_garbage_collect; younger and already pruned txs are left alone. Checked at
 * the boundary, with dead versions of the rows left behind by earlier updates (as between two VACUUMs), and on an empty
 * mempool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

describe('mempool garbage collection', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_gc');
  });
  afterAll(async () => {
    await db?.drop();
  });

  const nowSeconds = () => Math.floor(Date.now() / 1000);

  async function put(id: string, receiptHeight: number, receiptTime: number, pruned = false, status = 'pending') {
    await db.sql`
      INSERT INTO mempool_txs (tx_id, raw_tx, tx_type, nonce, fee_rate, sender_address, sponsored, byte_size, api,
        receipt_time, receipt_block_height, status, pruned, seq)
      VALUES (${id}, '0x00', 'token_transfer', 0, 1, 'ST1SENDER', false, 1, '{}'::json, ${receiptTime}, ${receiptHeight},
        ${status}, ${pruned}, 1)`;
  }
  const gc = async (tip: number, nakamoto: boolean) =>
    (await db.sql<{ ids: string[] }[]>`SELECT mempool_garbage_collect(${tip}, ${nakamoto}) AS ids`)[0].ids.sort();
  const statuses = async () =>
    Object.fromEntries(
      (await db.sql<{ tx_id: string; status: string; pruned: boolean }[]>`SELECT tx_id, status, pruned FROM mempool_txs ORDER BY tx_id`).map(
        (r) => [r.tx_id, `${r.status}${r.pruned ? ' (pruned)' : ''}`],
      ),
    );

  it('an empty mempool: nothing to collect', async () => {
    expect(await gc(1000, false)).toEqual([]);
    expect(await gc(1000, true)).toEqual([]);
  });

  it('by height: pending txs received at or below tip - 256 are dropped, the others and pruned ones stay', async () => {
    const t = nowSeconds();
    await put('0xa100', 100, t);
    await put('0xa101', 101, t);
    await put('0xa050', 50, t, true, 'dropped_replace_by_fee');
    // dead versions in the pending indexes, as rows rewritten between two VACUUMs leave them
    for (let i = 0; i < 50; i++) await db.sql`UPDATE mempool_txs SET pruned = NOT pruned WHERE tx_id = '0xa101'`;
    expect(await gc(355, false)).toEqual([]); // 100 > 355 - 256
    expect(await gc(356, false)).toEqual(['0xa100']);
    expect(await statuses()).toEqual({
      '0xa050': 'dropped_replace_by_fee (pruned)',
      '0xa100': 'dropped_api_garbage_collect (pruned)',
      '0xa101': 'pending',
    });
    expect(await gc(356, false)).toEqual([]); // collected once
    expect(await gc(357, false)).toEqual(['0xa101']);
    expect(await gc(10_000, false)).toEqual([]);
  });

  it('by time once the tip is a Nakamoto block: pending txs received 2,560 minutes ago or earlier are dropped', async () => {
    await db.sql`DELETE FROM mempool_txs`;
    const t = nowSeconds();
    await put('0xb-old', 0, t - 2560 * 60 - 5);
    await put('0xb-new', 0, t - 2560 * 60 + 600);
    // the height rule does not apply to a Nakamoto tip: both were received at height 0
    expect(await gc(10_000, true)).toEqual(['0xb-old']);
    expect(await statuses()).toEqual({ '0xb-new': 'pending', '0xb-old': 'dropped_api_garbage_collect (pruned)' });
    expect(await gc(10_000, true)).toEqual([]);
    // and the time rule does not apply before Nakamoto
    await db.sql`UPDATE mempool_txs SET receipt_time = ${t - 1_000_000} WHERE tx_id = '0xb-new'`;
    expect(await gc(100, false)).toEqual([]);
    expect(await gc(10_000, true)).toEqual(['0xb-new']);
  });
});
