import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import type { FixtureLine } from './fixtures.js';

export interface TestService {
  service: Service;
  db: TestDatabase;
  api: string;
  observer: string;
  stop(): Promise<void>;
}

/** The real service (observer + API) on random ports against a fresh PostgreSQL database. */
export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    API_HOST: '127.0.0.1',
    API_PORT: '0',
    OBSERVER_PORT: '0',
    LOG_LEVEL: 'silent',
    // The suites send hundreds of requests from one IP; rate limits are tested explicitly (test/auth.test.ts).
    RATE_LIMIT_ANON_RPM: '0',
    ...env,
  });
  const service = await startService(config, createLogger('silent'));
  return {
    service,
    db,
    api: `http://127.0.0.1:${service.apiPort}`,
    observer: `http://127.0.0.1:${service.observerPort}`,
    async stop() {
      await service.close();
      await db.drop();
    },
  };
}

/** POSTs each line to the observer in order, as a node does; returns the statuses. */
export async function replay(observer: string, lines: FixtureLine[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const l of lines) {
    const res = await fetch(observer + l.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: l.body });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}
