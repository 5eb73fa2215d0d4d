/**
 * GET /metrics in the Prometheus text format, on a port of its own (METRICS_PORT, on METRICS_HOST: 127.0.0.1 unless
 * set), off by default. node:http rather than uWS: it answers one scrape every few seconds on an internal port, apart
 * from the public API's router and its hooks (rate limits, CORS, API keys), and a slow scrape (the replica's lag is
 * queried) never competes with API requests for the uWS loop's attention.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { registry } from './metrics.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'application/json; charset=utf-8', headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') {
      send(404, JSON.stringify({ error: 'Not Found', message: 'this port serves GET /metrics only' }));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, JSON.stringify({ error: 'Method Not Allowed', message: 'GET /metrics' }), undefined, { allow: 'GET, HEAD' });
      return;
    }
    registry
      .metrics()
      .then((text) => send(200, text, registry.contentType))
      .catch((err: unknown) => {
        log.warn({ err }, 'metrics collection failed');
        send(500, JSON.stringify({ error: 'Internal Server Error', message: `metrics collection failed: ${(err as Error).message}` }));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
