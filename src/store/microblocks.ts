/**
 * Microblock reads: the recent list (the reference's paging over microblock × tx rows), one microblock with its tx ids,
 * the txs of the unconfirmed stream on the tip.
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import { chainTip } from './chain-tip.js';
import type { TxDbRow } from './txs.js';

export interface MicroblockDbRow {
  microblock_hash: string;
  microblock_sequence: number;
  microblock_parent_hash: string;
  block_height: number;
  block_hash: string;
  parent_block_height: number | null;
  parent_block_hash: string | null;
  parent_burn_block_height: number;
  parent_burn_block_hash: string;
  parent_burn_block_time: number;
  canonical: boolean;
  microblock_canonical: boolean;
}

const COLUMNS = (sql: Sql) => sql`
  m.microblock_hash, m.microblock_sequence, m.microblock_parent_hash, m.block_height, m.block_hash,
  COALESCE(p.block_height, a.block_height - 1) AS parent_block_height,
  COALESCE(p.block_hash, a.parent_block_hash) AS parent_block_hash,
  m.parent_burn_block_height, m.parent_burn_block_hash, m.parent_burn_block_time, m.canonical, m.microblock_canonical`;

// the parent block's height and hash: from the parent row, else (a chain stored from its first block on, whose parent
// is absent) from the confirming block
/**
 * The reference pages the rows of (canonical microblock × its canonical tx), newest first, and groups them: `limit`
 * and `offset` count txs, not microblocks, and a microblock without a tx is not listed. `total` is the maintained
 * stream count (sql/0022_microblock_count.sql).
 */
export async function microblockPage(
  sql: Sql,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: (MicroblockDbRow & { tx_id: string })[] }> {
  const [rows, [count]] = await Promise.all([
    sql<(MicroblockDbRow & { tx_id: string })[]>`
      SELECT ${COLUMNS(sql)}, t.tx_id
      -- the microblocks in list order (microblocks_list), each one's txs in tx order (txs_microblock_list): the page
      -- walks the newest microblocks only (sql/0111_microblock_list.sql). microblocks is a relation of this query,
      -- not an ordered subquery: the subquery was planned for all its rows, and where a sort of every microblock
      -- cost less than the whole index walk (6,000 microblocks on a 30,000-block chain) the page sorted them all
      FROM microblocks m
      CROSS JOIN LATERAL (
        SELECT t.tx_id, t.tx_index FROM txs t
        WHERE t.microblock_hash = m.microblock_hash AND t.index_block_hash = m.index_block_hash AND t.microblock_hash <> ''
          AND t.canonical AND t.microblock_canonical
        ORDER BY t.tx_index DESC
      ) t
      LEFT JOIN blocks p ON p.index_block_hash = m.parent_index_block_hash
      LEFT JOIN blocks a ON a.index_block_hash = m.index_block_hash AND m.index_block_hash <> ''
      WHERE m.canonical AND m.microblock_canonical
      ORDER BY m.block_height DESC, m.microblock_sequence DESC, t.tx_index DESC
      LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql<{ n: number }[]>`SELECT COALESCE(max(n), 0)::int AS n FROM microblock_stream_count`,
  ]);
  return { total: count.n, rows };
}

/** One microblock (canonical placement first) and the ids of its canonical txs, last first. */
export async function microblockByHash(sql: Sql, hash: string): Promise<{ row: MicroblockDbRow; txIds: string[] } | undefined> {
  const [row] = await sql<MicroblockDbRow[]>`
    SELECT ${COLUMNS(sql)} FROM microblocks m
    LEFT JOIN blocks p ON p.index_block_hash = m.parent_index_block_hash
      LEFT JOIN blocks a ON a.index_block_hash = m.index_block_hash AND m.index_block_hash <> ''
    WHERE m.microblock_hash = ${hash}
    ORDER BY m.canonical DESC, m.microblock_canonical DESC LIMIT 1`;
  if (!row) return undefined;
  const txs = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE microblock_hash = ${hash} AND canonical AND microblock_canonical ORDER BY tx_index DESC`;
  return { row, txIds: txs.map((t) => t.tx_id) };
}

/** Txs streamed in microblocks on the canonical tip and not yet confirmed by a block. */
export async function unanchoredTxs(sql: Sql): Promise<TxDbRow[]> {
  const tip = await chainTip(sql);
  const height = (tip?.block_height ?? 0) + 1;
  return sql<TxDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.canonical AND x.microblock_canonical AND x.block_height = ${height}
    ORDER BY x.microblock_sequence DESC, x.tx_index DESC`;
}
