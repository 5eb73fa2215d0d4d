/** GET /extended/v1/status/push — the real-time push counters of the api process that answers. */
import type { Router } from '../../http/router.js';
import { httpError, json } from '../../http/response.js';

export function registerPushStatusRoute(router: Router, metrics: () => object | undefined): void {
  router.get('/extended/v1/status/push', () => {
    const m = metrics();
    return m ? json(200, m, { 'cache-control': 'no-store' }) : httpError(503, 'The real-time push is not running in this process');
  });
}
