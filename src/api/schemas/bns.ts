// BNS v1 answers (the reference's titles at v8.13.6: src/api/routes/bns/*.ts).
import { z } from 'zod';
import { component, ErrorResponse } from './common.js';

export const BnsError = component(
  'BnsError',
  z
    .union([z.object({ error: z.string() }), ErrorResponse])
    .describe('A BNS error: `{error}` as the reference words it, or the common error (malformed parameter, no database)'),
);

export const BnsNameList = component(
  'BnsGetAllNamesResponse',
  z.array(z.string()).describe('Names (fully qualified), by name'),
);

export const BnsNameInfo = component(
  'BnsGetNameInfoResponse',
  z
    .object({
      address: z.string(),
      blockchain: z.string(),
      expire_block: z.int().min(0).optional(),
      grace_period: z.int().min(0).optional(),
      last_txid: z.string(),
      resolver: z.string().optional(),
      status: z.string(),
      zonefile: z.string().optional(),
      zonefile_hash: z.string(),
    })
    .describe('A name (or subdomain): owner, last operation, zonefile'),
);

export const BnsZonefile = component(
  'BnsFetchFileZoneResponse',
  z.object({ zonefile: z.string() }).describe('A zonefile ("" until the node sends its content)'),
);

export const BnsSubdomainList = component(
  'GetAllSubdomainsInName',
  z.array(z.string()).describe('Subdomains of a name (fully qualified), by name'),
);

export const BnsNamespaceList = component(
  'BnsGetAllNamespacesResponse',
  z.object({ namespaces: z.array(z.string()) }).describe('Namespaces made ready on chain'),
);

export const BnsNamespaceNames = component(
  'BnsGetAllNamespacesNamesResponse',
  z.array(z.string()).describe('Names of a namespace, by name'),
);

export const BnsNamesOwned = component(
  'BnsNamesOwnByAddressResponse',
  z.object({ names: z.array(z.string()) }).describe('Names and subdomains an address owns'),
);

export const BnsPrice = component(
  'BnsGetPriceResponse',
  z.object({ units: z.string(), amount: z.string() }).describe('A price: `units` STX, `amount` in micro-STX'),
);

export const BnsV2Name = component(
  'BnsV2Name',
  z
    .object({
      name: z.string().describe('Fully qualified name (`name.namespace`)'),
      namespace: z.string(),
      contract_id: z.string().describe('The BNS-V2 contract'),
      id: z.string().describe('The name’s NFT id (uint, decimal)'),
      owner: z.string().nullable(),
      status: z.string().describe('Latest operation: `new-name`, `new-airdrop`, `transfer-name`, `renew-name`'),
      registered_at: z.int().nullable(),
      renewal_height: z.int().nullable().describe('Burn height the name must be renewed by (0: never)'),
      last_txid: z.string(),
      last_block_height: z.int(),
    })
    .describe('A BNS-V2 name'),
);

export const BnsV2NameList = component(
  'BnsV2NameList',
  z.object({ limit: z.int(), offset: z.int(), total: z.int(), results: z.array(BnsV2Name) }).describe('BNS-V2 names, by name'),
);
