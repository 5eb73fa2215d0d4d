import type { Sql } from '../../src/store/connect.js';

/**
 * Every table's rows ordered by key, without values that legitimately differ between two ingests of the same stream:
 * arrival times (event_log.received_at, mempool receipt_time, the arrival time a streamed microblock and its txs keep as
 * block_time, even after an anchor block confirms them) and
 * surrogate ids consumed by rejected duplicate inserts.
 */
export async function dumpDatabase(sql: Sql): Promise<Record<string, readonly unknown[]>> {
  return {
    event_log: await sql`SELECT path, body_sha256 FROM event_log ORDER BY id`,
    dead_letters: await sql`SELECT path, reason, body FROM dead_letters ORDER BY id`,
    chain_state: await sql`SELECT * FROM chain_state`,
    burn_blocks: await sql`SELECT * FROM burn_blocks ORDER BY burn_block_hash`,
    blocks: await sql`SELECT * FROM blocks ORDER BY index_block_hash`,
    microblocks: await sql`
      SELECT *, 0 AS block_time
      FROM microblocks ORDER BY microblock_hash, index_block_hash`,
    txs: await sql`
      SELECT *, CASE WHEN microblock_hash = '' THEN block_time ELSE 0 END AS block_time
      FROM txs ORDER BY tx_id, index_block_hash, microblock_hash`,
    events: await sql`SELECT * FROM events ORDER BY tx_id, index_block_hash, microblock_hash, event_index`,
    miner_rewards: await sql`SELECT * FROM miner_rewards ORDER BY index_block_hash, from_index_block_hash, recipient, reward_index`,
    mempool_txs: await sql`
      SELECT tx_id, raw_tx, status, pruned, replaced_by_tx_id, receipt_block_height, seq
      FROM mempool_txs ORDER BY tx_id`,
  };
}
