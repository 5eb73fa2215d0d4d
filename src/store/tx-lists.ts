/**
 * Transaction lists: the recent list with its filters and sort orders (/extended/v1/tx), a block's txs (v1 by hash or
 * height, v2 by height / hash / latest), a raw tx. Every list is served by an index of sql/0020_tx_lists.sql (the
 * ORDER BY matches an index's key order, so PostgreSQL walks it and stops at LIMIT + OFFSET).
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { TxDbRow } from './txs.js';
import type { BlockRef } from './blocks.js';

export interface TxListFilter {
  types: string[];
  fromAddress?: string;
  toAddress?: string;
  startTime?: number;
  endTime?: number;
  contractId?: string;
  functionName?: string;
  nonce?: number;
}

export interface TxListOptions {
  /** include the txs of unconfirmed microblocks (the list then reaches tip + 1) */
  unanchored: boolean;
  limit: number;
  offset: number;
  order: 'asc' | 'desc';
  sortBy: 'block_height' | 'burn_block_time' | 'fee';
  /** the highest block height listed: the tip, or tip + 1 with the unconfirmed microblock stream */
  maxHeight: number;
}

/**
 * A page of canonical txs. As the reference does, a filter whose value is 0 (`nonce=0`, `start_time=0`) filters
 * nothing. `total` counts the matching txs; unfiltered, it is the maintained total of sql/0021_tx_list_total.sql
 * (plus the unconfirmed microblock txs when unanchored); filtered by sender and/or type only, the maintained counts of
 * sql/0103_list_counts.sql plus the matching unconfirmed microblock txs; any other filter counts the rows.
 */
export async function recentTxs(sql: Sql, f: TxListFilter, o: TxListOptions): Promise<{ total: number; rows: TxDbRow[] }> {
  const conds = [sql`x.canonical AND x.microblock_canonical AND x.block_height <= ${o.maxHeight}`];
  if (f.types.length) conds.push(sql`x.tx_type = ANY(${f.types})`);
  if (f.fromAddress) conds.push(sql`x.sender_address = ${f.fromAddress}`);
  if (f.toAddress) conds.push(sql`x.token_transfer_recipient = ${f.toAddress}`);
  if (f.startTime) conds.push(sql`x.burn_block_time >= ${f.startTime}`);
  if (f.endTime) conds.push(sql`x.burn_block_time <= ${f.endTime}`);
  if (f.contractId) conds.push(sql`x.contract_call_contract_id = ${f.contractId}`);
  if (f.functionName) {
    conds.push(sql`x.contract_call_contract_id IS NOT NULL AND (x.api -> 'contract_call' ->> 'function_name') = ${f.functionName}`);
  }
  if (f.nonce) conds.push(sql`x.nonce = ${f.nonce}`);
  const filtered = conds.length > 1;
  // a sender and/or types and nothing else: the maintained counts of sql/0103_list_counts.sql
  const countedBySender =
    filtered && !f.toAddress && !f.startTime && !f.endTime && !f.contractId && !f.functionName && !f.nonce;
  const where = conds.reduce((a, c) => sql`${a} AND ${c}`);
  const dir = o.order === 'asc' ? sql`ASC` : sql`DESC`;
  const tail = sql`x.block_height ${dir}, x.microblock_sequence ${dir}, x.tx_index ${dir}`;
  const orderBy =
    o.sortBy === 'fee'
      ? sql`x.fee_rate ${dir}, ${tail}`
      : o.sortBy === 'burn_block_time'
        ? sql`x.burn_block_time ${dir}, ${tail}`
        : tail;
  const [rows, [count]] = await Promise.all([
    sql<TxDbRow[]>`
      SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
      WHERE ${where}
      ORDER BY ${orderBy}
      LIMIT ${o.limit} OFFSET ${o.offset}`,
    countedBySender
      ? sql<{ n: number }[]>`
          SELECT ((
            SELECT COALESCE(sum(n), 0) FROM sender_tx_counts
            WHERE sender_address = ${f.fromAddress ?? ''}${f.types.length ? sql` AND tx_type = ANY(${f.types})` : sql``}
          ) + (
            SELECT COUNT(*) FROM txs x WHERE x.index_block_hash = '' AND ${where}
          ))::int AS n`
      : filtered
      ? sql<{ n: number }[]>`SELECT COUNT(*)::int AS n FROM txs x WHERE ${where}`
      : sql<{ n: number }[]>`
          SELECT ((SELECT COALESCE(max(n), 0) FROM tx_list_total) + ${
            o.unanchored
              ? sql`(SELECT COUNT(*) FROM txs u WHERE u.index_block_hash = '' AND u.canonical AND u.microblock_canonical)`
              : sql`0`
          })::int AS n`,
  ]);
  return { total: count.n, rows };
}

