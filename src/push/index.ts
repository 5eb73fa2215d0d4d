/**
 * Wiring of the real-time push for one process: the push server on the API app (api modes), the publisher on the
 * observer pipeline (ingest modes), and Redis between them when REDIS_URL is set.
 *
 *   all, no Redis     publisher → PushServer.deliver (in-process)
 *   with Redis        publisher → @socket.io/redis-emitter + PUSH_CHANNEL → every api process's
 *                     @socket.io/redis-adapter (Socket.IO rooms) and PUSH_CHANNEL subscriber (JSON-RPC, resume)
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Config } from '../config.js';
import type { Sql } from '../store/connect.js';
import type { ObserverPipeline } from '../observer/pipeline.js';
import { PushPublisher, RedisPushSink, type PushSink } from './publisher.js';
import { PushServer } from './server.js';

export { PushServer } from './server.js';
export { PushPublisher } from './publisher.js';

export interface Push {
  server?: PushServer;
  publisher?: PushPublisher;
  close(): Promise<void>;
}

export async function startPush(
  config: Pick<Config, 'redisUrl' | 'socketPingIntervalMs' | 'socketPingTimeoutMs'>,
  deps: { sql: Sql; log: Logger; app?: TemplatedApp; pipeline?: ObserverPipeline; /** false on PGlite (one connection) */ snapshots?: boolean },
): Promise<Push> {
  const clients: Redis[] = [];
  const redis = () => {
    const c = new Redis(config.redisUrl!, { lazyConnect: false, maxRetriesPerRequest: null });
    c.on('error', (err) => deps.log.warn({ err: err.message }, 'redis connection error'));
    clients.push(c);
    return c;
  };
  let server: PushServer | undefined;
  if (deps.app) {
    server = new PushServer(deps.app, {
      sql: deps.sql,
      log: deps.log,
      pingIntervalMs: config.socketPingIntervalMs,
      pingTimeoutMs: config.socketPingTimeoutMs,
      redis: config.redisUrl ? { pub: redis(), sub: redis() } : undefined,
    });
  }
  let publisher: PushPublisher | undefined;
  if (deps.pipeline) {
    const sinks: PushSink[] = config.redisUrl ? [new RedisPushSink(redis())] : server ? [server] : [];
    publisher = new PushPublisher(deps.sql, sinks, deps.log, { snapshots: deps.snapshots ?? true });
    publisher.attach(deps.pipeline);
  }
  return {
    server,
    publisher,
    async close() {
      await publisher?.idle();
      await server?.close();
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
