/**
 * Transaction and mempool reads: a tx by id (mined placements, mempool row), several at once, a tx's events, the
 * pending list with its filters and orders, the mempool statistics. Rows only; src/views/txs.ts makes the JSON.
 */
import type { Sql } from './sql.js';
import { chainTip } from './chain-tip.js';
import type { TxStaticJson } from '../chain/tx.js';
import type { ExecutionCost, TxRow } from '../chain/types.js';

/** A txs row (see chain/types) joined with the called contract's ABI (`abi`). */
export type TxDbRow = Pick<
  TxRow,
  | 'tx_id'
  | 'index_block_hash'
  | 'microblock_hash'
  | 'block_hash'
  | 'block_height'
  | 'block_time'
  | 'burn_block_time'
  | 'burn_block_height'
  | 'parent_burn_block_time'
  | 'parent_block_hash'
  | 'tx_index'
  | 'microblock_sequence'
  | 'status'
  | 'raw_result'
  | 'vm_error'
  | 'event_count'
  | keyof ExecutionCost
  | 'canonical'
  | 'microblock_canonical'
> & { api: TxStaticJson; abi?: unknown };

/** A mempool_txs row as the mempool answers read it. */
export interface MempoolDbRow {
  tx_id: string;
  api: TxStaticJson;
  status: string;
  replaced_by_tx_id: string | null;
  receipt_time: number;
  abi?: unknown;
}

/** SQL fragment (postgres.js unsafe text) selecting the ABI of the contract a tx `x` calls, as the reference picks it. */
export const ABI_SUBQUERY = `(
  SELECT d.contract_abi FROM txs d
  WHERE d.smart_contract_contract_id = x.contract_call_contract_id AND d.contract_abi IS NOT NULL
  ORDER BY d.canonical DESC, d.microblock_canonical DESC, d.block_height DESC LIMIT 1
) AS abi`;

/**
 * The txs columns the tx serializer reads (src/views/txs.ts; TxDbRow above), as postgres.js unsafe text for a tx `x`:
 * never `x.*`, which would also carry the raw transaction and a deployment's ABI (kilobytes each) for nothing.
 */
export const TX_COLUMNS = `x.tx_id, x.index_block_hash, x.microblock_hash, x.block_hash, x.block_height, x.block_time,
  x.burn_block_time, x.burn_block_height, x.parent_burn_block_time, x.parent_block_hash, x.tx_index,
  x.microblock_sequence, x.status, x.raw_result, x.vm_error, x.event_count, x.execution_cost_read_count,
  x.execution_cost_read_length, x.execution_cost_runtime, x.execution_cost_write_count, x.execution_cost_write_length,
  x.canonical, x.microblock_canonical, x.api`;

export interface EventPage {
  limit: number;
  offset: number;
}

/** event_index is an int4: a page starting past its range is empty (bounds clamped so the comparison cannot overflow). */
const INT4_MAX = 2147483647;
const eventRange = (p: EventPage) => ({ from: Math.min(p.offset, INT4_MAX), to: Math.min(p.offset + p.limit, INT4_MAX) });

/** The max block height a lookup may see: the tip, or tip+1 (the unconfirmed microblock stream) when unanchored. */
export async function visibleHeight(sql: Sql, unanchored: boolean): Promise<number> {
  const tip = await chainTip(sql);
  const h = tip?.block_height ?? 0;
  return unanchored ? h + 1 : h;
}

/** Event JSON of one placed tx, paged by event_index range (the reference's semantics). */
export async function txEvents(sql: Sql, row: TxDbRow, page: EventPage): Promise<unknown[]> {
  const rows = await sql<{ api: unknown }[]>`
    SELECT api FROM events
    WHERE tx_id = ${row.tx_id} AND index_block_hash = ${row.index_block_hash} AND microblock_hash = ${row.microblock_hash}
      AND event_index >= ${eventRange(page).from} AND event_index < ${eventRange(page).to}
    ORDER BY event_index ASC`;
  return rows.map((r) => r.api);
}

