import type { Logger } from 'pino';
import type { Sql } from '../store/connect.js';
import type { NodePool } from '../proxy/pool.js';

/** What every endpoint handler gets. */
export interface ApiContext {
  /** read connection (DATABASE_READ_URL or the main one) */
  sql: Sql;
  log: Logger;
  serverVersion: string;
  /** the push server's counters (GET /extended/v1/status/push); undefined where push does not run */
  pushMetrics?: () => object | undefined;
  /** STACKS_CHAIN_ID, when configured (Rosetta's network identifier; else the database's recorded network) */
  chainId?: number;
  /** the Stacks node pool (STACKS_NODE_RPC_URLS), once the proxy is installed; undefined without one */
  nodePool?: () => NodePool | undefined;
}