export interface BlockTxPage {
  /** the block named, or undefined when none */
  indexBlockHash?: string;
  total: number;
  rows: TxDbRow[];
}

/** The legacy lookups: the block with this hash or at this height, canonical first (non-canonical ones too). */
export async function v1BlockTxs(
  sql: Sql,
  ref: { hash: string } | { height: number },
  page: { limit: number; offset: number },
): Promise<BlockTxPage> {
  const [b] =
    'hash' in ref
      ? await sql<{ index_block_hash: string }[]>`
          SELECT index_block_hash FROM blocks WHERE block_hash = ${ref.hash} ORDER BY canonical DESC, block_height DESC LIMIT 1`
      : await sql<{ index_block_hash: string }[]>`
          SELECT index_block_hash FROM blocks WHERE block_height = ${ref.height} ORDER BY canonical DESC LIMIT 1`;
  if (!b) return { total: 0, rows: [] };
  const [rows, [count]] = await Promise.all([
    sql<TxDbRow[]>`
      SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
      WHERE x.index_block_hash = ${b.index_block_hash} AND x.canonical AND x.microblock_canonical
      ORDER BY x.microblock_sequence DESC, x.tx_index DESC
      LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql<{ n: number }[]>`
      SELECT COUNT(*)::int AS n FROM txs
      WHERE index_block_hash = ${b.index_block_hash} AND canonical AND microblock_canonical`,
  ]);
  return { indexBlockHash: b.index_block_hash, total: count.n, rows };
}

/** The v2 lookup: a canonical block by height, hash / index hash or `latest`; total is the block's tx_count. */
export async function v2BlockTxs(sql: Sql, ref: BlockRef, page: { limit: number; offset: number }): Promise<BlockTxPage> {
  const [b] =
    'latest' in ref
      ? await sql<{ index_block_hash: string; tx_count: number }[]>`
          SELECT index_block_hash, tx_count FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`
      : 'hash' in ref
        ? await sql<{ index_block_hash: string; tx_count: number }[]>`
            SELECT index_block_hash, tx_count FROM blocks
            WHERE canonical AND (block_hash = ${ref.hash} OR index_block_hash = ${ref.hash}) LIMIT 1`
        : Number.isSafeInteger(ref.height)
          ? await sql<{ index_block_hash: string; tx_count: number }[]>`
              SELECT index_block_hash, tx_count FROM blocks WHERE canonical AND block_height = ${ref.height} LIMIT 1`
          : [];
  if (!b) return { total: 0, rows: [] };
  // the reference reads these without the called contract's ABI (so `function_signature` is '')
  const rows = await sql<TxDbRow[]>`
    SELECT x.* FROM txs x
    WHERE x.index_block_hash = ${b.index_block_hash} AND x.canonical AND x.microblock_canonical
    ORDER BY x.microblock_sequence ASC, x.tx_index ASC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { indexBlockHash: b.index_block_hash, total: b.tx_count, rows };
}

/** The raw bytes of a tx: any placement, else the mempool. */
export async function rawTx(sql: Sql, txId: string): Promise<string | undefined> {
  const [r] = await sql<{ raw_tx: string }[]>`
    (SELECT raw_tx FROM txs WHERE tx_id = ${txId} LIMIT 1)
    UNION ALL
    (SELECT raw_tx FROM mempool_txs WHERE tx_id = ${txId} LIMIT 1)
    LIMIT 1`;
  return r?.raw_tx;
}