/** The best placement of a tx within the visible heights (canonical first). */
export async function minedTx(sql: Sql, txId: string, max: number): Promise<TxDbRow | undefined> {
  const [row] = await sql<TxDbRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId} AND x.block_height <= ${max}
    ORDER BY x.canonical DESC, x.microblock_canonical DESC, x.block_height DESC
    LIMIT 1`;
  return row;
}

/** A mempool row's replacement: a lazy replace-by-fee loser's is its group's winner (sql/0150_mempool_rbf_winners.sql). */
export const REPLACED_BY = 'mempool_replaced_by(x.rbf_lazy, x.sender_address, x.nonce, x.replaced_by_tx_id) AS replaced_by_tx_id';

/** A mempool row (pending or pruned: mined, dropped, replaced). */
export async function mempoolTx(sql: Sql, txId: string): Promise<MempoolDbRow | undefined> {
  const [row] = await sql<MempoolDbRow[]>`
    SELECT x.tx_id, x.api, x.status, ${sql.unsafe(REPLACED_BY)}, x.receipt_time, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ${txId}`;
  return row;
}

/** Mempool rows of these ids (any state). */
export async function mempoolTxs(sql: Sql, txIds: string[]): Promise<MempoolDbRow[]> {
  if (!txIds.length) return [];
  return sql<MempoolDbRow[]>`SELECT x.tx_id, x.api, x.status, ${sql.unsafe(REPLACED_BY)}, x.receipt_time, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ANY(${txIds})`;
}

export interface TxsByIds {
  /** every placement of the ids, with the canonical tip height read in the same statement */
  placed: (TxDbRow & { tip: number | null })[];
  /** events of those placements within the event page */
  events: { tx_id: string; index_block_hash: string; microblock_hash: string; api: unknown }[];
  mempool: MempoolDbRow[];
}

/** Everything /tx/multiple needs, as three independent queries sent together (one round trip). */
export async function txsByIds(sql: Sql, txIds: string[], page: EventPage): Promise<TxsByIds> {
  const { from, to } = eventRange(page);
  const [placed, events, mempool] = await Promise.all([
    sql<(TxDbRow & { tip: number | null })[]>`
      SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)},
        (SELECT b.block_height FROM blocks b WHERE b.canonical ORDER BY b.block_height DESC LIMIT 1) AS tip
      FROM txs x WHERE x.tx_id = ANY(${txIds})`,
    sql<TxsByIds['events']>`
      SELECT e.tx_id, e.index_block_hash, e.microblock_hash, e.api FROM events e
      WHERE e.tx_id = ANY(${txIds}) AND e.event_index >= ${from} AND e.event_index < ${to}
      ORDER BY e.event_index ASC`,
    mempoolTxs(sql, txIds),
  ]);
  return { placed, events, mempool };
}

export interface MempoolFilter {
  address?: string;
  sender?: string;
  recipient?: string;
}

export interface MempoolListOptions {
  unanchored: boolean;
  limit: number;
  offset: number;
  orderBy: 'age' | 'size' | 'fee';
  order: 'asc' | 'desc';
}

/** Pending mempool txs (plus, when not unanchored, those only in the unconfirmed microblock stream). */
export async function pendingMempool(
  sql: Sql,
  f: MempoolFilter,
  opts: MempoolListOptions,
): Promise<{ total: number; rows: MempoolDbRow[] }> {
  // Pending (mempool_pending), or (anchored view) mined only in an unconfirmed microblock. Written as one IN over two
  // small index-backed sets: an OR here made PostgreSQL scan every mempool row ever seen (1 s per page on a
  // 100,000-block chain). The pending view alone starts from mempool_pending, whose receipt-time index gives the
  // newest first.
  const from = opts.unanchored ? sql`mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id` : sql`mempool_txs x`;
  const pendingCond = opts.unanchored
    ? sql`TRUE`
    : sql`x.tx_id IN (
        SELECT p.tx_id FROM mempool_pending p
        UNION ALL
        SELECT t.tx_id FROM txs t WHERE t.index_block_hash = '' AND t.canonical AND t.microblock_canonical)`;
  const filtered = f.address !== undefined || f.sender !== undefined || f.recipient !== undefined;
  const addrCond =
    f.address !== undefined
      ? sql`AND (x.sender_address = ${f.address} OR x.token_transfer_recipient = ${f.address}
               OR x.smart_contract_contract_id = ${f.address} OR x.contract_call_contract_id = ${f.address})`
      : sql``;
  const senderCond = f.sender !== undefined ? sql`AND x.sender_address = ${f.sender}` : sql``;
  const recipientCond = f.recipient !== undefined ? sql`AND x.token_transfer_recipient = ${f.recipient}` : sql``;
  // Ties (same receipt time / size / fee) keep arrival order in either direction, as the reference's answers show.
  const key =
    opts.orderBy === 'fee' ? sql`x.fee_rate` : opts.orderBy === 'size' ? sql`x.byte_size` : opts.unanchored ? sql`p.receipt_time` : sql`x.receipt_time`;
  const dir = opts.order === 'asc' ? sql`ASC` : sql`DESC`;
  const totalExpr = filtered
    ? sql`(COUNT(*) OVER())::int`
    : sql`(SELECT COUNT(*)::int FROM mempool_pending)`;
  const rows = await sql<(MempoolDbRow & { total: number })[]>`
    SELECT x.tx_id, x.api, x.status, ${sql.unsafe(REPLACED_BY)}, x.receipt_time, ${sql.unsafe(ABI_SUBQUERY)}, ${totalExpr} AS total
    FROM ${from}
    WHERE ${pendingCond} ${addrCond} ${senderCond} ${recipientCond}
    ORDER BY ${key} ${dir}, x.seq ASC, x.tx_id ASC
    LIMIT ${opts.limit} OFFSET ${opts.offset}`;
  return { total: rows[0]?.total ?? 0, rows };
}

export interface MempoolStatsRow {
  tx_type: string;
  n: number;
  f25: number | null;
  f50: number | null;
  f75: number | null;
  f95: number | null;
  a25: number | null;
  a50: number | null;
  a75: number | null;
  a95: number | null;
  s25: number | null;
  s50: number | null;
  s75: number | null;
  s95: number | null;
}

/** Per tx type: count and p25/p50/p75/p95 of fee rate, age in blocks and size of the pending txs. */
export async function mempoolStatsRows(sql: Sql): Promise<MempoolStatsRow[]> {
  const tip = await chainTip(sql);
  const height = (tip?.block_height ?? 0) + 1;
  return sql<MempoolStatsRow[]>`
    WITH p AS (
      SELECT CASE WHEN tx_type LIKE '%smart_contract' THEN 'smart_contract' ELSE tx_type END AS tx_type,
             fee_rate::float8 AS fee, (${height}::bigint - receipt_block_height)::float8 AS age, byte_size::float8 AS size
      FROM mempool_txs WHERE tx_id IN (SELECT tx_id FROM mempool_pending)
    )
    SELECT tx_type, COUNT(*)::int AS n,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY fee) AS f25, percentile_cont(0.5) WITHIN GROUP (ORDER BY fee) AS f50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY fee) AS f75, percentile_cont(0.95) WITHIN GROUP (ORDER BY fee) AS f95,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY age) AS a25, percentile_cont(0.5) WITHIN GROUP (ORDER BY age) AS a50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY age) AS a75, percentile_cont(0.95) WITHIN GROUP (ORDER BY age) AS a95,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY size) AS s25, percentile_cont(0.5) WITHIN GROUP (ORDER BY size) AS s50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY size) AS s75, percentile_cont(0.95) WITHIN GROUP (ORDER BY size) AS s95
    FROM p GROUP BY tx_type`;
}
