/** BNS v1 names owned by an address: `/v1/addresses/{blockchain}/{address}` (reference: routes/bns/addresses.ts). */
import { z } from 'zod';
import { badRequest, endpoint } from '../../endpoint.js';
import { Unanchored } from '../../schemas/params.js';
import { BnsError, BnsNamesOwned } from '../../schemas/bns.js';
import { currentNameSet, namesOwnedBy } from '../../../store/bns.js';
import { ownedNames } from '../../../views/bns.js';
import { bnsV2NamesOwnedBy } from '../../../store/bns-v2.js';

export const bnsAddressEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/addresses/:blockchain/:address',
    operationId: 'get_names_owned_by_address',
    summary: 'Names owned by an address',
    description:
      'The current names whose bns::names NFT the address holds, the names it registered at height 1 and still holds, ' +
      'and the subdomains it owns (of current names). Only the `stacks` blockchain is supported.',
    tags: ['Names'],
    params: z.object({
      blockchain: z.string().describe('`stacks`'),
      address: z.string().describe('Stacks address'),
    }),
    query: z.object({ unanchored: Unanchored }),
    response: BnsNamesOwned,
    responseDescription: 'Names',
    errors: [400, 503],
    errorResponse: BnsError,
    handler: async ({ params }, ctx) => {
      if (params.blockchain !== 'stacks') badRequest('Unsupported blockchain');
      const owned = await namesOwnedBy(ctx.sql, params.address);
      const candidates = [...new Set([...owned.names, ...owned.subdomains.map((s) => s.name)])];
      const valid = await currentNameSet(ctx.sql, candidates);
      // and the BNS-V2 names it holds
      const v2 = (await bnsV2NamesOwnedBy(ctx.sql, params.address)).map((r) => r.name);
      return { names: [...new Set([...ownedNames(owned, valid), ...v2])].sort() };
    },
  }),
];
