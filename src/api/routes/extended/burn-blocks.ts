/**
 * Burn blocks: GET /extended/v2/burn-blocks, /extended/v2/burn-blocks/{height_or_hash}[/blocks], and the legacy
 * /extended/v1/block/by_burn_block_hash/{burn_block_hash}.
 */
import { z } from 'zod';
import { endpoint, notFound, raw } from '../../endpoint.js';
import { redirect } from '../../../http/response.js';
import { HeightOrHash, Offset, blockRef } from '../../schemas/params.js';
import { BurnBlock, BurnBlockBlocksResponse, BurnBlockListResponse } from '../../schemas/nakamoto.js';
import { LegacyBlock } from '../../schemas/blocks.js';
import { blockV2Json } from '../../../views/blocks.js';
import { burnBlockJson } from '../../../views/nakamoto.js';
import * as burnBlocks from '../../../store/burn-blocks.js';
import { v1SingleBlockJson } from '../../../answers/index.js';

/** `limit` as these routes take it: absent → the default; 0 is kept (an empty page), as the reference does. */
export function PageLimit(def: number, max: number) {
  return z.int().min(0).max(max).default(def).describe(`Page size (absent: ${def}; 0: an empty page; more than ${max}: 400)`);
}

const BurnHeightOrHash = HeightOrHash.describe(
  '`latest` (the burn block of the canonical tip), a burn block height, or a burn block hash (64 hex digits, `0x` optional)',
);

export const burnBlockEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v2/burn-blocks',
    operationId: 'get_burn_blocks',
    summary: 'Recent burn blocks',
    description:
      'Bitcoin blocks that carry canonical Stacks blocks, newest first, with the hashes of those blocks, their mean ' +
      'block time and transaction count. As in the reference, `total` is the number of canonical Stacks blocks.',
    tags: ['Burn Blocks'],
    query: z.object({ limit: PageLimit(20, 30), offset: Offset() }),
    response: BurnBlockListResponse,
    responseDescription: 'A page of burn blocks',
    errors: [400, 503],
    handler: async ({ query }, { sql }) => {
      const { rows, total } = await burnBlocks.burnBlockPage(sql, query);
      return { limit: query.limit, offset: query.offset, total, results: rows.map(burnBlockJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/burn-blocks/:height_or_hash',
    operationId: 'get_burn_block',
    summary: 'Burn block by height, hash or `latest`',
    tags: ['Burn Blocks'],
    params: z.object({ height_or_hash: BurnHeightOrHash }),
    response: BurnBlock,
    responseDescription: 'The burn block',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const b = await burnBlocks.burnBlockByRef(sql, blockRef(params.height_or_hash));
      return b ? burnBlockJson(b) : notFound('Not found');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/burn-blocks/:height_or_hash/blocks',
    operationId: 'get_blocks_by_burn_block',
    summary: 'Stacks blocks of a burn block',
    description:
      'The canonical Stacks blocks a burn block carries, newest first. 404 when no stored block (canonical or not) ' +
      'names the burn block.',
    tags: ['Burn Blocks'],
    params: z.object({ height_or_hash: BurnHeightOrHash }),
    query: z.object({ limit: PageLimit(20, 30), offset: Offset() }),
    response: BurnBlockBlocksResponse,
    responseDescription: 'A page of blocks',
    errors: [400, 404, 503],
    handler: async ({ params, query }, { sql }) => {
      const page = await burnBlocks.blocksOfBurnBlock(sql, blockRef(params.height_or_hash), query);
      if (!page.found) notFound('Burn block not found');
      return { limit: query.limit, offset: query.offset, total: page.total, results: page.rows.map(blockV2Json) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/block/by_burn_block_hash/:burn_block_hash',
    operationId: 'get_block_by_burn_block_hash',
    summary: 'Block by burn block hash (legacy form)',
    description: 'Deprecated: use `GET /extended/v2/burn-blocks/{height_or_hash}/blocks`.',
    tags: ['Blocks'],
    deprecated: true,
    // as /extended/v1/block/:hash: only a plausible hash is echoed into the redirect's Location header
    params: z.object({
      burn_block_hash: z
        .string()
        .regex(/^(0x[0-9a-fA-F]*|[0-9a-fA-F]{0,128})$/, { error: '{label} must be a 0x-prefixed hex string' })
        .describe('Burn block hash, 0x-prefixed hex in any case (without `0x`: a 302 redirect to the `0x` form)'),
    }),
    response: LegacyBlock,
    responseDescription: 'The block (canonical first)',
    redirect: { status: 302, description: 'The hash lacks `0x`: redirect to the `0x` form' },
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const hash = params.burn_block_hash;
      if (!hash.startsWith('0x')) return raw(redirect(302, `/extended/v1/block/by_burn_block_hash/0x${hash}`));
      const b = await burnBlocks.blockByBurnBlockHash(sql, hash.toLowerCase());
      return b ? v1SingleBlockJson(sql, b) : notFound('cannot find block by burn block hash');
    },
  }),
];
