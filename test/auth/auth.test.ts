/**
 * API keys and rate limits: the sliding window (no double burst at a boundary, limits reset) in memory and in
 * Redis; the service's headers, 429s, 401s for unknown and revoked keys, keys raising the limit, the /v2 proxy and
 * push connections sharing the budget, the observer never limited; and two `api` processes sharing one Redis budget,
 * with keys made and revoked through the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../../src/auth/rate-limit.js';
import { createKey, hashKey } from '../../src/auth/keys.js';
import { listKeys, revokeKey } from '../../src/store/api-keys.js';
import { clientIp } from '../../src/auth/access.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const execFileP = promisify(execFile);

/** A fresh documentation-range-like address, so runs and tests never share a bucket. */
const randomIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

async function call(url: string, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, h: res.headers };
}

describe('sliding window rate limiter', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    await redis.quit();
  });

  const stores: [string, (windowMs: number) => RateLimiter][] = [
    ['in-process', (windowMs) => new MemoryRateLimiter({ windowMs })],
    ['Redis', (windowMs) => new RedisRateLimiter(redis, { windowMs, prefix: `sp-test:${randomBytes(4).toString('hex')}:` })],
  ];

  for (const [name, make] of stores) {
    it(`${name}: counts down, refuses over the limit, and never allows a double burst across a boundary`, async () => {
      const rl = make(1000);
      const t0 = Date.now();
      const first = [];
      for (let i = 0; i < 3; i++) first.push(await rl.consume('b', 5));
      expect(first.map((r) => [r.allowed, r.remaining, r.limit])).toEqual([
        [true, 4, 5],
        [true, 3, 5],
        [true, 2, 5],
      ]);
      expect(first[0].resetMs).toBeGreaterThan(900);
      expect(first[0].resetMs).toBeLessThanOrEqual(1000);
      await delay(500 - (Date.now() - t0));
      const second = [await rl.consume('b', 5), await rl.consume('b', 5), await rl.consume('b', 5)];
      expect(second.map((r) => r.allowed)).toEqual([true, true, false]);
      expect(second[2].remaining).toBe(0);
      // The refused request waits for the oldest of the window to age out (at t0 + 1000).
      expect(second[2].resetMs).toBeGreaterThan(350);
      expect(second[2].resetMs).toBeLessThanOrEqual(550);
      expect((await rl.consume('other', 5)).allowed).toBe(true);
      // Just past the first requests' window only those 3 slots are free: a fixed window would allow 5 here.
      await delay(1060 - (Date.now() - t0));
      const third = [];
      for (let i = 0; i < 4; i++) third.push((await rl.consume('b', 5)).allowed);
      expect(third).toEqual([true, true, true, false]);
      // And once everything has aged out, the full limit is back (limits reset).
      await delay(2100 - (Date.now() - t0));
      const fourth = [];
      for (let i = 0; i < 6; i++) fourth.push(await rl.consume('b', 5));
      expect(fourth.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      expect(fourth[4].remaining).toBe(0);
      await rl.close();
    });
  }

  it('Redis: many concurrent consumers never exceed the limit', async () => {
    const a = new RedisRateLimiter(redis, { prefix: 'sp-test-c:' });
    const b = new RedisRateLimiter(redis, { prefix: 'sp-test-c:' });
    const bucket = `ip:${randomIp()}`;
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).consume(bucket, 25)));
    expect(results.filter((r) => r.allowed)).toHaveLength(25);
    expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.resetMs > 0)).toBe(true);
  });

  it('falls back to in-process counting when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => {});
    const rl = new RedisRateLimiter(dead, { ownsClient: true });
    const r = [await rl.consume('x', 2), await rl.consume('x', 2), await rl.consume('x', 2)];
    expect(r.map((x) => x.allowed)).toEqual([true, true, false]);
    await rl.close();
  });
});

describe('client address', () => {
  it('uses the socket unless TRUST_PROXY, then the X-Forwarded-For hop it names', () => {
    expect(clientIp('::ffff:1.2.3.4', '9.9.9.9', false)).toBe('1.2.3.4');
    expect(clientIp('1.2.3.4', '7.7.7.7, 8.8.8.8', true)).toBe('7.7.7.7');
    expect(clientIp('1.2.3.4', '7.7.7.7, 8.8.8.8', 1)).toBe('8.8.8.8');
    expect(clientIp('1.2.3.4', '7.7.7.7, 8.8.8.8', 2)).toBe('7.7.7.7');
    expect(clientIp('1.2.3.4', '7.7.7.7', 5)).toBe('7.7.7.7');
    expect(clientIp('1.2.3.4', undefined, true)).toBe('1.2.3.4');
  });
});

