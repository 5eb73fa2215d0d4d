import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createFixtureDatabase } from './fixture-db.js';
import type { FixtureLine } from './fixtures.js';

export interface TestService {
  service: Service;
  db: TestDatabase;
  api: string;
  observer: string;
  stop(): Promise<void>;
}

/**
 * The real service (observer + API) on random ports against a fresh PostgreSQL database; with `opts.fixture`, a copy
 * of that recorded stream's imported database (test/helpers/fixture-db.ts): what replaying it first would leave.
 */
export async function startTestService(env: Record<string, string> = {}, opts: { fixture?: string } = {}): Promise<TestService> {
  const db = opts.fixture === undefined ? await createTestDatabase() : await createFixtureDatabase(opts.fixture);
  const config = loadConfig({
    DATABASE_URL: db.url,
    API_HOST: '127.0.0.1',
    API_PORT: '0',
    OBSERVER_PORT: '0',
    LOG_LEVEL: 'silent',
    // The suites send hundreds of requests from one IP; rate limits are tested explicitly (test/auth/auth.test.ts).
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

/**
 * POSTs each line to the observer in order, as a node does, then waits until the projector has applied everything
 * acknowledged (the REST API shows it); returns the statuses.
 */
export async function replay(observer: string, lines: FixtureLine[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const l of lines) {
    const res = await fetch(observer + l.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: l.body });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  await settled(observer);
  return statuses;
}

/**
 * Waits until every message the observer acknowledged is applied (its GET /status: applied_id reaches
 * acknowledged_id), through restarts of the service or its database (a failure the projector reports may heal: it
 * retries). Throws after `timeoutMs`, with the last status seen.
 */
export async function settled(observer: string | (() => string), timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  // Asks again soon at first (most waits are short), then less often: every question is an HTTP request and a query,
  // CPU taken from the projector being waited for on a busy machine.
  let pause = 2;
  for (;;) {
    try {
      const res = await fetch((typeof observer === 'function' ? observer() : observer) + '/status');
      const s = (await res.json()) as { acknowledged_id: number; applied_id: number; failure: { id: number; reason: string } | null };
      last = s;
      if (res.status === 200 && s.applied_id >= s.acknowledged_id) return;
    } catch (err) {
      last = err; // the service restarts, or its database does: keep asking
    }
    if (Date.now() > deadline) throw new Error(`projection not caught up after ${timeoutMs} ms: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 20);
  }
}
