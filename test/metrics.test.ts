/**
 * GET /metrics (METRICS_PORT): the real service ingests a fixture, answers REST requests and pushes to a Socket.IO
 * client, with Redis and a read connection (DATABASE_READ_URL); the scrape must count exactly what happened.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService, type Service } from '../src/service.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { readFixture } from './helpers/fixtures.js';
import { replay, startTestService } from './helpers/service.js';
import { recordingSocket } from './helpers/push-clients.js';

const lines = readFixture('mocknet');
let db: TestDatabase;
let service: Service;
let api: string;
let observer: string;
let metricsUrl: string;

/** One sample's value: `name{labels}` with the labels given (in any order; others allowed), undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await fetch(`${metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATABASE_READ_URL: db.url, // a second pool on the same server: not in recovery, so its replay lag is 0
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `sp-metrics-${randomBytes(4).toString('hex')}`,
    API_HOST: '127.0.0.1',
    API_PORT: '0',
    OBSERVER_PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_ANON_RPM: '0',
  });
  service = await startService(config, createLogger('silent'));
  api = `http://127.0.0.1:${service.apiPort}`;
  observer = `http://127.0.0.1:${service.observerPort}`;
  metricsUrl = `http://127.0.0.1:${service.metricsPort}`;
}, 300_000);

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

describe('metrics', () => {
  it('counts requests per route template, acknowledgements, projection, push, Redis, pools and replica lag', async () => {
    const client = await recordingSocket(api, { rooms: ['block'] });
    try {
      const statuses = await replay(observer, lines);
      await client.sync();
      const blocks = client.got.filter((m) => m.event === 'block');
      expect(blocks.length).toBeGreaterThan(0);

      const blockList = 3;
      for (let i = 0; i < blockList; i++) expect((await fetch(`${api}/extended/v1/block?limit=1`)).status).toBe(200);
      const missing = 2;
      for (let i = 0; i < missing; i++) {
        const tx = '0x' + randomBytes(32).toString('hex'); // a different raw path each time: one route template
        expect((await fetch(`${api}/extended/v1/tx/${tx}`)).status).toBe(404);
      }
      expect((await fetch(`${api}/extended/v1/tx/not-a-hash`)).status).toBe(400);

      const text = await scrape();
      const get = (route: string, status: string) => sample(text, 'stacks_pulse_http_requests_total', { route, method: 'GET', status });
      expect(get('/extended/v1/block', '200')).toBe(blockList);
      expect(get('/extended/v1/tx/:tx_id', '404')).toBe(missing);
      expect(get('/extended/v1/tx/:tx_id', '400')).toBe(1);
      expect(sample(text, 'stacks_pulse_http_request_duration_seconds_count', { route: '/extended/v1/block', method: 'GET', status: '200' })).toBe(blockList);
      // no raw path is a label value
      expect(text).not.toMatch(/route="\/extended\/v1\/tx\/0x/);

      const ok = statuses.filter((s) => s === 200).length;
      expect(ok).toBe(lines.length);
      expect(sample(text, 'stacks_pulse_observer_acknowledgements_total', { status: '200' })).toBe(ok);
      expect(sample(text, 'stacks_pulse_observer_acknowledgements_total', { status: '503' })).toBeUndefined();

      const [{ n: logged }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`;
      expect(sample(text, 'stacks_pulse_projector_applied_messages_total')).toBe(logged);
      expect(sample(text, 'stacks_pulse_projector_backlog_messages')).toBe(0);
      expect(sample(text, 'stacks_pulse_projection_lag_seconds_count')).toBe(logged);

      expect(sample(text, 'stacks_pulse_push_connections', { protocol: 'socket.io' })).toBe(1);
      expect(sample(text, 'stacks_pulse_push_connections', { protocol: 'json-rpc' })).toBe(0);
      expect(sample(text, 'stacks_pulse_push_rooms')).toBe(1);
      // only the followed room gets messages: every message delivered is one the client received
      expect(sample(text, 'stacks_pulse_push_messages_total')).toBe(client.got.filter((m) => m.event !== 'connect').length);
      expect(sample(text, 'stacks_pulse_push_slow_client_disconnects_total')).toBe(0);

      expect(sample(text, 'stacks_pulse_redis_up', { client: 'push' })).toBe(1);
      expect(sample(text, 'stacks_pulse_redis_up', { client: 'rate-limit' })).toBe(1);
      expect(sample(text, 'stacks_pulse_db_pool_max_connections', { pool: 'primary' })).toBe(10);
      expect(sample(text, 'stacks_pulse_db_pool_max_connections', { pool: 'replica' })).toBe(10);
      expect(sample(text, 'stacks_pulse_db_in_flight', { pool: 'primary' })).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'stacks_pulse_replica_replay_lag_seconds')).toBe(0);
      expect(sample(text, 'stacks_pulse_replica_replay_lag_bytes')).toBe(0);
      // everything replayed (the read pool is the primary itself): nothing waits, nothing was dropped
      expect(sample(text, 'stacks_pulse_push_replica_held_messages')).toBe(0);
      expect(sample(text, 'stacks_pulse_push_replica_dropped_messages')).toBe(0);
      expect(sample(text, 'stacks_pulse_rate_limit_rejections_total')).toBe(0);
      expect(sample(text, 'stacks_pulse_process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      client.socket.disconnect();
    }
  }, 300_000);

  it('serves GET /metrics only', async () => {
    const other = await fetch(`${metricsUrl}/`);
    expect(other.status).toBe(404);
    await other.arrayBuffer();
    const post = await fetch(`${metricsUrl}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.arrayBuffer();
  });

  it('is off by default: no metrics port', async () => {
    const plain = await startTestService();
    try {
      expect(plain.service.metricsPort).toBeUndefined();
    } finally {
      await plain.stop();
    }
  }, 300_000);
});
