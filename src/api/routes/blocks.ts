/**
 * Blocks: GET /extended/v2/blocks, /extended/v2/blocks/{height_or_hash}, and the legacy /extended/v1/block family.
 */
import type { Router, HttpRequest } from '../../http/router.js';
import { json, redirect, HttpError } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import type { Sql } from '../../store/connect.js';
import { chainTip } from '../../store/chain-tip.js';
import { badParam, checkInt, paging } from '../params.js';
import {
  blockV1Json,
  blockV2Json,
  listBlockMicroblocks,
  singleBlockMicroblocks,
  type BlockDbRow,
  type MicroblockMetaRow,
} from '../serialize-blocks.js';

const HASH_RE = /^(0x)?[a-fA-F0-9]{64}$/;
const CURSOR_RE = /^0x[a-fA-F0-9]{64}$/;

/** What `/extended/v2/blocks/{height_or_hash}` names. */
export type BlockIdentifier = { latest: true } | { hash: string } | { height: number };

/**
 * Parses height_or_hash as the reference's schema does: "latest", a 64-hex hash (0x optional, any case), or an integer
 * (with the reference's numeric coercion: "0x10" is height 16). Negative heights are a 400.
 */
export function parseHeightOrHash(raw: string): BlockIdentifier {
  const label = 'params/height_or_hash';
  if (raw === 'latest') return { latest: true };
  if (HASH_RE.test(raw)) return { hash: (raw.startsWith('0x') ? raw : '0x' + raw).toLowerCase() };
  // ajv's string → integer coercion: a non-empty string equal to its Number() value with no fraction
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || !Number.isInteger(n)) {
    badParam(
      `${label} must be equal to constant, ${label} must match pattern "^(0x)?[a-fA-F0-9]{64}$", ${label} must be integer, ${label} must match a schema in anyOf`,
    );
  }
  if (n < 0) badParam(`${label} must be a block height >= 0 or a block hash (Invalid block height or hash)`);
  return { height: n };
}

function notFound(message: string): never {
  throw new HttpError(404, message);
}

