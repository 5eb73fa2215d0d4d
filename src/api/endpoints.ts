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
import { openApiEndpoints } from './routes/docs.js';
import { rosettaEndpoints } from './routes/rosetta/index.js';

export function allEndpoints(): readonly Endpoint[] {
  return [...statusEndpoints, ...blockEndpoints, ...txEndpoints, ...eventEndpoints, ...addressEndpoints, ...rosettaEndpoints, ...openApiEndpoints];
}

export const TAGS = [
  { name: 'Info', description: 'Service status and this documentation' },
  { name: 'Blocks', description: 'Anchored blocks' },
  { name: 'Transactions', description: 'Mined transactions' },
  { name: 'Mempool', description: 'Pending transactions' },
  { name: 'Events', description: 'Transaction events' },
  { name: 'Smart Contracts', description: 'Deployed contracts and their events' },
  { name: 'Accounts', description: 'Balances and transfers of an address or contract' },
  { name: 'Rosetta', description: 'Rosetta (Mesh) 1.4 Data and Construction API under /rosetta/v1 (all POST)' },
  { name: 'Node RPC', description: 'The Stacks node RPC API, proxied to the node pool' },
] as const;

/** Router paths deliberately not in the document: the HTML docs page, its static files, the dashboard, Rosetta's route-not-found. */
export const UNDOCUMENTED_ROUTES = ['/docs', '/docs/*', '/dashboard', '/dashboard/*', '/rosetta/v1/*'];
