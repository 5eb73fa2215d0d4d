/**
 * Blocks: GET /extended/v2/blocks, /extended/v2/blocks/{height_or_hash}, and the legacy /extended/v1/block family.
 */
import { z } from 'zod';
import { endpoint, notFound, raw } from '../../endpoint.js';
import { redirect } from '../../../http/response.js';
import { Height, HeightOrHash, blockPageCursor, blockRef, paging } from '../../schemas/params.js';
import { BlockListResponse, Block, LegacyBlock, LegacyBlockListResponse } from '../../schemas/blocks.js';
import { blockV2Json, v1BlockJson } from '../../../views/blocks.js';
import * as blocks from '../../../store/blocks.js';
import { v1SingleBlockJson } from '../../../answers/index.js';
import { cursorPageJson, offsetPageJson } from '../../paging.js';

const OLD_BLOCKS = 'Deprecated: use `GET /extended/v2/blocks` (the blocks list endpoint).';

export const blockEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v2/blocks',
    operationId: 'get_blocks',
    summary: 'Recent blocks',
    description: 'Canonical blocks, newest first, paged from a cursor (default: the chain tip).',
    tags: ['Blocks'],
    query: z.object({
      ...paging(20, 30, { min: -300, max: 300 }),
      cursor: blockPageCursor(),
    }),
    response: BlockListResponse,
    responseDescription: 'A page of blocks',
    errors: [400, 404, 503],
    handler: async ({ query }, { sql }) => {
      const page = await blocks.v2BlockPage(sql, { ...query, cursor: query.cursor?.toLowerCase() });
      return cursorPageJson(query, page, (b) => b.index_block_hash, blockV2Json);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/blocks/:height_or_hash',
    operationId: 'get_block',
    summary: 'Block by height, hash or `latest`',
    tags: ['Blocks'],
    params: z.object({ height_or_hash: HeightOrHash }),
    response: Block,
    responseDescription: 'The block',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const b = await blocks.blockByRef(sql, blockRef(params.height_or_hash));
      return b ? blockV2Json(b) : notFound('Block not found');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/block',
    operationId: 'get_block_list',
    summary: 'Recent blocks (legacy form)',
    description: OLD_BLOCKS,
    tags: ['Blocks'],
    deprecated: true,
    query: z.object(paging(20, 30)),
    response: LegacyBlockListResponse,
    responseDescription: 'A page of blocks',
    errors: [400, 503],
    handler: async ({ query }, { sql }) => {
      const { rows, total } = await blocks.v1BlockList(sql, query);
      const extras = await blocks.v1BlockExtras(sql, rows, false);
      return offsetPageJson(query, total, rows.map((b) => v1BlockJson(b, extras, false)));
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/block/by_height/:height',
    operationId: 'get_block_by_height',
    summary: 'Block by height (legacy form)',
    tags: ['Blocks'],
    params: z.object({ height: Height.describe('Block height') }),
    response: LegacyBlock,
    responseDescription: 'The block',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const b = await blocks.blockAtHeight(sql, params.height);
      return b ? v1SingleBlockJson(sql, b) : notFound('cannot find block by height');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/block/by_burn_block_height/:burn_block_height',
    operationId: 'get_block_by_burn_block_height',
    summary: 'Block by burn block height (legacy form)',
    description: OLD_BLOCKS,
    tags: ['Blocks'],
    deprecated: true,
    params: z.object({ burn_block_height: Height.describe('Burn (Bitcoin) block height') }),
    response: LegacyBlock,
    responseDescription: 'The block',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const b = await blocks.blockAtBurnHeight(sql, params.burn_block_height);
      return b ? v1SingleBlockJson(sql, b) : notFound('cannot find block by height');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/block/:hash',
    operationId: 'get_block_by_hash',
    summary: 'Block by hash (legacy form)',
    tags: ['Blocks'],
    // the reference redirects to the 0x form; only a plausible hash is echoed into the Location header (never raw
    // bytes such as %00 or CR/LF, nor a 30 kB value): anything else gets the 400 the 0x form would get
    params: z.object({
      hash: z
        .string()
        .regex(/^(0x[0-9a-fA-F]*|[0-9a-fA-F]{0,128})$/, { error: '{label} must be a 0x-prefixed hex string' })
        .describe('Block hash, 0x-prefixed hex (without `0x`: a 302 redirect to the `0x` form)'),
    }),
    response: LegacyBlock,
    responseDescription: 'The block',
    redirect: { status: 302, description: 'The hash lacks `0x`: redirect to the `0x` form' },
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      if (!params.hash.startsWith('0x')) return raw(redirect(302, `/extended/v1/block/0x${params.hash}`));
      const b = await blocks.blockByHash(sql, params.hash);
      return b ? v1SingleBlockJson(sql, b) : notFound('cannot find block by hash');
    },
  }),
];
