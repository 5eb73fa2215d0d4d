/** The REST API on a uWS app: every route family registers itself here. */
import type { Logger } from 'pino';
import { uWS, type TemplatedApp } from '../http/uws.js';
import { Router } from '../http/router.js';
import { mapUnavailable } from '../http/errors.js';
import type { ApiContext } from './context.js';
import { registerStatusRoutes } from './routes/status.js';
import { registerBlocksRoutes } from './routes/blocks.js';
import { registerTxsRoutes } from './routes/txs.js';
import { registerEventsRoutes } from './routes/events.js';
import { registerAddressesRoutes } from './routes/addresses.js';

export interface ApiApp {
  app: TemplatedApp;
  router: Router;
}

export function createApiApp(ctx: ApiContext, opts: { log: Logger; trustProxy?: boolean | number }): ApiApp {
  const app = uWS.App();
  const router = new Router(app, {
    ignoreTrailingSlash: true,
    logger: opts.log,
    trustProxy: opts.trustProxy,
    mapError: mapUnavailable,
  });
  registerStatusRoutes(router, ctx);
  registerBlocksRoutes(router, ctx);
  registerTxsRoutes(router, ctx);
  registerEventsRoutes(router, ctx);
  registerAddressesRoutes(router, ctx);
  return { app, router };
}