async function v2Block(sql: Sql, id: BlockIdentifier): Promise<BlockDbRow | undefined> {
  if ('latest' in id) {
    const [b] = await sql<BlockDbRow[]>`SELECT * FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    return b;
  }
  if ('hash' in id) {
    const [b] = await sql<BlockDbRow[]>`
      SELECT * FROM blocks WHERE canonical AND (block_hash = ${id.hash} OR index_block_hash = ${id.hash}) LIMIT 1`;
    return b;
  }
  if (!Number.isSafeInteger(id.height)) return undefined;
  const [b] = await sql<BlockDbRow[]>`SELECT * FROM blocks WHERE canonical AND block_height = ${id.height} LIMIT 1`;
  return b;
}

/** The v2 block list page (reference getBlocks): anchor at `cursor` (default tip), move `offset` blocks older. */
export async function v2BlockPage(sql: Sql, q: { limit: number; offset: number; cursor?: string }) {
  const empty = { limit: q.limit, offset: q.offset, total: 0, next_cursor: null, prev_cursor: null, cursor: null, results: [] as unknown[] };
  const tip = await chainTip(sql);
  let anchorHeight: number | undefined;
  if (q.cursor) {
    const [a] = await sql<{ block_height: number }[]>`
      SELECT block_height FROM blocks WHERE index_block_hash = ${q.cursor} AND canonical`;
    anchorHeight = a?.block_height;
  } else {
    anchorHeight = tip?.block_height;
  }
  let startHeight: number | undefined;
  if (anchorHeight !== undefined) {
    if (q.offset >= 0) {
      const [s] = await sql<{ block_height: number }[]>`
        SELECT block_height FROM blocks WHERE canonical AND block_height <= ${anchorHeight}
        ORDER BY block_height DESC OFFSET ${q.offset} LIMIT 1`;
      startHeight = s?.block_height;
    } else {
      const [s] = await sql<{ block_height: number }[]>`
        SELECT block_height FROM blocks WHERE canonical AND block_height >= ${anchorHeight}
        ORDER BY block_height ASC OFFSET ${-q.offset} LIMIT 1`;
      startHeight = s?.block_height;
    }
  }
  const rows =
    startHeight === undefined
      ? []
      : await sql<BlockDbRow[]>`
          SELECT * FROM blocks WHERE canonical AND block_height <= ${startHeight}
          ORDER BY block_height DESC LIMIT ${q.limit}`;
  if (!rows.length) {
    if (q.cursor) notFound('Cursor not found');
    return empty;
  }
  const first = rows[0].block_height;
  const [prev] = await sql<{ index_block_hash: string }[]>`
    SELECT index_block_hash FROM blocks WHERE canonical AND block_height = ${first - q.limit} LIMIT 1`;
  const [next] = await sql<{ index_block_hash: string }[]>`
    SELECT index_block_hash FROM blocks WHERE canonical AND block_height = ${first + q.limit} LIMIT 1`;
  return {
    limit: q.limit,
    offset: q.offset,
    // the canonical chain holds one block per height 1..tip (the boot block at 0 is not canonical)
    total: tip?.block_height ?? 0,
    next_cursor: next?.index_block_hash ?? null,
    prev_cursor: prev?.index_block_hash ?? null,
    cursor: rows[0].index_block_hash,
    results: rows.map(blockV2Json),
  };
}

/** Canonical tx ids of a block, as the legacy `txs` list orders them. */
async function blockTxIds(sql: Sql, indexBlockHashes: string[]): Promise<Map<string, string[]>> {
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
async function microblocksOf(sql: Sql, parents: string[]): Promise<MicroblockMetaRow[]> {
  if (!parents.length) return [];
  return sql<MicroblockMetaRow[]>`
    SELECT microblock_hash, microblock_sequence, parent_index_block_hash, index_block_hash FROM microblocks
    WHERE parent_index_block_hash = ANY(${[...new Set(parents)]}) AND microblock_canonical`;
}

/** Canonical tx count per microblock hash. */
async function microblockTxCounts(sql: Sql, hashes: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(hashes)];
  if (!unique.length) return new Map();
  const rows = await sql<{ microblock_hash: string; n: number }[]>`
    SELECT microblock_hash, count(*)::int AS n FROM txs
    WHERE microblock_hash = ANY(${unique}) AND canonical AND microblock_canonical
    GROUP BY microblock_hash`;
  return new Map(rows.map((r) => [r.microblock_hash, r.n]));
}

/** The legacy block of a single lookup (its own microblock metadata variant). */
export async function v1SingleBlockJson(sql: Sql, b: BlockDbRow): Promise<Record<string, unknown>> {
  const txs = (await blockTxIds(sql, [b.index_block_hash])).get(b.index_block_hash) ?? [];
  const mbs = await microblocksOf(sql, [b.index_block_hash, b.parent_index_block_hash]);
  const counts = await microblockTxCounts(
    sql,
    mbs.filter((m) => m.parent_index_block_hash === b.parent_index_block_hash).map((m) => m.microblock_hash),
  );
  return blockV1Json(b, { txs, ...singleBlockMicroblocks(b, mbs, counts) });
}

/** The legacy block list page. */
export async function v1BlockPage(sql: Sql, q: { limit: number; offset: number }) {
  const tip = await chainTip(sql);
  const rows = await sql<BlockDbRow[]>`
    SELECT * FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
  const txs = await blockTxIds(sql, rows.map((b) => b.index_block_hash));
  const mbs = await microblocksOf(sql, rows.flatMap((b) => [b.index_block_hash, b.parent_index_block_hash]));
  const counts = await microblockTxCounts(sql, mbs.map((m) => m.microblock_hash));
  return {
    limit: q.limit,
    offset: q.offset,
    total: tip?.block_height ?? 0,
    results: rows.map((b) => blockV1Json(b, { txs: txs.get(b.index_block_hash) ?? [], ...listBlockMicroblocks(b, mbs, counts) })),
  };
}

function pathHeight(req: HttpRequest, name: string): number {
  return checkInt(`params/${name}`, req.params[name] ?? '', { min: 0 });
}

export function registerBlocksRoutes(router: Router, ctx: ApiContext): void {
  const sql = ctx.sql;

  router.get('/extended/v2/blocks', async (req) => {
    const { limit, offset } = paging(req, { limit: 20, max: 30, minOffset: -300, maxOffset: 300 });
    const rawCursor = req.query.get('cursor');
    if (rawCursor !== null && !CURSOR_RE.test(rawCursor)) badParam('querystring/cursor must match pattern "^0x[a-fA-F0-9]{64}$"');
    return json(200, await v2BlockPage(sql, { limit, offset, cursor: rawCursor?.toLowerCase() }));
  });

  router.get('/extended/v2/blocks/:height_or_hash', async (req) => {
    const id = parseHeightOrHash(req.params.height_or_hash ?? '');
    const b = await v2Block(sql, id);
    if (!b) notFound('Block not found');
    return json(200, blockV2Json(b));
  });

  router.get('/extended/v1/block', async (req) => {
    const { limit, offset } = paging(req, { limit: 20, max: 30 });
    return json(200, await v1BlockPage(sql, { limit, offset }));
  });

  router.get('/extended/v1/block/by_height/:height', async (req) => {
    const h = pathHeight(req, 'height');
    const [b] = await sql<BlockDbRow[]>`
      SELECT * FROM blocks WHERE block_height = ${h} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
    if (!b) notFound('cannot find block by height');
    return json(200, await v1SingleBlockJson(sql, b));
  });

  router.get('/extended/v1/block/by_burn_block_height/:burn_block_height', async (req) => {
    const h = pathHeight(req, 'burn_block_height');
    const [b] = await sql<BlockDbRow[]>`
      SELECT * FROM blocks WHERE burn_block_height = ${h} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
    if (!b) notFound('cannot find block by height');
    return json(200, await v1SingleBlockJson(sql, b));
  });

  router.get('/extended/v1/block/:hash', async (req) => {
    const hash = req.params.hash ?? '';
    // the reference redirects to the 0x form; only a plausible hash is echoed into the Location header (never raw
    // bytes such as %00 or CR/LF, nor a 30 kB value): anything else gets the 400 the 0x form would get
    if (!hash.startsWith('0x')) {
      if (/^[0-9a-fA-F]{0,128}$/.test(hash)) return redirect(302, `/extended/v1/block/0x${hash}`);
      badParam('params/hash must be a 0x-prefixed hex string');
    }
    if (!/^0x[0-9a-fA-F]*$/.test(hash)) badParam('params/hash must be a 0x-prefixed hex string');
    const [b] = await sql<BlockDbRow[]>`
      SELECT * FROM blocks WHERE block_hash = ${hash} ORDER BY canonical DESC, block_height DESC LIMIT 1`;
    if (!b) notFound('cannot find block by hash');
    return json(200, await v1SingleBlockJson(sql, b));
  });
}
