/**
 * BNS-V2 (`SP2QEZ06AGJ3RKJPBV14SY1V5BBFNAW33D96YPGZF.BNS-V2`, not indexed by the reference): `/extended/v2/bns/…`.
 * v1 routes fall back to it (`/v1/names/{name}`, `/v1/addresses/stacks/{address}`).
 */
import { z } from 'zod';
import { endpoint, notFound } from '../../endpoint.js';
import { paging, PrincipalParam } from '../../schemas/params.js';
import { BnsV2Name, BnsV2NameList } from '../../schemas/bns.js';
import { bnsV2Names, bnsV2NamesOwnedBy, bnsV2NamespaceNames, type BnsV2NameRow } from '../../../store/bns-v2.js';

export function bnsV2NameJson(r: BnsV2NameRow): Record<string, unknown> {
  return {
    name: r.name,
    namespace: r.namespace_id,
    contract_id: r.contract_id,
    id: r.nft_id,
    owner: r.owner,
    status: r.op,
    registered_at: r.registered_at,
    renewal_height: r.renewal_height,
    last_txid: r.tx_id,
    last_block_height: r.block_height,
  };
}

export const bnsV2Endpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v2/bns/names/:name',
    operationId: 'get_bns_v2_name',
    summary: 'BNS-V2 name',
    description: 'Owner (the holder of its NFT), NFT id, latest operation and renewal height of a BNS-V2 name.',
    tags: ['Names'],
    params: z.object({ name: z.string().describe('Fully qualified name (`name.namespace`)') }),
    response: BnsV2Name,
    responseDescription: 'Name',
    errors: [400, 404, 503],
    handler: async ({ params }, ctx) => {
      const [row] = await bnsV2Names(ctx.sql, [params.name]);
      if (!row) notFound('Name not found');
      return bnsV2NameJson(row);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/bns/addresses/:principal/names',
    operationId: 'get_bns_v2_names_by_owner',
    summary: 'BNS-V2 names of an owner',
    description: 'The BNS-V2 names whose NFT the principal holds now, by name.',
    tags: ['Names'],
    params: z.object({ principal: PrincipalParam }),
    query: z.object(paging(20, 50)),
    response: BnsV2NameList,
    responseDescription: 'Names',
    errors: [400, 503],
    handler: async ({ params, query }, ctx) => {
      const all = await bnsV2NamesOwnedBy(ctx.sql, params.principal);
      return {
        limit: query.limit,
        offset: query.offset,
        total: all.length,
        results: all.slice(query.offset, query.offset + query.limit).map(bnsV2NameJson),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/bns/namespaces/:namespace/names',
    operationId: 'get_bns_v2_namespace_names',
    summary: 'BNS-V2 names of a namespace',
    description: 'The current BNS-V2 names of a namespace, by name.',
    tags: ['Names'],
    params: z.object({ namespace: z.string().describe('Namespace') }),
    query: z.object(paging(20, 50)),
    response: BnsV2NameList,
    responseDescription: 'Names',
    errors: [400, 503],
    handler: async ({ params, query }, ctx) => {
      const { total, rows } = await bnsV2NamespaceNames(ctx.sql, params.namespace, query.limit, query.offset);
      return { limit: query.limit, offset: query.offset, total, results: rows.map(bnsV2NameJson) };
    },
  }),
];
