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
import type { Sql } from '../store/sql.js';
import type { ObserverPipeline } from '../observer/pipeline.js';
import type { AccessControl } from '../auth/access.js';
import { PushPublisher, RedisPushSink, ShardedRedisPushSink, type PushSink } from './publisher.js';
import { PushServer } from './server.js';
import { InterestRecorder, InterestView } from './interest.js';
import { redisOutageLog } from '../redis-outage.js';
import type { ReplicaMonitor } from '../store/replica.js';
import { forgetRedisClient, watchRedisClient } from '../metrics.js';

export interface Push {
  server?: PushServer;
  publisher?: PushPublisher;
  /** every Redis connection is up (undefined without REDIS_URL) */
  redisReady(): boolean | undefined;
  close(): Promise<void>;
}

export async function startPush(
  config: Pick<
    Config,
    'redisUrl' | 'socketPingIntervalMs' | 'socketPingTimeoutMs' | 'redisKeyPrefix' | 'pushRedisAdapter' | 'pushMaxBuffer' | 'pushRooms' | 'pushResumeWindowMs' | 'pushStartWaitMs'
  >,
  deps: {
    sql: Sql;
    log: Logger;
    app?: TemplatedApp;
    pipeline?: ObserverPipeline;
    /** false on PGlite (one connection: no LISTEN either) */
    snapshots?: boolean;
    /** rate limits / API keys for new Socket.IO and JSON-RPC connections */
    access?: AccessControl;
    /**
     * The read replica this process's REST API reads (DATABASE_READ_URL) and its monitor: messages are delivered once
     * it has replayed them, and resumes read push_messages from it (src/push/replica-gate.ts).
     */
    replica?: { sql: Sql; monitor: ReplicaMonitor; maxHeld: number };
  },
): Promise<Push> {
  const clients: Redis[] = [];
  const closers: (() => Promise<void>)[] = [];
  /** offline: false for the publisher's connection, so nothing published while Redis is down is replayed late */
  const redis = (offline = true) => {
    const c = new Redis(config.redisUrl!, { lazyConnect: false, maxRetriesPerRequest: null, enableOfflineQueue: offline });
    redisOutageLog(deps.log).watch(c); // one line per outage, not one per reconnection attempt
    clients.push(c);
    watchRedisClient('push', c); // its state in the metrics (stacks_pulse_redis_up)
    return c;
  };
  // Which rooms anyone follows (interest.ts): the publisher's view, and this process's clients' rooms.
  let view: InterestView | undefined;
  if (deps.pipeline && config.pushRooms === 'subscribed') {
    view = new InterestView(deps.sql, deps.log, { listen: deps.snapshots ?? true });
    await view.start();
    closers.push(() => view!.close());
  }
  let server: PushServer | undefined;
  if (deps.app) {
    const recorder = new InterestRecorder(deps.sql, deps.log, { windowMs: config.pushResumeWindowMs, local: view });
    closers.push(() => recorder.close());
    server = new PushServer(deps.app, {
      sql: deps.sql,
      log: deps.log,
      pingIntervalMs: config.socketPingIntervalMs,
      pingTimeoutMs: config.socketPingTimeoutMs,
      redis: config.redisUrl
        ? { pub: redis(), sub: redis(), prefix: config.redisKeyPrefix, adapter: config.pushRedisAdapter }
        : undefined,
      maxBufferedBytes: config.pushMaxBuffer,
      access: deps.access,
      interest: recorder,
      replica: deps.replica,
      startWaitMs: config.pushStartWaitMs,
    });
  }
  let publisher: PushPublisher | undefined;
  if (deps.pipeline) {
    let sinks: PushSink[] = server ? [server] : [];
    if (config.redisUrl) {
      // While Redis is down publications fail at once (the messages are in push_messages; the api processes make
      // their clients resume from there): one warning per outage, ingest goes on.
      let failing = false;
      const onError = (err: unknown) => {
        if (failing) return;
        failing = true;
        deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'push: Redis publication failed (clients resume from PostgreSQL)');
      };
      const pub = redis(false);
      pub.on('ready', () => (failing = false));
      if (config.pushRedisAdapter === 'sharded') {
        const sink = new ShardedRedisPushSink(pub, redis(), config.redisKeyPrefix, onError);
        closers.push(() => sink.close());
        sinks = [sink];
      } else sinks = [new RedisPushSink(pub, config.redisKeyPrefix, onError)];
      // without an offline queue, what is published before the connection is up is not sent: wait for it (a while)
      if (pub.status !== 'ready') {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 5000);
          pub.once('ready', () => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    }
    publisher = new PushPublisher(deps.sql, sinks, deps.log, {
      snapshots: deps.snapshots ?? true,
      rooms: view,
      // other processes (through Redis), or this one, may read a replica: stamp each batch with its WAL position
      lsn: (deps.snapshots ?? true) && (!!config.redisUrl || !!deps.replica),
    });
    publisher.attach(deps.pipeline);
    // what a previous run committed but never published goes out before the observer accepts anything new
    await publisher.recover();
  }
  return {
    server,
    publisher,
    redisReady: () => (config.redisUrl ? clients.every((c) => c.status === 'ready') : undefined),
    async close() {
      await publisher?.idle();
      await server?.close();
      for (const c of closers) await c();
      for (const c of clients) forgetRedisClient(c);
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
