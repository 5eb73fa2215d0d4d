/**
 * Address reads: STX totals (maintained, or summed below the tip), pending mempool flows, the block an `until_block`
 * names, a principal's tx with its transfers. Rows only.
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY, TX_COLUMNS } from './txs.js';
import type { TxDbRow } from './txs.js';
import type { ClarityJson } from '../chain/clarity.js';

export type StxSums = { received: string; sent: string; fees: string; rewards: string };

/**
 * The principal's totals up to `height` from stx_totals (sql/0012_stx_totals.sql: every canonical anchored block,
 * kept by the ingest) plus the unconfirmed microblock rows up to `height`: a few index lookups, however long the
 * principal's history. Read in one statement with the canonical tip, so both come from one snapshot; undefined when
 * `height` is below the tip (an until_block query): the caller sums the history instead.
 */
export async function maintainedStxSums(sql: Sql, principal: string, height: number): Promise<StxSums | undefined> {
  const [r] = await sql<(StxSums & { tip: number })[]>`
    SELECT
      (SELECT COALESCE(max(block_height), 0) FROM blocks WHERE canonical) AS tip,
      (COALESCE(t.received, 0)
        + (SELECT COALESCE(SUM(amount), 0) FROM events
           WHERE index_block_hash = '' AND event_type = 'stx_asset' AND recipient = ${principal} AND canonical
             AND microblock_canonical AND block_height <= ${height}))::text AS received,
      (COALESCE(t.sent, 0)
        + (SELECT COALESCE(SUM(amount), 0) FROM events
           WHERE index_block_hash = '' AND event_type = 'stx_asset' AND sender = ${principal} AND canonical
             AND microblock_canonical AND block_height <= ${height}))::text AS sent,
      (COALESCE(t.fees, 0)
        + (SELECT COALESCE(SUM(fee_rate), 0) FROM txs
           WHERE index_block_hash = '' AND canonical AND microblock_canonical AND block_height <= ${height}
             AND ((sender_address = ${principal} AND NOT sponsored) OR (sponsor_address = ${principal} AND sponsored))))::text AS fees,
      COALESCE(t.rewards, 0)::text AS rewards
    FROM (SELECT 1) AS one LEFT JOIN stx_totals t ON t.principal = ${principal}`;
  return r.tip <= height ? r : undefined;
}

/** The principal's totals up to `height`, summed over its whole history (any height). */
export async function historyStxSums(sql: Sql, principal: string, height: number): Promise<StxSums> {
  const [sums] = await sql<StxSums[]>`
    SELECT
      (SELECT COALESCE(SUM(amount), 0) FROM events
        WHERE event_type = 'stx_asset' AND recipient = ${principal} AND canonical AND microblock_canonical
          AND block_height <= ${height})::text AS received,
      (SELECT COALESCE(SUM(amount), 0) FROM events
        WHERE event_type = 'stx_asset' AND sender = ${principal} AND canonical AND microblock_canonical
          AND block_height <= ${height})::text AS sent,
      (SELECT COALESCE(SUM(fee_rate), 0) FROM txs
        WHERE ((sender_address = ${principal} AND NOT sponsored) OR (sponsor_address = ${principal} AND sponsored))
          AND canonical AND microblock_canonical AND block_height <= ${height})::text AS fees,
      (SELECT COALESCE(SUM(coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced), 0)
        FROM miner_rewards WHERE recipient = ${principal} AND canonical AND block_height <= ${height})::text AS rewards`;
  return sums;
}

/** STX the pending mempool txs would move to / from the principal (fees included in outbound). */
export async function pendingStxFlows(sql: Sql, principal: string): Promise<{ inbound: string; outbound: string }> {
  const [p] = await sql<{ inbound: string; outbound: string }[]>`
    SELECT
      (SELECT COALESCE(SUM(token_transfer_amount), 0) FROM mempool_txs
        WHERE tx_id IN (SELECT p.tx_id FROM mempool_pending p WHERE p.token_transfer_recipient = ${principal}))::text AS inbound,
      -- as the reference: the sender pays amount + fee (sponsored or not), a sponsor its sponsored fees on top
      (SELECT COALESCE(SUM(
          CASE WHEN sender_address = ${principal} THEN COALESCE(token_transfer_amount, 0) + fee_rate ELSE 0 END
          + CASE WHEN sponsored AND sponsor_address = ${principal} THEN fee_rate ELSE 0 END), 0)
        FROM mempool_txs
        WHERE tx_id IN (SELECT p.tx_id FROM mempool_pending p
          WHERE p.sender_address = ${principal} OR p.sponsor_address = ${principal}))::text AS outbound`;
  return p;
}

/** Height of the block with this block hash (canonical first); an index block hash names none, as in the reference. */
export async function heightOfBlockHash(sql: Sql, hash: string): Promise<number | undefined> {
  const [b] = await sql<{ block_height: number }[]>`
    SELECT block_height FROM blocks WHERE block_hash = ${hash}
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b?.block_height;
}

/** Burn height of the canonical block at a stacks height. */
export async function burnHeightAt(sql: Sql, height: number): Promise<number | undefined> {
  const [ref] = await sql<{ burn_block_height: number }[]>`
    SELECT burn_block_height FROM blocks WHERE canonical AND block_height = ${height} LIMIT 1`;
  return ref?.burn_block_height;
}

export type AddressTxRow = TxDbRow & { sender_address: string; fee_rate: string };

/**
 * A canonical tx of the principal by the reference's rule for this route: sender, token-transfer recipient, called or
 * deployed contract, or a party of one of its STX events (FT and NFT events do not count here, unlike the lists).
 */
export async function principalTx(sql: Sql, principal: string, txId: string): Promise<AddressTxRow | undefined> {
  const [row] = await sql<AddressTxRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, x.sender_address, x.fee_rate, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId} AND x.canonical AND x.microblock_canonical
      AND (x.sender_address = ${principal} OR x.token_transfer_recipient = ${principal}
        OR x.contract_call_contract_id = ${principal} OR x.smart_contract_contract_id = ${principal}
        OR EXISTS (SELECT 1 FROM events e WHERE e.tx_id = x.tx_id AND e.event_type = 'stx_asset'
          AND (e.sender = ${principal} OR e.recipient = ${principal})))
    ORDER BY x.block_height DESC LIMIT 1`;
  return row;
}

export interface TransferRow {
  event_index: number;
  event_type: string;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  api: { asset?: { value?: ClarityJson } };
}

/** The principal's STX / FT / NFT transfer events in one placed tx, newest event first. */
export async function principalTransfers(sql: Sql, principal: string, row: TxDbRow): Promise<TransferRow[]> {
  return sql<TransferRow[]>`
    SELECT event_index, event_type, sender, recipient, amount::text AS amount, asset_identifier, api FROM events
    WHERE tx_id = ${row.tx_id} AND index_block_hash = ${row.index_block_hash} AND microblock_hash = ${row.microblock_hash}
      AND canonical AND microblock_canonical
      AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
      AND (sender = ${principal} OR recipient = ${principal})
    ORDER BY event_index DESC`;
}
