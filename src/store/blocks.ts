/**
 * Block reads: the v2 block by height / hash / latest, the v2 page (cursor + offset), the legacy v1 block with its tx
 * ids and microblock metadata. Rows only; src/views/blocks.ts turns them into JSON.
 */
import type { Sql } from './sql.js';
import { chainTip } from './chain-tip.js';
import { BLOCK_COLUMNS } from './block-columns.js';
import type { BlockDbRow } from './block-columns.js';

/** What a `HeightOrHash` names. */
export type BlockRef = { latest: true } | { hash: string } | { height: number };

/** A microblock row as the v1 metadata needs it. */
export interface MicroblockMetaRow {
  microblock_hash: string;
  microblock_sequence: number;
  parent_index_block_hash: string;
  /** the anchor block that confirmed it ('' while unconfirmed) */
  index_block_hash: string;
}

export async function blockByRef(sql: Sql, ref: BlockRef): Promise<BlockDbRow | undefined> {
  if ('latest' in ref) {
    const [b] = await sql<BlockDbRow[]>`SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    return b;
  }
  if ('hash' in ref) {
    const [b] = await sql<BlockDbRow[]>`
      SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE canonical AND (block_hash = ${ref.hash} OR index_block_hash = ${ref.hash}) LIMIT 1`;
    return b;
  }
  if (!Number.isSafeInteger(ref.height)) return undefined;
  const [b] = await sql<BlockDbRow[]>`SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE canonical AND block_height = ${ref.height} LIMIT 1`;
  return b;
}

/**
 * A cursor page (the reference's v2/v3 lists): the page starts `offset` items away from the anchor (the item named by
 * `cursor`, default the newest), `cursor` is the first item's key, `prev_cursor` / `next_cursor` the keys `limit`
 * items older / newer (null past either end); an unknown cursor is reported (`cursorFound: false`).
 */
export interface CursorPage<R> {
  rows: R[];
  total: number;
  cursorFound: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}

/** A page of v2 blocks. */
export type V2BlockPage = CursorPage<BlockDbRow>;

/** Which canonical blocks a v2 block list walks: all of them, or one tenure's. */
export interface BlockListFilter {
  tenureHeight?: number;
}

/**
 * The v2 block list page (the reference's getBlocks and getTenureBlocks): canonical blocks, newest first, anchored at
 * `cursor` (an index block hash; default the newest), moved `offset` blocks (positive: older, negative: newer).
 */
export async function v2BlockPage(
  sql: Sql,
  q: { limit: number; offset: number; cursor?: string },
  f: BlockListFilter = {},
): Promise<CursorPage<BlockDbRow>> {
  const within = f.tenureHeight === undefined ? sql`` : sql`AND tenure_height = ${f.tenureHeight}`;
  let anchorHeight: number | undefined;
  if (q.cursor) {
    const [a] = await sql<{ block_height: number }[]>`
      SELECT block_height FROM blocks WHERE index_block_hash = ${q.cursor} AND canonical ${within}`;
    anchorHeight = a?.block_height;
  } else {
    const [a] = await sql<{ block_height: number }[]>`
      SELECT block_height FROM blocks WHERE canonical ${within} ORDER BY block_height DESC LIMIT 1`;
    anchorHeight = a?.block_height;
  }
  let startHeight: number | undefined;
  if (anchorHeight !== undefined) {
    if (q.offset >= 0) {
      const [s] = await sql<{ block_height: number }[]>`
        SELECT block_height FROM blocks WHERE canonical ${within} AND block_height <= ${anchorHeight}
        ORDER BY block_height DESC OFFSET ${q.offset} LIMIT 1`;
      startHeight = s?.block_height;
    } else {
      const [s] = await sql<{ block_height: number }[]>`
        SELECT block_height FROM blocks WHERE canonical ${within} AND block_height >= ${anchorHeight}
        ORDER BY block_height ASC OFFSET ${-q.offset} LIMIT 1`;
      startHeight = s?.block_height;
    }
  }
  const rows =
    startHeight === undefined
      ? []
      : await sql<BlockDbRow[]>`
          SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE canonical ${within} AND block_height <= ${startHeight}
          ORDER BY block_height DESC LIMIT ${q.limit}`;
  if (!rows.length) return { rows, total: 0, cursorFound: !q.cursor, next_cursor: null, prev_cursor: null };
  const first = rows[0].block_height;
  const [counts] = await sql<{ total: number; prev: string | null; next: string | null }[]>`
    SELECT
      ${f.tenureHeight === undefined
        // the canonical chain holds one block per height 1..tip (the boot block at 0 is not canonical)
        ? sql`(SELECT COALESCE(max(block_height), 0)::int FROM blocks WHERE canonical)`
        : sql`(SELECT count(*)::int FROM blocks WHERE canonical ${within})`} AS total,
      (SELECT index_block_hash FROM blocks WHERE canonical ${within} AND block_height <= ${first}
        ORDER BY block_height DESC OFFSET ${q.limit} LIMIT 1) AS prev,
      (SELECT index_block_hash FROM blocks WHERE canonical ${within} AND block_height >= ${first}
        ORDER BY block_height ASC OFFSET ${q.limit} LIMIT 1) AS next`;
  return { rows, total: counts.total, cursorFound: true, next_cursor: counts.next, prev_cursor: counts.prev };
}

/** Canonical tx ids of blocks, as the legacy `txs` list orders them. */
export async function blockTxIds(sql: Sql, indexBlockHashes: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(indexBlockHashes.map((h) => [h, []]));
  if (!indexBlockHashes.length) return out;
  const rows = await sql<{ tx_id: string; index_block_hash: string }[]>`
    SELECT tx_id, index_block_hash FROM txs
    WHERE index_block_hash = ANY(${indexBlockHashes}) AND canonical AND microblock_canonical
    ORDER BY microblock_sequence DESC, tx_index DESC`;
  for (const r of rows) out.get(r.index_block_hash)?.push(r.tx_id);
  return out;
}

/** Canonical microblocks whose parent block is one of `parents`. */
export async function microblocksOf(sql: Sql, parents: string[]): Promise<MicroblockMetaRow[]> {
  if (!parents.length) return [];
  return sql<MicroblockMetaRow[]>`
    SELECT microblock_hash, microblock_sequence, parent_index_block_hash, index_block_hash FROM microblocks
    WHERE parent_index_block_hash = ANY(${[...new Set(parents)]}) AND microblock_canonical`;
}

/** Canonical tx count per microblock hash. */
export async function microblockTxCounts(sql: Sql, hashes: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(hashes)];
  if (!unique.length) return new Map();
  const rows = await sql<{ microblock_hash: string; n: number }[]>`
    SELECT microblock_hash, count(*)::int AS n FROM txs
    WHERE microblock_hash = ANY(${unique}) AND canonical AND microblock_canonical
    GROUP BY microblock_hash`;
  return new Map(rows.map((r) => [r.microblock_hash, r.n]));
}

/** What a legacy (v1) block answer needs beyond the block rows. */
export interface V1BlockExtras {
  txs: Map<string, string[]>;
  microblocks: MicroblockMetaRow[];
  counts: Map<string, number>;
}

/**
 * Tx ids, microblocks and microblock tx counts for legacy blocks. `single`: the counts of the block's own parent
 * stream only (the single-block answer); otherwise of every microblock read.
 */
export async function v1BlockExtras(sql: Sql, blocks: BlockDbRow[], single: boolean): Promise<V1BlockExtras> {
  const txs = await blockTxIds(sql, blocks.map((b) => b.index_block_hash));
  const microblocks = await microblocksOf(sql, blocks.flatMap((b) => [b.index_block_hash, b.parent_index_block_hash]));
  const counted = single
    ? microblocks.filter((m) => blocks.some((b) => m.parent_index_block_hash === b.parent_index_block_hash))
    : microblocks;
  const counts = await microblockTxCounts(sql, counted.map((m) => m.microblock_hash));
  return { txs, microblocks, counts };
}

export async function v1BlockList(sql: Sql, q: { limit: number; offset: number }): Promise<{ rows: BlockDbRow[]; total: number }> {
  const tip = await chainTip(sql);
  const rows = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
  return { rows, total: tip?.block_height ?? 0 };
}

/** A block at this height, canonical first (the legacy lookups also answer non-canonical blocks). */
export async function blockAtHeight(sql: Sql, height: number): Promise<BlockDbRow | undefined> {
  const [b] = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE block_height = ${height} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b;
}

export async function blockAtBurnHeight(sql: Sql, burnHeight: number): Promise<BlockDbRow | undefined> {
  const [b] = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE burn_block_height = ${burnHeight} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b;
}

export async function blockByHash(sql: Sql, hash: string): Promise<BlockDbRow | undefined> {
  const [b] = await sql<BlockDbRow[]>`
    SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE block_hash = ${hash} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b;
}

/** Where a block sits: height, canonical, tenure, parent and burn block (the push rooms a reorg touches). */
export interface BlockPlacementRow {
  index_block_hash: string;
  block_height: number;
  canonical: boolean;
  tenure_height: number | null;
  parent_index_block_hash: string;
  burn_block_hash: string;
  burn_block_height: number;
}

/** The placement of each of the blocks `hashes` (index block hashes; unknown ones are left out). */
export async function blockPlacements(sql: Sql, hashes: string[]): Promise<BlockPlacementRow[]> {
  return sql<BlockPlacementRow[]>`
    SELECT index_block_hash, block_height, canonical, tenure_height, parent_index_block_hash, burn_block_hash, burn_block_height
    FROM blocks WHERE index_block_hash = ANY(${hashes})`;
}

/** The tenure height of each of the blocks `hashes` (index block hashes; unknown ones are left out). */
export async function tenureHeights(sql: Sql, hashes: string[]): Promise<{ index_block_hash: string; tenure_height: number | null }[]> {
  return sql<{ index_block_hash: string; tenure_height: number | null }[]>`
    SELECT index_block_hash, tenure_height FROM blocks WHERE index_block_hash = ANY(${hashes})`;
}
