/**
 * Burn block reads (/extended/v2/burn-blocks*, /extended/v1/block/by_burn_block_hash). As in the reference, a burn
 * block here is what the canonical Stacks blocks say about it (their burn_block_* columns): only burn blocks that carry
 * at least one canonical Stacks block exist for these routes. Rows only; src/views/nakamoto.ts prints them.
 */
import type { Sql } from './sql.js';
import { chainTip } from './chain-tip.js';
import { BLOCK_COLUMNS } from './block-columns.js';
import type { BlockDbRow } from './block-columns.js';

/** A burn block with the canonical Stacks blocks it carries. */
export interface BurnBlockDbRow {
  burn_block_time: number;
  burn_block_hash: string;
  burn_block_height: number;
  /** block hashes of its canonical Stacks blocks, newest first */
  stacks_blocks: string[];
  /** mean block_time gap between its consecutive Stacks blocks, as PostgreSQL's numeric text (null: one block) */
  avg_block_time: string | null;
  /** Σ tx_count of its Stacks blocks (numeric text) */
  total_tx_count: string;
}

/** `latest` (the burn block of the canonical tip), a burn block hash (0x lower-case) or a burn block height. */
export type BurnBlockRef = { latest: true } | { hash: string } | { height: number };

/** The statistics of the burn blocks at `heights`, built from their canonical Stacks blocks. */
async function burnBlockStats(sql: Sql, heights: number[]): Promise<BurnBlockDbRow[]> {
  if (!heights.length) return [];
  return sql<BurnBlockDbRow[]>`
    WITH b AS (
      SELECT burn_block_height, burn_block_time, burn_block_hash, block_hash, block_height, tx_count,
        block_time - lag(block_time) OVER (PARTITION BY burn_block_height ORDER BY block_height) AS gap,
        row_number() OVER (PARTITION BY burn_block_height ORDER BY block_height DESC) AS newest
      FROM blocks
      WHERE canonical AND burn_block_height = ANY(${heights})
    )
    SELECT
      max(burn_block_time) FILTER (WHERE newest = 1)::bigint AS burn_block_time,
      max(burn_block_hash) FILTER (WHERE newest = 1) AS burn_block_hash,
      burn_block_height,
      array_agg(block_hash ORDER BY block_height DESC) AS stacks_blocks,
      avg(gap)::text AS avg_block_time,
      sum(tx_count)::text AS total_tx_count
    FROM b
    GROUP BY burn_block_height
    ORDER BY burn_block_height DESC`;
}

/**
 * A page of burn blocks, newest first (the reference's getBurnBlocks). `total` is the canonical Stacks block count
 * (the reference's chain_tip.block_count), and 0 when the page is empty.
 */
export async function burnBlockPage(
  sql: Sql,
  q: { limit: number; offset: number },
): Promise<{ rows: BurnBlockDbRow[]; total: number }> {
  // burn_block_ordinals (sql/0107) ranks the distinct canonical burn heights: the page starts at rank top - offset
  const heights = await sql<{ burn_block_height: number }[]>`
    SELECT burn_block_height FROM burn_block_ordinals
    WHERE ordinal <= (SELECT max(ordinal) FROM burn_block_ordinals) - ${q.offset}
    ORDER BY ordinal DESC LIMIT ${q.limit}`;
  const rows = await burnBlockStats(sql, heights.map((h) => h.burn_block_height));
  if (!rows.length) return { rows, total: 0 };
  const tip = await chainTip(sql);
  return { rows, total: tip?.block_height ?? 0 };
}

/** One burn block (canonical Stacks blocks only), or undefined. */
export async function burnBlockByRef(sql: Sql, ref: BurnBlockRef): Promise<BurnBlockDbRow | undefined> {
  if ('latest' in ref) {
    // the burn block of the canonical tip, by its hash (as the reference)
    const [tip] = await sql<{ burn_block_hash: string }[]>`
      SELECT burn_block_hash FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    return tip ? burnBlockByRef(sql, { hash: tip.burn_block_hash }) : undefined;
  }
  if ('hash' in ref) {
    // by hash: the blocks that name this hash (a burn height reorganised on Bitcoin is another burn block)
    const [row] = await sql<BurnBlockDbRow[]>`
      WITH b AS (
        SELECT burn_block_height, burn_block_time, burn_block_hash, block_hash, block_height, tx_count,
          block_time - lag(block_time) OVER (ORDER BY block_height) AS gap
        FROM blocks WHERE canonical AND burn_block_hash = ${ref.hash}
      )
      SELECT max(burn_block_time)::bigint AS burn_block_time, max(burn_block_hash) AS burn_block_hash,
        max(burn_block_height)::bigint AS burn_block_height,
        array_agg(block_hash ORDER BY block_height DESC) AS stacks_blocks,
        avg(gap)::text AS avg_block_time, sum(tx_count)::text AS total_tx_count
      FROM b HAVING count(*) > 0`;
    return row;
  }
  if (!Number.isSafeInteger(ref.height)) return undefined;
  const [row] = await burnBlockStats(sql, [ref.height]);
  return row;
}

/**
 * The canonical Stacks blocks of a burn block, newest first (the reference's getBlocksByBurnBlock). `found: false`
 * when no stored block at all (canonical or not) names it; `total` is 0 when the page is empty.
 */
export async function blocksOfBurnBlock(
  sql: Sql,
  ref: BurnBlockRef,
  q: { limit: number; offset: number },
): Promise<{ found: boolean; rows: BlockDbRow[]; total: number }> {
  let filter: { hash: string } | { height: number };
  if ('latest' in ref) {
    const [tip] = await sql<{ burn_block_hash: string }[]>`
      SELECT burn_block_hash FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    if (!tip) return { found: false, rows: [], total: 0 };
    filter = { hash: tip.burn_block_hash };
  } else if ('height' in ref && !Number.isSafeInteger(ref.height)) {
    return { found: false, rows: [], total: 0 };
  } else {
    filter = ref;
  }
  const where =
    'hash' in filter ? sql`burn_block_hash = ${filter.hash}` : sql`burn_block_height = ${filter.height}`;
  const [any] = await sql`SELECT 1 FROM blocks WHERE ${where} LIMIT 1`;
  if (!any) return { found: false, rows: [], total: 0 };
  const rows = await sql<(BlockDbRow & { total: number })[]>`
    SELECT ${sql(BLOCK_COLUMNS)}, count(*) OVER ()::int AS total FROM blocks
    WHERE canonical AND ${where}
    ORDER BY block_height DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
  if (!rows.length) return { found: true, rows: [], total: 0 };
  return { found: true, rows, total: rows[0].total };
}

/** A block carried by this burn block hash, canonical first (the legacy lookup also answers non-canonical blocks). */
export async function blockByBurnBlockHash(sql: Sql, hash: string): Promise<BlockDbRow | undefined> {
  const [b] = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE burn_block_hash = ${hash}
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b;
}
