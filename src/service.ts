/**
 * Starts the service for a Config: database (PostgreSQL or embedded PGlite) and migrations, then the observer and/or the
 * REST API depending on API_MODE. Used by `main.ts serve` and by integration tests (random ports).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { connectDatabase, type Database } from './store/connect.js';
import { migrate } from './store/migrate.js';
import { ObserverPipeline } from './observer/pipeline.js';
import { startObserverServer, type ObserverServer } from './observer/server.js';
import { createApiApp } from './api/app.js';
import { listen, type Listening } from './http/router.js';
import { assertNativeUws } from './http/uws.js';

export interface Service {
  db: Database;
  pipeline?: ObserverPipeline;
  observerPort?: number;
  apiPort?: number;
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

export async function startService(config: Config, log: Logger): Promise<Service> {
  assertNativeUws();
  const db = await connectDatabase({
    databaseUrl: config.databaseUrl,
    readUrl: config.databaseReadUrl,
    dataDir: config.dataDir,
  });
  let observer: ObserverServer | undefined;
  let api: { listening: Listening; app: { close?: () => void } } | undefined;
  try {
    const applied = await migrate(db.sql);
    if (applied.length) log.info({ applied }, 'migrations applied');
    let pipeline: ObserverPipeline | undefined;
    if (config.apiMode !== 'api') {
      pipeline = new ObserverPipeline(db.sql, log);
      observer = await startObserverServer({
        host: config.observerHost,
        port: config.observerPort,
        bodyLimit: config.observerBodyLimit,
        pipeline,
        log,
      });
      log.info({ host: config.observerHost, port: observer.listening.port }, 'event observer listening');
    }
    if (config.apiMode !== 'ingest') {
      const { app } = createApiApp(
        { sql: db.read, log, serverVersion: `stacks-pulse v${packageVersion()}` },
        { log, trustProxy: config.trustProxy },
      );
      const listening = await listen(app, config.apiHost, config.apiPort);
      api = { listening, app: app as unknown as { close?: () => void } };
      log.info({ host: config.apiHost, port: listening.port, database: db.kind }, 'API listening');
    }
    return {
      db,
      pipeline,
      observerPort: observer?.listening.port,
      apiPort: api?.listening.port,
      async close() {
        observer?.listening.close();
        api?.listening.close();
        if (pipeline) await pipeline.idle();
        observer?.close();
        api?.app.close?.();
        await db.close();
      },
    };
  } catch (err) {
    observer?.close();
    api?.listening.close();
    await db.close();
    throw err;
  }
}
