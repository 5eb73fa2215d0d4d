import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import type { NodePool } from '../proxy/pool.js';
import type { Network } from '../config.js';
import type { ProjectorMetrics } from '../projector/metrics.js';
import type { ReadinessReport } from './readiness.js';

/** What every endpoint handler gets. */
export interface ApiContext {
  /** read connection (DATABASE_READ_URL or the main one) */
  sql: Sql;
  log: Logger;
  serverVersion: string;
  /**
   * the chain id settled at start-up (STACKS_CHAIN_ID or the database's recorded network; 1 is mainnet), undefined
   * until a network is known. Routes that print network-dependent addresses read it.
   */
  chainId?: number;
  /** the push server's counters (GET /extended/v1/status/push); undefined where push does not run */
  pushMetrics?: () => object | undefined;
  /** this process's projector counters (GET /extended/v1/status/ingest); undefined where no observer runs */
  ingestMetrics?: () => ProjectorMetrics | undefined;
  /** the Stacks node pool, for the API's own read-only calls (BNS prices); undefined: no node */
  nodes?: () => NodePool | undefined;
  /** which BNS boot contract the read-only calls use (default mainnet) */
  network?: Network;
  /** GET /ready: this process's checks (src/api/readiness.ts); undefined: always ready */
  readiness?: () => Promise<ReadinessReport>;
  /** hooks (src/api/routes/extended/hooks.ts): the primary database and the HOOKS_* limits; undefined: not served */
  hooks?: {
    sql: Sql;
    maxPerKey: number;
    allowedHosts: string[];
    /** wakes this process's hook evaluator (other processes poll) */
    kick?: () => void;
  };
}
