/** The event observer's HTTP server (uWS): the node POSTs here; nothing else should be able to reach it. */
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import { uWS } from '../http/uws.js';
import { Router, listen, type Listening } from '../http/router.js';
import { json } from '../http/response.js';
import { mapUnavailable } from '../http/errors.js';
import { countObserverAck } from '../metrics.js';
import type { ObserverPipeline } from './pipeline.js';
import type { Sql } from '../store/sql.js';
import { projectorRow } from '../store/event-log.js';
import { ingestStatus } from '../projector/status.js';

export interface ObserverServer {
  app: TemplatedApp;
  listening: Listening;
  /** Resolves once every request received has been answered (or after `timeoutMs`). */
  drained(timeoutMs: number): Promise<void>;
  /**
   * Shutdown, first step: stops listening, and messages arriving on connections still open (a node keeps its
   * connection alive) are answered 503 without being processed: the node sends them again to the next process.
   */
  stopAccepting(): void;
  close(): void;
}

export async function startObserverServer(opts: {
  host: string;
  port: number;
  bodyLimit: number;
  pipeline: ObserverPipeline;
  sql: Sql;
  log: Logger;
}): Promise<ObserverServer> {
  const app = uWS.App();
  // the node-facing port answers a wrong method as the reference does (404): only the API port has 405s
  const router = new Router(app, { ignoreTrailingSlash: true, bodyLimit: opts.bodyLimit, cors: false, logger: opts.log, mapError: mapUnavailable, methodNotAllowed: false });
  // Prometheus (src/metrics.ts): every answer to a node message, whatever produced it (200, 400, 503 …)
  router.onResponse((req, out) => {
    if (req.method === 'POST') countObserverAck(out.status);
  });
  router.get('/', () =>
    json(200, { status: 'ready', msg: 'API event server listening for core-node POST messages' }),
  );
  // Where ingestion stands (the same answer as the API's GET /extended/v1/status/ingest): for operators on the
  // observer's private port, and for tools that wait until what they sent is applied.
  router.get('/status', async () => {
    try {
      return json(200, ingestStatus(await projectorRow(opts.sql), opts.pipeline.projector.metrics()), { 'cache-control': 'no-store' });
    } catch (err) {
      return json(503, { statusCode: 503, error: 'Service Unavailable', message: `database unavailable: ${(err as Error).message}` });
    }
  });
  /** performance.now() of stopAccepting(): requests whose head arrived later are refused */
  let stoppedAt = Infinity;
  router.post('/*', async (req) => {
    if ((req.receivedAt ?? performance.now()) >= stoppedAt) {
      return json(503, { statusCode: 503, error: 'Service Unavailable', message: 'shutting down: send this message again later' });
    }
    const reply = await opts.pipeline.handle(req.path, req.body ?? Buffer.alloc(0));
    return json(reply.status, reply.body);
  });
  const listening = await listen(app, opts.host, opts.port);
  return {
    app,
    listening,
    drained: (timeoutMs) => router.drained(timeoutMs),
    stopAccepting() {
      stoppedAt = performance.now();
      listening.close();
    },
    close() {
      listening.close();
      (app as unknown as { close?: () => void }).close?.();
    },
  };
}
