/** The `/v2/*` node RPC proxy and `GET /extended/v1/status/nodes`, wired onto the API app. */
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Router } from '../http/router.js';
import { json } from '../http/response.js';
import type { AccessControl } from '../auth/access.js';
import { NodePool, type PoolOptions } from './pool.js';
import { registerNodeProxy } from './proxy.js';

export interface NodeProxy {
  pool: NodePool;
  close(): void;
}

export function installNodeProxy(
  app: TemplatedApp,
  router: Router,
  opts: {
    urls: string[];
    bodyLimit: number;
    access?: AccessControl;
    trustProxy?: boolean | number;
    timeoutMs?: number;
    pool?: PoolOptions;
    log: Logger;
  },
): NodeProxy {
  const pool = new NodePool(opts.urls, opts.pool);
  pool.onChange = (node, up, reason) => {
    if (up) opts.log.info({ node: node.publicUrl, reason }, 'Stacks node is back up');
    else opts.log.warn({ node: node.publicUrl, reason, retryInMs: (node.nextProbeAt ?? Date.now()) - Date.now() }, 'Stacks node marked down');
  };
  registerNodeProxy(app, {
    pool,
    bodyLimit: opts.bodyLimit,
    timeoutMs: opts.timeoutMs,
    access: opts.access,
    trustProxy: opts.trustProxy,
    log: opts.log,
  });
  router.get('/extended/v1/status/nodes', () => json(200, pool.status()));
  return { pool, close: () => pool.close() };
}
