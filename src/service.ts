/**
 * Starts the service for a Config: database (PostgreSQL or embedded PGlite) and migrations, then the observer and/or the
 * REST API depending on API_MODE. Used by `main.ts serve` and by integration tests (random ports).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { CHAIN_ID_TESTNET, type Config } from './config.js';
import { connectDatabase, databaseStartupError, type Database } from './store/connect.js';
import { migrate } from './store/migrate.js';
import { ObserverPipeline } from './observer/pipeline.js';
import { startObserverServer, type ObserverServer } from './observer/server.js';
import { createApiApp } from './api/app.js';
import { listen, type Listening } from './http/router.js';
import { assertNativeUws } from './http/uws.js';
import { startPush, type Push } from './push/index.js';
import { createAccessControl, type Access } from './auth/index.js';
import type { AccessControl } from './auth/access.js';
import { completeBnsBackfill } from './store/bns-write.js';
import { installNodeProxy, type NodeProxy } from './proxy/index.js';
import { StartupError, portStartupError } from './startup-error.js';
import { settleNetwork } from './store/network.js';
import { ReplicaMonitor } from './store/replica.js';
import { Readiness } from './api/readiness.js';
import { startHooks } from './hooks/index.js';
import type { HookRunner } from './hooks/runner.js';
import { createDecoder, defaultDecodeThreads } from './observer/decode-pool.js';
import { enableMetrics } from './metrics.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';

export interface Service {
  db: Database;
  pipeline?: ObserverPipeline;
  observerPort?: number;
  apiPort?: number;
  /** API keys and rate limits (api modes); the push layer calls access.checkConnection(ip, apiKey). */
  access?: AccessControl;
  /** The /v2 node pool (api modes). */
  nodeProxy?: NodeProxy;
  /** Real-time push: Socket.IO + JSON-RPC server (api modes) and publisher (ingest modes). */
  push?: Push;
  /** Hook evaluation and delivery (ingest modes). */
  hooks?: HookRunner;
  /** The Prometheus endpoint's port (METRICS_PORT set). */
  metricsPort?: number;
  close(): Promise<void>;
}

