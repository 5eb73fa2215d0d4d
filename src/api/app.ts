/** The REST API on a uWS app: every route family registers itself here. */
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import { uWS } from '../http/uws.js';
import { Router, type HttpRequest } from '../http/router.js';
import { httpError, type HttpResponse } from '../http/response.js';
import { mapUnavailable } from '../http/errors.js';
import type { ApiContext } from './context.js';
import { registerEndpoints } from './endpoint.js';
import { allEndpoints } from './endpoints.js';
import { registerDocsPage } from './routes/docs.js';
import { registerDashboardRoutes } from './routes/dashboard.js';
import { ApiCache } from './cache.js';
import type { AccessControl } from '../auth/access.js';
import type { Readiness } from './readiness.js';
import { countHttpRequest, metricsEnabled } from '../metrics.js';

export interface ApiApp {
  app: TemplatedApp;
  router: Router;
  /** ETag / hot-answer cache; call cache.invalidate() after each in-process commit. */
  cache: ApiCache;
}

export function createApiApp(
  ctx: ApiContext,
  opts: {
    log: Logger;
    trustProxy?: boolean | number;
    /** API keys and rate limits (src/auth) */
    access?: AccessControl;
    /** the push server's counters (GET /extended/v1/status/push); the server starts after the app */
    pushMetrics?: () => object | undefined;
    /** readiness checks; with a read replica, REST reads answer 503 while it is unusable */
    readiness?: Readiness;
  },
): ApiApp {
  const app = uWS.App();
  const router = new Router(app, {
    ignoreTrailingSlash: true,
    logger: opts.log,
    trustProxy: opts.trustProxy,
    mapError: mapUnavailable,
  });
  registerEndpoints(router, { ...ctx, pushMetrics: opts.pushMetrics ?? ctx.pushMetrics }, allEndpoints());
  // BNS prices are answered here (a read-only call on the node pool), not forwarded by the node proxy's `/v2/*`
  router.claim('/v2/prices/*');
  registerDocsPage(router);
  registerDashboardRoutes(router);
  router.onRequest(rejectNulParameters);
  opts.readiness?.installReplicaGuard(router); // before the rate limits and the cache: a 503 costs the client nothing
  // Prometheus (src/metrics.ts): each answer counted by route template, never the raw path; nothing when metrics are off
  router.onResponse((req, out) => {
    if (metricsEnabled()) countHttpRequest(req.route ?? 'unmatched', req.method, out.status, (performance.now() - (req.receivedAt ?? performance.now())) / 1000);
  });
  opts.access?.install(router); // keys and rate limits: before the cache, so cached answers are counted too
  // Keep this the last onRequest hook (after auth / rate limits): a 304 or a hot hit short-circuits the rest.
  const cache = new ApiCache(ctx.sql);
  cache.install(router);
  return { app, router, cache };
}

/**
 * PostgreSQL text cannot hold a NUL character: a path or query parameter carrying one (`%00`) is refused here with a
 * 400 naming it, rather than reaching SQL as an "invalid byte sequence" error (a 500).
 */
function rejectNulParameters(req: HttpRequest): HttpResponse | void {
  for (const [name, value] of Object.entries(req.params)) {
    if (value.includes('\u0000')) return httpError(400, `params/${name} must not contain NUL characters`);
  }
  for (const [name, value] of req.query) {
    if (name.includes('\u0000') || value.includes('\u0000')) {
      return httpError(400, `querystring/${name.replace(/\u0000/g, '\\u0000')} must not contain NUL characters`);
    }
  }
}
