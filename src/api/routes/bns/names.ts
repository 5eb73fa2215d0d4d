/** BNS v1 names: `/v1/names`, `/v1/names/{name}`, its zonefile(s) and subdomains (reference: routes/bns/names.ts). */
import { z } from 'zod';
import { endpoint, raw } from '../../endpoint.js';
import { json, redirect } from '../../../http/response.js';
import { Unanchored } from '../../schemas/params.js';
import { BnsError, BnsNameInfo, BnsNameList, BnsSubdomainList, BnsZonefile } from '../../schemas/bns.js';
import {
  currentNames,
  historicalZonefile,
  latestSubdomain,
  latestZonefile,
  nameOfSubdomain,
  namesPage,
  subdomainResolver,
  subdomainsOf,
} from '../../../store/bns.js';
import { nameInfo, subdomainInfo, v2NameInfo } from '../../../views/bns.js';
import { bnsV2Names } from '../../../store/bns-v2.js';

const bnsError = (status: number, error: string) => raw(json(status, { error }));

const NameParam = z.string().describe('Fully qualified name (`muneeb.id`) or subdomain (`sub.muneeb.id`)');
const ZonefileHash = z
  .string()
  .transform((h) => (h.startsWith('0x') ? h.slice(2) : h))
  .describe('Zonefile hash (hex, with or without 0x)');
const isSubdomain = (name: string) => name.split('.').length > 2;

export const bnsNameEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/names',
    operationId: 'get_all_names',
    summary: 'All names',
    description: 'The current (not revoked) names, 100 per page, by name. An empty page other than the first is a 400.',
    tags: ['Names'],
    query: z.object({
      page: z.int().min(0).optional().describe('Page (100 names each), from 0'),
      unanchored: Unanchored,
    }),
    response: BnsNameList,
    responseDescription: 'Names',
    errors: [400, 503],
    errorResponse: BnsError,
    handler: async ({ query }, ctx) => {
      const names = await namesPage(ctx.sql, query.page ?? 0);
      if (names.length === 0 && query.page) return bnsError(400, 'Invalid page');
      return names;
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/names/:name/zonefile/:zoneFileHash',
    operationId: 'get_historical_zone_file',
    summary: 'Historical zonefile',
    description: 'The zonefile of a name or subdomain with this hash, if one of its canonical operations carried it.',
    tags: ['Names'],
    params: z.object({ name: NameParam, zoneFileHash: ZonefileHash }),
    query: z.object({ unanchored: Unanchored }),
    response: BnsZonefile,
    responseDescription: 'Zonefile',
    errors: [400, 404, 503],
    errorResponse: BnsError,
    handler: async ({ params }, ctx) => {
      const [parent] = await currentNames(ctx.sql, [nameOfSubdomain(params.name)]);
      const zonefile = parent
        ? await historicalZonefile(ctx.sql, params.name, params.zoneFileHash, isSubdomain(params.name))
        : undefined;
      if (zonefile === undefined) return bnsError(404, 'No such name or zonefile');
      return { zonefile };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/names/:name/subdomains',
    operationId: 'fetch_subdomains_list_for_name',
    summary: 'Subdomains of a name',
    description: 'The subdomains of a current name (empty for an unknown or revoked name).',
    tags: ['Names'],
    params: z.object({ name: NameParam }),
    query: z.object({ unanchored: Unanchored }),
    response: BnsSubdomainList,
    responseDescription: 'Subdomains',
    errors: [400, 503],
    errorResponse: BnsError,
    handler: async ({ params }, ctx) => {
      const [parent] = await currentNames(ctx.sql, [params.name]);
      return parent ? subdomainsOf(ctx.sql, params.name) : [];
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/names/:name/zonefile',
    operationId: 'fetch_zone_file',
    summary: 'Zonefile of a name',
    description: "The zonefile of a name's latest operation, or of a subdomain's latest update.",
    tags: ['Names'],
    params: z.object({ name: NameParam }),
    query: z.object({ unanchored: Unanchored }),
    response: BnsZonefile,
    responseDescription: 'Zonefile',
    errors: [400, 404, 503],
    errorResponse: BnsError,
    handler: async ({ params }, ctx) => {
      const [parent] = await currentNames(ctx.sql, [nameOfSubdomain(params.name)]);
      const zonefile = parent ? await latestZonefile(ctx.sql, params.name, isSubdomain(params.name)) : undefined;
      if (zonefile === undefined) return bnsError(404, 'No such name or zonefile does not exist');
      return { zonefile };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/names/:name',
    operationId: 'get_name_info',
    summary: 'Name details',
    description:
      'Owner, status, last tx, expiry and zonefile of a name; for a subdomain (`a.b.c`) its owner and zonefile, or a ' +
      "302 to its name's resolver when the subdomain is not known here.",
    tags: ['Names'],
    params: z.object({ name: NameParam }),
    query: z.object({ unanchored: Unanchored }),
    response: BnsNameInfo,
    responseDescription: 'Name details',
    redirect: { status: 302, description: "An unknown subdomain: its name's subdomain resolver" },
    errors: [400, 404, 503],
    errorResponse: BnsError,
    handler: async ({ params, req }, ctx) => {
      const name = params.name;
      if (name.split('.').length === 3) {
        const parent = nameOfSubdomain(name);
        const [current] = await currentNames(ctx.sql, [parent]);
        const sub = current ? await latestSubdomain(ctx.sql, name) : undefined;
        if (sub && sub.zonefile_hash) return subdomainInfo(sub);
        const resolver = await subdomainResolver(ctx.sql, parent);
        if (resolver === '') return bnsError(404, 'missing resolver from a malformed zonefile');
        if (resolver !== undefined) return raw(redirect(302, `${resolver}${req.path}${req.rawQuery ? `?${req.rawQuery}` : ''}`));
        return bnsError(404, `cannot find subdomain ${name}`);
      }
      const [row] = await currentNames(ctx.sql, [name]);
      if (row) return nameInfo(row);
      // a BNS-V2 name when no v1 name exists
      const [v2] = await bnsV2Names(ctx.sql, [name]);
      if (v2) return v2NameInfo(v2);
      return bnsError(404, `cannot find name ${name}`);
    },
  }),
];