export function packageVersion(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ['..', '../..']) {
    try {
      return (JSON.parse(readFileSync(path.resolve(here, up, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      /* try the next */
    }
  }
  return '0.0.0';
}

/** The addresses a person opens, for the banner `serve` prints once listening. */
export function serviceUrls(config: Pick<Config, 'apiHost' | 'observerHost'>, service: Pick<Service, 'apiPort' | 'observerPort'>) {
  const browsable = (host: string) => (host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host);
  const api = service.apiPort === undefined ? undefined : `http://${browsable(config.apiHost)}:${service.apiPort}`;
  return {
    api: api && `${api}/extended`,
    dashboard: api && `${api}/dashboard`,
    docs: api && `${api}/docs`,
    observer: service.observerPort === undefined ? undefined : `http://${browsable(config.observerHost)}:${service.observerPort}`,
  };
}

export async function startService(config: Config, log: Logger): Promise<Service> {
  assertNativeUws();
  if (config.apiMode !== 'all' && !config.databaseUrl) {
    // The embedded database belongs to one process: an api process and an ingest process cannot share it.
    throw new StartupError(
      `API_MODE=${config.apiMode} needs DATABASE_URL: a split deployment (api and ingest processes) shares one ` +
        'PostgreSQL server; the embedded database (no DATABASE_URL) only runs with API_MODE=all',
    );
  }
  const db = await connectDatabase({
    databaseUrl: config.databaseUrl,
    readUrl: config.databaseReadUrl,
    dataDir: config.dataDir,
    command: config.apiMode === 'all' ? 'serve' : config.apiMode,
  });
  let observer: ObserverServer | undefined;
  let api: { listening: Listening; app: { close?: () => void }; drained(timeoutMs: number): Promise<void> } | undefined;
  let access: Access | undefined;
  let nodeProxy: NodeProxy | undefined;
  let push: Push | undefined;
  let replica: ReplicaMonitor | undefined;
  let hookRunner: HookRunner | undefined;
  let pipeline: ObserverPipeline | undefined;
  let decoder: ReturnType<typeof createDecoder> | undefined;
  let metrics: MetricsServer | undefined;
  try {
    let applied: string[];
    try {
      applied = await migrate(db.sql, undefined, { log });
    } catch (err) {
      throw databaseStartupError(err, config.databaseUrl);
    }
    if (applied.length) {
      log.info({ migrations: applied.length }, 'migrations applied');
      log.debug({ applied }, 'migrations applied (names)');
    }
    // STACKS_CHAIN_ID against the database's recorded network (refuses to start on a mismatch)
    const chainId = await settleNetwork(db.sql, config.chainId);
    // the subdomains of zonefiles a migration backfilled from event_log (sql/0050_bns.sql): parsed in TypeScript
    const subdomainZonefiles = await completeBnsBackfill(db.sql);
    if (subdomainZonefiles) log.info({ zonefiles: subdomainZonefiles }, 'BNS subdomains backfilled');
    // node messages are parsed, validated and decoded in worker threads (DECODE_THREADS), off the main thread
    decoder = config.apiMode !== 'api' ? createDecoder(config.decodeThreads ?? defaultDecodeThreads(), { log }) : undefined;
    if (config.apiMode !== 'api') pipeline = new ObserverPipeline(db.sql, log, { chainId, decoder });
    // hooks: journal written in each projection transaction, evaluator and deliveries beside the projector
    hookRunner = pipeline ? startHooks(config, db.sql, log, pipeline.projector) : undefined;
    // The push publisher is attached (and has published what a previous run left unpublished) before the observer
    // accepts a message: no committed change goes unpublished.
    const startObserver = async () => {
      if (!pipeline) return;
      // the projector first applies what a previous run acknowledged and did not apply, then follows the log
      await pipeline.start();
      observer = await startObserverServer({
        host: config.observerHost,
        port: config.observerPort,
        bodyLimit: config.observerBodyLimit,
        pipeline,
        sql: db.sql,
        log,
      }).catch((err: unknown) => {
        throw portStartupError('OBSERVER_PORT', 'OBSERVER_HOST', config.observerHost, config.observerPort, err);
      });
      log.info({ host: config.observerHost, port: observer.listening.port }, 'event observer listening');
    };
    if (config.apiMode !== 'ingest') {
      access = await createAccessControl(config, db.sql, log);
      if (db.read !== db.sql) {
        // REST reads and push deliveries wait for the replica (src/store/replica.ts, src/push/replica-gate.ts)
        replica = new ReplicaMonitor(db.read, db.sql, { maxLagMs: config.replicaMaxLagMs, pollMs: config.replicaPollMs });
        await replica.start();
        const st = replica.status();
        if (!st.ok) log.warn({ reason: st.reason }, 'read replica not usable yet: REST reads answer 503 until it is');
      }
      const readiness = new Readiness({
        sql: db.sql,
        replica,
        redisReady: config.redisUrl ? () => push?.redisReady() ?? false : undefined,
      });
      const { app, router, cache } = createApiApp(
        {
          sql: db.read,
          log,
          serverVersion: `stacks-pulse v${packageVersion()}`,
          chainId,
          nodes: () => nodeProxy?.pool,
          ingestMetrics: () => pipeline?.projector.metrics(),
          network: chainId === undefined ? undefined : chainId === CHAIN_ID_TESTNET ? 'testnet' : 'mainnet',
          readiness: () => readiness.report(),
          hooks: { sql: db.sql, maxPerKey: config.hooksMaxPerKey, allowedHosts: config.hooksAllowedHosts, kick: () => hookRunner?.kick() },
        },
        { log, trustProxy: config.trustProxy, access: access.access, pushMetrics: () => push?.server?.metrics(), readiness },
      );
      nodeProxy = installNodeProxy(app, router, {
        urls: config.stacksNodeRpcUrls,
        bodyLimit: config.proxyBodyLimit,
        access: access.access,
        log,
      });
      // Hot answers go at once when this process commits; other writers are caught by the version check.
      pipeline?.onCommitted(() => cache.invalidate());
      push = await startPush(config, {
        sql: db.sql,
        log,
        app,
        pipeline,
        snapshots: db.kind !== 'pglite',
        access: access.access,
        replica: replica && { sql: db.read, monitor: replica, maxHeld: config.replicaMaxHeldMessages },
      });
      await startObserver();
      const listening = await listen(app, config.apiHost, config.apiPort).catch((err: unknown) => {
        throw portStartupError('API_PORT', 'API_HOST', config.apiHost, config.apiPort, err);
      });
      api = { listening, app: app as unknown as { close?: () => void }, drained: (ms) => router.drained(ms) };
      log.info({ host: config.apiHost, port: listening.port, database: db.kind }, 'API listening');
    }
    if (!push && pipeline) {
      push = await startPush(config, { sql: db.sql, log, pipeline, snapshots: db.kind !== 'pglite' });
      await startObserver();
    }
    // each hook payload also goes to the push room hook:<uuid> (for the key that created the hook)
    if (hookRunner && push?.publisher) {
      const publisher = push.publisher;
      hookRunner.onPayload = (uuid, deliveryId, payload) => void publisher.publishHookPayload(uuid, deliveryId, payload);
    }
    hookRunner?.start();
    if (config.metricsPort !== undefined) {
      enableMetrics({
        projector: () => pipeline && { appliedId: pipeline.projector.appliedId, newestId: pipeline.projector.newestId },
        push: () => {
          const server = push?.server;
          return server && { ...server.metrics(), rooms: server.roomCount(), replica_held: server.heldMessages, replica_dropped: server.droppedMessages };
        },
        replica: config.databaseReadUrl ? db.read : undefined,
      });
      const port = config.metricsPort;
      metrics = await startMetricsServer(config.metricsHost, port, log).catch((err: unknown) => {
        throw portStartupError('METRICS_PORT', 'METRICS_HOST', config.metricsHost, port, err);
      });
      log.info({ host: config.metricsHost, port: metrics.port }, 'metrics listening (GET /metrics)');
    }
    return {
      db,
      pipeline,
      observerPort: observer?.listening.port,
      apiPort: api?.listening.port,
      access: access?.access,
      nodeProxy,
      push,
      hooks: hookRunner,
      metricsPort: metrics?.port,
      async close() {
        // In order: stop accepting (new node messages are answered 503 and re-sent by the node later), answer the
        // requests already received, let the projector apply what was acknowledged (for a while: the rest stays in the
        // log for the next start), publish what it committed, then close the database.
        observer?.stopAccepting();
        api?.listening.close();
        await Promise.all([observer?.drained(5000), api?.drained(5000)]);
        if (pipeline) await pipeline.close(10_000);
        await hookRunner?.stop();
        await decoder?.close();
        await push?.close();
        await replica?.close();
        observer?.close();
        api?.app.close?.();
        nodeProxy?.close();
        await access?.close();
        await metrics?.close();
        await db.close();
      },
    };
  } catch (err) {
    await hookRunner?.stop();
    // the projector first: it must not be writing when the database closes (no CONNECTION_ENDED before the message)
    await pipeline?.close(5000).catch(() => undefined);
    await decoder?.close();
    await metrics?.close();
    await push?.close();
    await replica?.close();
    observer?.close();
    api?.listening.close();
    nodeProxy?.close();
    await access?.close();
    await db.close();
    throw err;
  }
}
