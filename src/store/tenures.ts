/**
 * Nakamoto reads: the blocks of a tenure (cursor paging), a block's signer signatures, the average block times.
 * Rows only; the routes (src/api/routes/extended/nakamoto.ts) print them with src/views/nakamoto.ts.
 */
import type { Sql } from './sql.js';
import { chainTip } from './chain-tip.js';
import { v2BlockPage, type V2BlockPage } from './blocks.js';
import { BLOCK_COLUMNS } from './block-columns.js';
import type { BlockDbRow } from './block-columns.js';
import type { BlockRef } from './blocks.js';


/**
 * A page of a tenure's canonical blocks, newest first, as the reference's getBlocks with a tenure filter pages them:
 * the anchor is `cursor` (default: the canonical tip) and must itself be a block of the tenure; `offset` moves the
 * start that many of the tenure's blocks older (negative: newer); prev/next cursors are the blocks `limit` positions
 * older/newer within the tenure. `total` counts every stored block of the tenure (as the reference does), and is 0 when
 * the page is empty. Tenure 0 is the reference's unfiltered list (its filter skips a falsy height): /extended/v2/blocks.
 */
export async function tenureBlockPage(
  sql: Sql,
  tenureHeight: number,
  q: { limit: number; offset: number; cursor?: string },
): Promise<V2BlockPage> {
  if (tenureHeight === 0) return v2BlockPage(sql, q);
  const empty = { rows: [], total: 0, cursorFound: !q.cursor, next_cursor: null, prev_cursor: null };
  const anchor = q.cursor ?? (await chainTip(sql))?.index_block_hash;
  if (!anchor) return empty;
  const [start] = await sql<{ start_height: number | null }[]>`
    SELECT start_height FROM (
      SELECT index_block_hash, lead(block_height, ${q.offset}) OVER (ORDER BY block_height DESC) AS start_height
      FROM blocks WHERE canonical AND tenure_height = ${tenureHeight}
    ) o
    WHERE index_block_hash = ${anchor}`;
  if (start?.start_height == null) return empty;
  const rows = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks
    WHERE canonical AND tenure_height = ${tenureHeight} AND block_height <= ${start.start_height}
    ORDER BY block_height DESC LIMIT ${q.limit}`;
  if (!rows.length) return empty;
  const first = rows[0].block_height;
  const [[prev], [next], [count]] = await Promise.all([
    sql<{ index_block_hash: string }[]>`
      SELECT index_block_hash FROM blocks
      WHERE canonical AND tenure_height = ${tenureHeight} AND block_height < ${first}
      ORDER BY block_height DESC OFFSET ${q.limit - 1} LIMIT 1`,
    sql<{ index_block_hash: string }[]>`
      SELECT index_block_hash FROM blocks
      WHERE canonical AND tenure_height = ${tenureHeight} AND block_height > ${first}
      ORDER BY block_height ASC OFFSET ${q.limit - 1} LIMIT 1`,
    sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blocks WHERE tenure_height = ${tenureHeight}`,
  ]);
  return {
    rows,
    total: count.n,
    cursorFound: true,
    next_cursor: next?.index_block_hash ?? null,
    prev_cursor: prev?.index_block_hash ?? null,
  };
}

const PG_INT_MAX = 2147483647;

/**
 * A page of the signer signatures of the canonical block `ref` names; an unknown block, or one without signatures,
 * has none (total 0), as in the reference.
 */
export async function signerSignatures(
  sql: Sql,
  ref: BlockRef,
  q: { limit: number; offset: number },
): Promise<{ results: string[]; total: number }> {
  if ('height' in ref && !Number.isSafeInteger(ref.height)) return { results: [], total: 0 };
  const where =
    'latest' in ref
      ? sql`canonical ORDER BY block_height DESC`
      : 'hash' in ref
        ? sql`canonical AND (block_hash = ${ref.hash} OR index_block_hash = ${ref.hash})`
        : sql`canonical AND block_height = ${ref.height}`;
  // array subscripts are int4: clamp (an offset past the end gives an empty slice either way)
  const lo = Math.min(q.offset + 1, PG_INT_MAX);
  const hi = Math.min(q.offset + q.limit, PG_INT_MAX);
  const [r] = await sql<{ results: string[]; total: number }[]>`
    SELECT coalesce(signer_signatures[${lo}:${hi}], '{}') AS results, coalesce(cardinality(signer_signatures), 0) AS total
    FROM blocks WHERE ${where} LIMIT 1`;
  return r ?? { results: [], total: 0 };
}

/** Mean gaps between consecutive canonical blocks over the last hour / day / week / 30 days, as numeric text. */
export interface AverageBlockTimesRow {
  last_1h: string | null;
  last_24h: string | null;
  last_7d: string | null;
  last_30d: string | null;
}

/**
 * The reference's getAverageBlockTimes: a block's time is its block_time, or its burn block's time where block_time is
 * 0; over the canonical blocks of the last 30 days (by that time), the mean gap to the previous such block, for the
 * blocks of each window (the oldest block of the 30 days has no previous one). Windows end at the database's now().
 */
export async function averageBlockTimes(sql: Sql): Promise<AverageBlockTimesRow> {
  const [r] = await sql<AverageBlockTimesRow[]>`
    WITH th AS (
      SELECT
        floor(extract(epoch FROM now() - interval '1 hour'))::bigint AS h1,
        floor(extract(epoch FROM now() - interval '24 hours'))::bigint AS h24,
        floor(extract(epoch FROM now() - interval '7 days'))::bigint AS d7,
        floor(extract(epoch FROM now() - interval '30 days'))::bigint AS d30
    ),
    t AS (
      SELECT (CASE WHEN block_time = 0 THEN burn_block_time ELSE block_time END) AS at,
        lag(CASE WHEN block_time = 0 THEN burn_block_time ELSE block_time END) OVER (ORDER BY block_height) AS prev
      FROM blocks
      WHERE canonical AND (CASE WHEN block_time = 0 THEN burn_block_time ELSE block_time END) >= (SELECT d30 FROM th)
    )
    SELECT
      avg(at - prev) FILTER (WHERE at >= (SELECT h1 FROM th))::text AS last_1h,
      avg(at - prev) FILTER (WHERE at >= (SELECT h24 FROM th))::text AS last_24h,
      avg(at - prev) FILTER (WHERE at >= (SELECT d7 FROM th))::text AS last_7d,
      avg(at - prev)::text AS last_30d
    FROM t WHERE prev IS NOT NULL`;
  return r;
}