describe('API keys and limits in the service', () => {
  let svc: TestService;
  let node: http.Server;
  let nodeHits = 0;
  beforeAll(async () => {
    node = http.createServer((req, res) => {
      nodeHits++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, key: req.headers['x-api-key'] ?? null }));
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', () => r()));
    svc = await startTestService({
      RATE_LIMIT_ANON_RPM: '5',
      RATE_LIMIT_EXEMPT: 'none', // the test's requests come from loopback, exempt by default
      RATE_LIMIT_KEY_RPM: '8',
      TRUST_PROXY: 'true',
      STACKS_NODE_RPC_URLS: `http://127.0.0.1:${(node.address() as net.AddressInfo).port}`,
    });
  });
  afterAll(async () => {
    await svc?.stop();
    node?.closeAllConnections();
    await new Promise<void>((r) => node.close(() => r()));
  });

  it('counts anonymous requests per client IP with RateLimit headers, then 429 with Retry-After and a JSON error', async () => {
    const ip = randomIp();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(`${svc.api}/extended`, { 'x-forwarded-for': ip });
      expect(r.status).toBe(200);
      expect(r.h.get('ratelimit-limit')).toBe('5');
      const reset = Number(r.h.get('ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      expect(r.h.get('access-control-expose-headers')).toMatch(/RateLimit-Remaining/);
      remaining.push(r.h.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await call(`${svc.api}/extended/v1/block`, { 'x-forwarded-for': ip });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect(refused.body.message).toMatch(/5 requests per minute/);
    const retry = Number(refused.h.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.h.get('ratelimit-remaining')).toBe('0');
    expect(refused.h.get('content-type')).toMatch(/^application\/json/);
    // unknown routes count too, and another client is not affected
    expect((await call(`${svc.api}/nope`, { 'x-forwarded-for': ip })).status).toBe(429);
    expect((await call(`${svc.api}/extended`, { 'x-forwarded-for': randomIp() })).status).toBe(200);
  });

  it('applies the same budget to the /v2 proxy, whose answers carry the headers', async () => {
    const ip = randomIp();
    for (let i = 0; i < 3; i++) expect((await call(`${svc.api}/extended`, { 'x-forwarded-for': ip })).status).toBe(200);
    const before = nodeHits;
    const proxied = await call(`${svc.api}/v2/pox`, { 'x-forwarded-for': ip });
    expect(proxied.status).toBe(200);
    expect(proxied.body.url).toBe('/v2/pox');
    expect(proxied.h.get('ratelimit-remaining')).toBe('1');
    expect(proxied.h.get('ratelimit-limit')).toBe('5');
    expect((await call(`${svc.api}/v2/pox`, { 'x-forwarded-for': ip })).status).toBe(200);
    const refused = await call(`${svc.api}/v2/transactions`, { 'x-forwarded-for': ip }, { method: 'POST', body: 'abc' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect(Number(refused.h.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(nodeHits - before).toBe(2);
  });

  it('lets a key past the anonymous limit (default or its own rpm), and never passes the key to the node', async () => {
    const ip = randomIp();
    const { key } = await createKey(svc.db.sql, `svc-default-${randomBytes(3).toString('hex')}`);
    const { key: big } = await createKey(svc.db.sql, `svc-big-${randomBytes(3).toString('hex')}`, 12);
    const { key: unlimited } = await createKey(svc.db.sql, `svc-unl-${randomBytes(3).toString('hex')}`, 0);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    const r = await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': big });
    expect(r.h.get('ratelimit-limit')).toBe('12');
    expect(r.h.get('ratelimit-remaining')).toBe('11');
    const viaProxy = await call(`${svc.api}/v2/info`, { 'x-forwarded-for': ip, 'x-api-key': big });
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body.key).toBeNull();
    expect(viaProxy.h.get('ratelimit-remaining')).toBe('10');
    for (let i = 0; i < 20; i++) {
      const u = await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': unlimited });
      expect(u.status).toBe(200);
      expect(u.h.get('ratelimit-limit')).toBeNull();
    }
    // the keyed requests did not use the anonymous budget of that IP
    expect((await call(`${svc.api}/extended`, { 'x-forwarded-for': ip })).h.get('ratelimit-remaining')).toBe('4');
    // last_used_at is recorded, and only hashes are stored
    const rows = await listKeys(svc.db.sql);
    expect(rows.find((k) => k.rpm === 12)?.last_used_at).toBeInstanceOf(Date);
    const stored = await svc.db.sql`SELECT key_hash FROM api_keys`;
    expect(stored.map((s) => s.key_hash)).toContain(hashKey(big));
    expect(JSON.stringify(stored)).not.toContain(big);
  });

  it('refuses unknown, empty and revoked keys with 401 everywhere, never falling back to anonymous', async () => {
    const ip = randomIp();
    for (const bad of ['sp_nope', ' ']) {
      const r = await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': bad });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(r.body.message).toMatch(/API key is invalid/);
    }
    expect((await call(`${svc.api}/v2/pox`, { 'x-forwarded-for': ip, 'x-api-key': 'sp_nope' })).status).toBe(401);
    const name = `svc-rev-${randomBytes(3).toString('hex')}`;
    const { key } = await createKey(svc.db.sql, name);
    expect((await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': key })).status).toBe(200);
    expect(await revokeKey(svc.db.sql, name)).toBe(true);
    expect(await revokeKey(svc.db.sql, name)).toBe(false);
    // within the key cache's lifetime (5 s) the revocation reaches the process
    const t0 = Date.now();
    let last: Awaited<ReturnType<typeof call>>;
    for (;;) {
      last = await call(`${svc.api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': key });
      if (last.status !== 200 || Date.now() - t0 > 8000) break;
      await delay(1000); // slowly: this key may make 8 requests a minute
    }
    expect(last.status).toBe(401);
    expect(last.body.message).toMatch(/revoked/);
    expect((await call(`${svc.api}/v2/pox`, { 'x-forwarded-for': ip, 'x-api-key': key })).status).toBe(401);
  });

  it('gives the push layer checkConnection(ip, apiKey) on the same budget', async () => {
    const access = svc.service.access!;
    const ip = randomIp();
    const d = [];
    for (let i = 0; i < 6; i++) d.push(await access.checkConnection(ip, undefined));
    expect(d.map((x) => x.allowed)).toEqual([true, true, true, true, true, false]);
    const refused = d[5];
    if (refused.allowed) throw new Error('unreachable');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await call(`${svc.api}/extended`, { 'x-forwarded-for': ip })).status).toBe(429);
    const bad = await access.checkConnection(randomIp(), 'sp_unknown');
    expect(bad.allowed).toBe(false);
    if (!bad.allowed) expect(bad.status).toBe(401);
  });

  it('never limits the observer port', async () => {
    for (let i = 0; i < 12; i++) {
      const r = await fetch(`${svc.observer}/`, { headers: { 'x-forwarded-for': '10.0.0.1' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBeNull();
      await r.text();
    }
  });
});

describe('two api processes sharing Redis, keys through the CLI', () => {
  let build: Build;
  let svc: TestService; // owns the database (migrated); its own API is not used here
  let a: ChildService;
  let b: ChildService;
  const cli = async (...args: string[]) => {
    try {
      const r = await execFileP(process.execPath, [build.main, 'keys', ...args], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: svc.db.url, LOG_LEVEL: 'warn' },
      });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    [build, svc] = await Promise.all([buildService(), startTestService()]);
    const env = { DATABASE_URL: svc.db.url, REDIS_URL: REDIS_URL, RATE_LIMIT_ANON_RPM: '6', RATE_LIMIT_KEY_RPM: '9', TRUST_PROXY: '1', RATE_LIMIT_EXEMPT: 'none' };
    [a, b] = await Promise.all([spawnService(build.main, 'api', env), spawnService(build.main, 'api', env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await svc?.stop();
    build?.remove();
  });

  it('holds one anonymous budget across both processes', async () => {
    const ip = randomIp();
    const seen: [number, string | null][] = [];
    for (let i = 0; i < 8; i++) {
      const r = await call(`${(i % 2 ? b : a).api}/extended`, { 'x-forwarded-for': ip });
      seen.push([r.status, r.h.get('ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      [200, '5'],
      [200, '4'],
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
      [429, '0'],
    ]);
  });

  it('creates, lists and revokes keys with the CLI; a key raises the limit in both processes', async () => {
    const name = `cli-${randomBytes(3).toString('hex')}`;
    const created = await cli('create', '--name', name, '--rpm', '10');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sp_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toMatch(/not shown again/);
    const duplicate = await cli('create', '--name', name);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/^stacks-pulse keys create: error: /);

    const listed = await cli('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${name}\\s+\\S+\\s+-\\s+10\\s+active$`, 'm'));
    expect(listed.stdout).not.toContain(key);
    expect(a.output() + b.output()).not.toContain(key);

    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await call(`${(i % 2 ? b : a).api}/extended`, { 'x-forwarded-for': ip, 'x-api-key': key })).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);

    const revoked = await cli('revoke', name);
    expect(revoked.code).toBe(0);
    const again = await cli('revoke', name);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`stacks-pulse keys revoke: error: no active key named "${name}"\n`);
    const t0 = Date.now();
    let sa = 0;
    let sb = 0;
    while (Date.now() - t0 < 8000) {
      sa = (await call(`${a.api}/extended`, { 'x-api-key': key })).status;
      sb = (await call(`${b.api}/extended`, { 'x-api-key': key })).status;
      if (sa === 401 && sb === 401) break;
      await delay(250);
    }
    expect([sa, sb]).toEqual([401, 401]);
    expect((await cli('list')).stdout).toMatch(new RegExp(`^${name}\\s.*revoked`, 'm'));
  });
});
