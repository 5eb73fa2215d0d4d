/**
 * Nakamoto views: GET /extended/v2/blocks/average-times, /extended/v2/blocks/{height_or_hash}/signer-signatures,
 * /extended/v2/block-tenures/{tenure_height}/blocks.
 */
import { z } from 'zod';
import { endpoint } from '../../endpoint.js';
import { Height, HeightOrHash, Offset, blockPageCursor, blockRef, paging } from '../../schemas/params.js';
import { BlockListResponse } from '../../schemas/blocks.js';
import { AverageBlockTimesResponse, SignerSignatureListResponse } from '../../schemas/nakamoto.js';
import { averageBlockTimesJson } from '../../../views/nakamoto.js';
import { cursorPageJson } from '../../paging.js';
import { blockV2Json } from '../../../views/blocks.js';
import * as tenures from '../../../store/tenures.js';
import { PageLimit } from './burn-blocks.js';

export const nakamotoEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v2/blocks/average-times',
    operationId: 'get_average_block_times',
    summary: 'Average block times',
    description:
      'Mean time between consecutive canonical blocks (seconds, 2 decimals) over the last hour, 24 hours, 7 days and ' +
      '30 days before now; a block without a block time counts with its burn block time; 0 for a window with no gap.',
    tags: ['Blocks'],
    response: AverageBlockTimesResponse,
    responseDescription: 'The averages',
    errors: [503],
    // computed against the clock, not only the chain: never answered from a chain-version cache
    cache: 'none',
    handler: async (_input, { sql }) => averageBlockTimesJson(await tenures.averageBlockTimes(sql)),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/blocks/:height_or_hash/signer-signatures',
    operationId: 'get_signer_signatures_for_block',
    summary: 'Signer signatures of a block',
    description:
      'The signatures of the signers over a Nakamoto block, in the order the node sent them. An unknown block, a ' +
      'non-canonical one or one from before Nakamoto has none (an empty page, as in the reference).',
    tags: ['Blocks'],
    params: z.object({ height_or_hash: HeightOrHash }),
    query: z.object({ limit: PageLimit(500, 1000), offset: Offset() }),
    response: SignerSignatureListResponse,
    responseDescription: 'A page of signatures',
    errors: [400, 503],
    handler: async ({ params, query }, { sql }) => {
      const { results, total } = await tenures.signerSignatures(sql, blockRef(params.height_or_hash), query);
      return { limit: query.limit, offset: query.offset, total, results };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/block-tenures/:tenure_height/blocks',
    operationId: 'get_tenure_blocks',
    summary: 'Blocks of a tenure',
    description:
      'The canonical blocks of a tenure, newest first, paged from a cursor (default: the chain tip; the page is empty ' +
      'when the anchor is not a block of the tenure). Tenure 0 lists every block, as in the reference.',
    tags: ['Blocks'],
    params: z.object({ tenure_height: Height.describe('Tenure height') }),
    query: z.object({
      ...paging(20, 30, { min: -300, max: 300 }),
      cursor: blockPageCursor(),
    }),
    response: BlockListResponse,
    responseDescription: 'A page of blocks',
    errors: [400, 404, 503],
    handler: async ({ params, query }, { sql }) => {
      const cursor = query.cursor?.toLowerCase();
      const page = await tenures.tenureBlockPage(sql, params.tenure_height, { ...query, cursor });
      return cursorPageJson(query, page, (b) => b.index_block_hash, blockV2Json);
    },
  }),
];
