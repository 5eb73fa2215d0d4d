/** BNS v1 namespaces: `/v1/namespaces`, `/v1/namespaces/{tld}/names` (reference: routes/bns/namespaces.ts). */
import { z } from 'zod';
import { endpoint, raw } from '../../endpoint.js';
import { json } from '../../../http/response.js';
import { Unanchored } from '../../schemas/params.js';
import { BnsError, BnsNamespaceList, BnsNamespaceNames } from '../../schemas/bns.js';
import { namespaceExists, namespaceIds, namespaceNamesPage } from '../../../store/bns.js';

export const bnsNamespaceEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/namespaces',
    operationId: 'get_all_namespaces',
    summary: 'All namespaces',
    description: 'The namespaces made ready on the canonical chain (Stacks 1.0 namespaces come only from a genesis import).',
    tags: ['Names'],
    query: z.object({ unanchored: Unanchored }),
    response: BnsNamespaceList,
    responseDescription: 'Namespaces',
    errors: [400, 503],
    errorResponse: BnsError,
    handler: async (_input, ctx) => ({ namespaces: await namespaceIds(ctx.sql) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/namespaces/:tld/names',
    operationId: 'get_namespace_names',
    summary: 'Names of a namespace',
    description:
      'The current names of a namespace, 100 per page (the page is cut before revoked names are left out, as the ' +
      'reference). An unknown namespace, or an empty page other than the first, is a 400.',
    tags: ['Names'],
    params: z.object({ tld: z.string().describe('Namespace') }),
    query: z.object({
      page: z.int().min(0).optional().describe('Page (100 names each), from 0'),
      unanchored: Unanchored,
    }),
    response: BnsNamespaceNames,
    responseDescription: 'Names',
    errors: [400, 503],
    errorResponse: BnsError,
    handler: async ({ params, query }, ctx) => {
      if (!(await namespaceExists(ctx.sql, params.tld))) return raw(json(400, { error: 'No such namespace' }));
      const names = await namespaceNamesPage(ctx.sql, params.tld, query.page ?? 0);
      if (names.length === 0 && query.page) return raw(json(400, { error: 'Invalid page' }));
      return names;
    },
  }),
];
