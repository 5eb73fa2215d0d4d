/**
 * Microblocks: GET /extended/v1/microblock, /extended/v1/microblock/:hash, /extended/v1/microblock/unanchored/txs.
 */
import { z } from 'zod';
import { endpoint, notFound, raw } from '../../endpoint.js';
import { redirect } from '../../../http/response.js';
import { paging } from '../../schemas/params.js';
import { Microblock, MicroblockListResponse, UnanchoredTxsResponse } from '../../schemas/explorer.js';
import { groupMicroblockRows, microblockJson } from '../../../views/explorer.js';
import { txJson } from '../../../views/txs.js';
import * as microblocks from '../../../store/microblocks.js';

export const microblockEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/microblock',
    operationId: 'get_microblock_list',
    summary: 'Recent microblocks',
    description:
      'Canonical microblocks with their canonical txs, newest first. As in the reference, `limit` and `offset` count ' +
      'transactions (a page holds the microblocks of `limit` txs), and `total` counts the microblocks received in ' +
      'streams.',
    tags: ['Microblocks'],
    query: z.object(paging(20, 200)),
    response: MicroblockListResponse,
    responseDescription: 'A page of microblocks',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const { total, rows } = await microblocks.microblockPage(sql, q);
      return { limit: q.limit, offset: q.offset, total, results: groupMicroblockRows(rows) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/microblock/unanchored/txs',
    operationId: 'get_unanchored_txs',
    summary: 'Transactions of unconfirmed microblocks',
    description: 'Transactions streamed in microblocks on the chain tip and not yet confirmed by an anchor block.',
    tags: ['Microblocks'],
    response: UnanchoredTxsResponse,
    responseDescription: 'The transactions',
    errors: [503],
    handler: async (_input, { sql }) => {
      const rows = await microblocks.unanchoredTxs(sql);
      return { total: rows.length, results: rows.map((r) => txJson(r)) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/microblock/:hash',
    operationId: 'get_microblock_by_hash',
    summary: 'Microblock by hash',
    tags: ['Microblocks'],
    params: z.object({
      hash: z
        .string()
        .regex(/^(0x[0-9a-fA-F]*|[0-9a-fA-F]{0,128})$/, { error: '{label} must be a 0x-prefixed hex string' })
        .describe('Microblock hash, hex in any case (without `0x`: a 302 redirect to the `0x` form)'),
    }),
    response: Microblock,
    responseDescription: 'The microblock',
    redirect: { status: 302, description: 'The hash lacks `0x`: redirect to the `0x` form' },
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      if (!params.hash.startsWith('0x')) return raw(redirect(302, `/extended/v1/microblock/0x${params.hash}`));
      const found = await microblocks.microblockByHash(sql, params.hash.toLowerCase());
      return found ? microblockJson(found.row, found.txIds) : notFound('cannot find microblock by hash');
    },
  }),
];
