/** The event observer's HTTP server (uWS): the node POSTs here; nothing else should be able to reach it. */
import type { Logger } from 'pino';
import { uWS, type TemplatedApp } from '../http/uws.js';
import { Router, listen, type Listening } from '../http/router.js';
import { json } from '../http/response.js';
import type { ObserverPipeline } from './pipeline.js';

export interface ObserverServer {
  app: TemplatedApp;
  listening: Listening;
  /** Resolves once every request received has been answered (or after `timeoutMs`). */
  drained(timeoutMs: number): Promise<void>;
  close(): void;
}

export async function startObserverServer(opts: {
  host: string;
  port: number;
  bodyLimit: number;
  pipeline: ObserverPipeline;
  log: Logger;
}): Promise<ObserverServer> {
  const app = uWS.App();
  const router = new Router(app, { ignoreTrailingSlash: true, bodyLimit: opts.bodyLimit, cors: false, logger: opts.log });
  router.get('/', () =>
    json(200, { status: 'ready', msg: 'API event server listening for core-node POST messages' }),
  );
  router.post('/*', async (req) => {
    const reply = await opts.pipeline.handle(req.path, req.body ?? Buffer.alloc(0));
    return json(reply.status, reply.body);
  });
  const listening = await listen(app, opts.host, opts.port);
  return {
    app,
    listening,
    drained: (timeoutMs) => router.drained(timeoutMs),
    close() {
      listening.close();
      (app as unknown as { close?: () => void }).close?.();
    },
  };
}
