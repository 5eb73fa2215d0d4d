/** Search reads: a hash among txs, mempool txs and blocks; a principal among contracts, txs and asset events. */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { MempoolDbRow, TxDbRow } from './txs.js';

/**
 * Any placement of a tx, as the reference's search finds it: `WHERE tx_id = … LIMIT 1` with no order, which its
 * planner answers from the unique (tx_id, index_block_hash, microblock_hash) index, so the first placement in that
 * index's order, canonical or not (a tx mined in an orphaned fork block whose hash sorts lower is answered with
 * `canonical: false`). Hashes are lower-case hex of one length here, so text order is the reference's byte order.
 * With `include_metadata` the reference looks for a canonical placement only (unconfirmed microblock txs included):
 * a tx mined only in orphaned blocks is then not a mined tx there, and is looked up in the mempool next.
 */
export async function anyPlacedTx(sql: Sql, txId: string, canonicalOnly = false): Promise<TxDbRow | undefined> {
  const [row] = await sql<TxDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x WHERE x.tx_id = ${txId}
    ${canonicalOnly
      ? sql`AND x.canonical AND x.microblock_canonical ORDER BY x.block_height DESC`
      : sql`ORDER BY x.index_block_hash COLLATE "C", x.microblock_hash COLLATE "C"`}
    LIMIT 1`;
  return row;
}

/** A mempool tx, pending only unless `pruned` too. */
export async function searchMempoolTx(sql: Sql, txId: string, pruned: boolean): Promise<(MempoolDbRow & { tx_type: string }) | undefined> {
  const [row] = await sql<(MempoolDbRow & { tx_type: string })[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ${txId} ${pruned ? sql`` : sql`AND NOT x.pruned`}`;
  return row;
}

/** The deploy tx of a contract: pending in the mempool first (as the reference looks), else its best placement. */
export async function contractDeploy(
  sql: Sql,
  contractId: string,
): Promise<{ mempool?: MempoolDbRow & { tx_type: string }; mined?: TxDbRow }> {
  const [mempool] = await sql<(MempoolDbRow & { tx_type: string })[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x
    WHERE x.tx_id IN (SELECT p.tx_id FROM mempool_pending p WHERE p.smart_contract_contract_id = ${contractId}) LIMIT 1`;
  if (mempool) return { mempool };
  const [mined] = await sql<TxDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x WHERE x.smart_contract_contract_id = ${contractId}
    ORDER BY x.canonical DESC, x.microblock_canonical DESC, x.block_height DESC LIMIT 1`;
  return { mined };
}

/** True when an address appears as a tx sender or transfer recipient, or in an asset event. */
export async function addressSeen(sql: Sql, address: string): Promise<boolean> {
  const [r] = await sql<{ seen: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM txs WHERE sender_address = ${address})
      OR EXISTS (SELECT 1 FROM txs WHERE token_transfer_recipient = ${address})
      OR EXISTS (SELECT 1 FROM events WHERE sender = ${address}
                 AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset'))
      OR EXISTS (SELECT 1 FROM events WHERE recipient = ${address}
                 AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')) AS seen`;
  return r.seen;
}
