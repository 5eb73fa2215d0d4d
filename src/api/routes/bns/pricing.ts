/**
 * BNS v1 prices: `/v2/prices/namespaces/{tld}`, `/v2/prices/names/{name}` (reference: routes/bns/pricing.ts), answered
 * by a read-only call of the BNS contract on the node pool (src/proxy/read-only.ts), not forwarded by the `/v2/*` proxy.
 */
import { z } from 'zod';
import { endpoint, raw } from '../../endpoint.js';
import { json } from '../../../http/response.js';
import { BnsError, BnsPrice } from '../../schemas/bns.js';
import { callReadOnly } from '../../../proxy/read-only.js';
import { bnsContract, bufferCvHex, okUintAmount } from '../../../chain/bns.js';
import type { ApiContext } from '../../context.js';

async function price(ctx: ApiContext, functionName: string, args: string[], invalid: string) {
  const contract = bnsContract(ctx.network ?? 'mainnet');
  const result = await callReadOnly(ctx.nodes?.(), { contract, functionName, args, sender: contract.split('.')[0] });
  const amount = result.okay ? okUintAmount(result.result) : null;
  if (amount === null) return raw(json(400, { error: invalid }));
  return { units: 'STX', amount };
}

export const bnsPriceEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v2/prices/namespaces/:tld',
    operationId: 'get_namespace_price',
    summary: 'Price of a namespace',
    description: "The BNS contract's `get-namespace-price` on a Stacks node; 503 while no node answers.",
    tags: ['Names'],
    params: z.object({ tld: z.string().describe('Namespace') }),
    response: BnsPrice,
    responseDescription: 'Price',
    errors: [400, 502, 503, 504],
    errorResponse: BnsError,
    cache: 'none',
    handler: async ({ params }, ctx) => {
      if (params.tld.length > 20) return raw(json(400, { error: 'Invalid namespace' }));
      return price(ctx, 'get-namespace-price', [bufferCvHex(params.tld)], 'Invalid namespace');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v2/prices/names/:name',
    operationId: 'get_name_price',
    summary: 'Price of a name',
    description: "The BNS contract's `get-name-price` on a Stacks node (`name.namespace`); 503 while no node answers.",
    tags: ['Names'],
    params: z.object({ name: z.string().describe('Fully qualified name (`muneeb.id`)') }),
    response: BnsPrice,
    responseDescription: 'Price',
    errors: [400, 502, 503, 504],
    errorResponse: BnsError,
    cache: 'none',
    handler: async ({ params }, ctx) => {
      const parts = params.name.split('.');
      if (parts.length !== 2) return raw(json(400, { error: 'Invalid name' }));
      const [name, namespace] = parts;
      return price(ctx, 'get-name-price', [bufferCvHex(namespace), bufferCvHex(name)], 'Invalid name');
    },
  }),
];
