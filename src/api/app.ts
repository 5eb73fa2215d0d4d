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
import { registerDocsRoutes } from './routes/docs.js';
import { ApiCache } from './cache.js';
import type { AccessControl } from '../auth/access.js';

export interface ApiApp {
  app: TemplatedApp;
  router: Router;
  /** ETag / hot-answer cache; call cache.invalidate() after each in-process commit. */
  cache: ApiCache;
}

export function createApiApp(
  ctx: ApiContext,
  opts: { log: Logger; trustProxy?: boolean | number; /** API keys and rate limits (src/auth) */ access?: AccessControl },
): ApiApp {
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
  registerDocsRoutes(router, ctx);
  opts.access?.install(router); // keys and rate limits: before the cache, so cached answers are counted too
  // Keep this the last onRequest hook (after auth / rate limits): a 304 or a hot hit short-circuits the rest.
  const cache = new ApiCache(ctx.sql);
  cache.install(router);
  return { app, router, cache };
}
