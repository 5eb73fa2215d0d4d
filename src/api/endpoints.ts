/**
 * Every declared endpoint of the REST API, in registration order. The router (app.ts), the OpenAPI document
 * (openapi.ts) and the cache policy (cache.ts) all read this one list. A new route family adds its array here.
 */
import type { Endpoint } from './endpoint.js';
import { statusEndpoints } from './routes/extended/status.js';
import { blockEndpoints } from './routes/extended/blocks.js';
import { txEndpoints } from './routes/extended/txs.js';
import { eventEndpoints } from './routes/extended/events.js';
import { addressEndpoints } from './routes/extended/addresses.js';
import { tokenEndpoints } from './routes/extended/tokens.js';
import { balanceEndpoints } from './routes/extended/balances.js';
import { principalV3Endpoints } from './routes/extended/principals.js';
import { burnchainEndpoints } from './routes/extended/burnchain.js';
import { poxCycleEndpoints, poxEndpoints } from './routes/extended/pox.js';
import { accountEndpoints } from './routes/extended/accounts.js';
import { feeEndpoints } from './routes/extended/fees.js';
import { txListEndpoints } from './routes/extended/tx-lists.js';
import { microblockEndpoints } from './routes/extended/microblocks.js';
import { supplyEndpoints } from './routes/extended/supply.js';
import { searchEndpoints } from './routes/extended/search.js';
import { contractListEndpoints } from './routes/extended/contracts.js';
import { burnBlockEndpoints } from './routes/extended/burn-blocks.js';
import { nakamotoEndpoints } from './routes/extended/nakamoto.js';
import { openApiEndpoints } from './routes/docs.js';
import { hookEndpoints } from './routes/extended/hooks.js';
import { bnsEndpoints } from './routes/bns/index.js';
import { rosettaEndpoints } from './routes/rosetta/index.js';
import { healthEndpoints } from './routes/health.js';

/** The document describes every endpoint of this list, its own two included. */
const documentEndpoints = openApiEndpoints(() => ({ endpoints: allEndpoints(), tags: TAGS }));

export function allEndpoints(): readonly Endpoint[] {
  return [
    ...statusEndpoints,
    ...blockEndpoints,
    ...burnBlockEndpoints,
    ...nakamotoEndpoints,
    ...txEndpoints,
    ...txListEndpoints,
    ...microblockEndpoints,
    ...supplyEndpoints,
    ...searchEndpoints,
    ...contractListEndpoints,
    ...eventEndpoints,
    ...addressEndpoints,
    ...accountEndpoints,
    ...feeEndpoints,
    ...balanceEndpoints,
    ...principalV3Endpoints,
    ...tokenEndpoints,
    ...burnchainEndpoints,
    ...poxEndpoints,
    ...poxCycleEndpoints,
    ...bnsEndpoints,
    ...rosettaEndpoints,
    ...hookEndpoints,
    ...documentEndpoints,
    ...healthEndpoints,
  ];
}

export const TAGS = [
  { name: 'Info', description: 'Service status and this documentation' },
  { name: 'Blocks', description: 'Anchored blocks' },
  { name: 'Burn Blocks', description: 'Bitcoin blocks and the Stacks blocks they carry' },
  { name: 'Transactions', description: 'Mined transactions' },
  { name: 'Mempool', description: 'Pending transactions' },
  { name: 'Microblocks', description: 'Microblocks streamed between anchored blocks (before Nakamoto)' },
  { name: 'Search', description: 'Find a block, transaction, contract or address' },
  { name: 'Events', description: 'Transaction events' },
  { name: 'Smart Contracts', description: 'Deployed contracts and their events' },
  { name: 'Accounts', description: 'Balances and transfers of an address or contract' },
  { name: 'Stacking', description: 'PoX events, pool delegations, cycles, signers and stackers' },
  { name: 'Stacking Rewards', description: 'PoX rewards paid on the burn chain and reward slot holders' },
  { name: 'Rosetta', description: 'Rosetta (Mesh) 1.4 Data and Construction API under /rosetta/v1 (all POST)' },
  { name: 'Node RPC', description: 'The Stacks node RPC API, proxied to the node pool' },
  { name: 'Fungible Tokens', description: 'Holders of fungible tokens' },
  { name: 'Non-Fungible Tokens', description: 'NFT holdings, history and mints' },
  { name: 'Fees', description: 'Fee estimates' },
  { name: 'Names', description: 'BNS v1 names, namespaces, zonefiles, subdomains and prices' },
  { name: 'Hooks', description: 'Predicates evaluated on every block, matches POSTed to your service (needs an API key)' },
] as const;

/** Router paths deliberately not in the document: the HTML docs page, its static files, the dashboard, Rosetta's route-not-found. */
export const UNDOCUMENTED_ROUTES = [
  '/docs',
  '/docs/*',
  '/dashboard',
  '/dashboard/*',
  '/rosetta/v1/*',
  // liveness and readiness for load balancers (docs/operations.md)
  '/health',
  '/ready',
  // the legacy PoX events prefixes (routes/extended/pox.ts: any sub-path, answered as the reference does)
  ...Array.from({ length: 10 }, (_, n) => `/extended/v1/pox${n}_events/*`),
];
