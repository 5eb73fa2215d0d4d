/**
 * HTTP caching (src/api/cache.ts): ETag / If-None-Match and the in-memory hot answers never serve anything older than
 * the last committed observer message — in the process that ingests (onCommitted) and in an API-only "process" on the
 * same database that learns about commits only through the cache_version check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { startTestService, type TestService, settled } from '../helpers/service.js';
import { get } from '../helpers/http.js';
import { readFixture, type FixtureLine } from '../helpers/fixtures.js';
import { createApiApp } from '../../src/api/app.js';
import { listen, type HttpRequest, type Listening } from '../../src/http/router.js';
import { createLogger } from '../../src/logger.js';
import { etagMatches, type ApiCache } from '../../src/api/cache.js';
import { connectDatabase } from '../../src/store/connect.js';
import type { Sql } from '../../src/store/sql.js';

const FIXTURE = 'fuzzed-transactions-1';

interface Truth {
  height: number;
  indexBlockHash: string;
  blocks: number;
  pending: number;
}

let svc: TestService;
let lines: FixtureLine[];
let other: { url: string; cache: ApiCache; listening: Listening; sql: Sql; close(): void };
let truthSql: Sql;

async function truth(): Promise<Truth> {
  const [b] = await truthSql<{ h: number | null; ibh: string | null; n: number }[]>`
    SELECT max(block_height)::int AS h, count(*)::int AS n,
      (SELECT index_block_hash FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1) AS ibh
    FROM blocks WHERE canonical`;
  const [m] = await truthSql<{ n: number }[]>`SELECT count(*)::int AS n FROM mempool_txs WHERE NOT pruned`;
  return { height: b.h ?? -1, indexBlockHash: b.ibh ?? '', blocks: b.n, pending: m.n };
}

/** Every hot answer, checked against the database. */
async function checkHot(base: string, t: Truth): Promise<string> {
  const status = await get(base, '/extended', { status: 200 });
  if (t.height >= 1) {
    expect(status.body.chain_tip?.block_height).toBe(t.height);
    expect(status.body.chain_tip?.index_block_hash).toBe(t.indexBlockHash);
  }
  const latest = await get(base, '/extended/v2/blocks/latest');
  if (t.height >= 1) {
    expect(latest.status).toBe(200);
    expect(JSON.parse(latest.text).height).toBe(t.height);
  }
  const v2 = await get(base, '/extended/v2/blocks?limit=5', { status: 200 });
  const v1 = await get(base, '/extended/v1/block?limit=30', { status: 200 });
  expect(v2.body.total).toBe(v1.body.total);
  if (t.height >= 1) {
    expect(v2.body.results[0].height).toBe(t.height);
    expect(v1.body.results[0].height).toBe(t.height);
  }
  const stats = await get(base, '/extended/v1/tx/mempool/stats', { status: 200 });
  const counted = Object.values(stats.body.tx_type_counts as Record<string, number>).reduce((a, b) => a + b, 0);
  expect(counted).toBe(t.pending);
  expect(status.etag).toMatch(/^"[0-9a-f]+-\d+"$/);
  return status.etag!;
}

beforeAll(async () => {
  lines = readFixture(FIXTURE);
  svc = await startTestService();
  truthSql = postgres(svc.db.url, { max: 1, onnotice: () => {} }) as unknown as Sql;
  // A second API on the same database with its own connection and no onCommitted wiring: what an `api`-only process
  // sees while another process ingests.
  const sql = (await connectDatabase({ databaseUrl: svc.db.url, dataDir: '/nonexistent', max: 4 })).sql;
  const log = createLogger('silent');
  const { app, cache } = createApiApp({ sql, log, serverVersion: 'test' }, { log });
  const listening = await listen(app, '127.0.0.1', 0);
  other = {
    url: `http://127.0.0.1:${listening.port}`,
    cache,
    listening,
    sql,
    close: () => (app as unknown as { close(): void }).close(),
  };
});

afterAll(async () => {
  other?.listening.close();
  other?.close();
  await other?.sql.end({ timeout: 5 });
  await truthSql?.end({ timeout: 5 });
  await svc?.stop();
});

describe('ETag / If-None-Match', () => {
  it('tags chain answers, answers 304 to a matching tag and 200 to anything else', async () => {
    const first = await get(svc.api, '/extended');
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^"[0-9a-f]+-\d+"$/);
    expect(first.headers.get('cache-control')).toBe('public, no-cache, must-revalidate');
    const etag = first.etag!;

    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const r = await get(svc.api, '/extended', { headers: { 'if-none-match': inm } });
      expect(r.status, inm).toBe(304);
      expect(r.text).toBe('');
      expect(r.etag).toBe(etag);
    }
    // a non-hot answer: tagged without a version read (the last version read), and conditional requests work on it
    const list = await get(svc.api, '/extended/v1/tx/mempool?limit=5');
    expect(list.status).toBe(200);
    expect(list.etag).toBe(etag);
    expect((await get(svc.api, '/extended/v1/tx/mempool?limit=5', { headers: { 'if-none-match': etag } })).status).toBe(304);

    const miss = await get(svc.api, '/extended', { headers: { 'if-none-match': '"deadbeef-0"' } });
    expect(miss.status).toBe(200);
    expect(JSON.parse(miss.text).status).toBe('ready');

    // HEAD honours it too; errors and non-chain routes carry no tag
    const head = await fetch(svc.api + '/extended', { method: 'HEAD', headers: { 'if-none-match': etag } });
    expect(head.status).toBe(304);
    const bad = await get(svc.api, '/extended/v1/block?limit=abc');
    expect(bad.status).toBe(400);
    expect(bad.etag).toBeNull();
    const unknown = await get(svc.api, '/extended/v1/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.etag).toBeNull();
    // only 200 answers are tagged (a client never holds a tag for a 404)
    const tx404 = await get(svc.api, '/extended/v1/tx/0x' + 'ab'.repeat(32));
    expect(tx404.status).toBe(404);
    expect(tx404.etag).toBeNull();
  });

  it('matches tags as RFC 9110 weak comparison', () => {
    expect(etagMatches('"a-1"', '"a-1"')).toBe(true);
    expect(etagMatches('W/"a-1"', '"a-1"')).toBe(true);
    expect(etagMatches(' "x" ,W/"a-1" ', '"a-1"')).toBe(true);
    expect(etagMatches('"a-10"', '"a-1"')).toBe(false);
    expect(etagMatches('a-1', '"a-1"')).toBe(false);
    expect(etagMatches('', '"a-1"')).toBe(false);
  });
});

describe('no stale answer after a commit', () => {
  it('every hot answer and ETag follows each message, in-process and in an API-only process', async () => {
    const hitsBefore = other.cache.stats().hits;
    let prevEtag = await checkHot(svc.api, await truth());
    await checkHot(other.url, await truth());
    let sawBlock = false;
    let sawMempool = false;
    for (const line of lines) {
      // warm both hot caches on the current state (second round = hits)
      const before = await truth();
      await checkHot(svc.api, before);
      await checkHot(other.url, before);
      await checkHot(other.url, before);

      const res = await fetch(svc.observer + line.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line.body });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      await settled(svc.observer);

      // right after the projection: both APIs answer the new state
      const after = await truth();
      if (line.path === '/new_block' && after.height > before.height) sawBlock = true; // (the boot block is not canonical)
      if (line.path === '/new_mempool_tx' && after.pending > before.pending) sawMempool = true;
      const etag = await checkHot(svc.api, after);
      await checkHot(other.url, after);
      expect(etag).not.toBe(prevEtag);
      // the old tag no longer validates; the new one does, on both
      expect((await get(svc.api, '/extended/v1/tx/mempool/stats', { headers: { 'if-none-match': prevEtag } })).status).toBe(200);
      expect((await get(other.url, '/extended/v1/block?limit=30', { headers: { 'if-none-match': prevEtag } })).status).toBe(200);
      expect((await get(other.url, '/extended/v1/block?limit=30', { headers: { 'if-none-match': etag } })).status).toBe(304);
      // a non-hot answer is never tagged newer than its data: at most the current version
      const [cv] = await truthSql<{ version: string }[]>`SELECT version FROM cache_version`;
      for (const base of [svc.api, other.url]) {
        const plain = await get(base, '/extended/v1/tx/mempool');
        expect(plain.status).toBe(200);
        expect(Number(/-(\d+)"$/.exec(plain.etag ?? '')?.[1])).toBeLessThanOrEqual(Number(cv.version));
        expect((await get(base, '/extended/v1/tx/mempool', { headers: { 'if-none-match': prevEtag } })).status).toBe(200);
        expect((await get(base, '/extended/v1/tx/mempool', { headers: { 'if-none-match': etag } })).status).toBe(304);
      }
      prevEtag = etag;
    }
    expect(sawBlock).toBe(true);
    expect(sawMempool).toBe(true);
    // the API-only process did serve from memory between commits
    expect(other.cache.stats().hits).toBeGreaterThan(hitsBefore + lines.length);
  });

  it('under concurrent load, no answer is older than what the observer had acknowledged when it was sent', async () => {
    // a fresh service, replaying the fixture while clients poll the hot endpoints of both APIs
    const s2 = await startTestService();
    const sql = (await connectDatabase({ databaseUrl: s2.db.url, dataDir: '/nonexistent', max: 4 })).sql;
    const log = createLogger('silent');
    const { app } = createApiApp({ sql, log, serverVersion: 'test' }, { log });
    const l2 = await listen(app, '127.0.0.1', 0);
    const apiOnly = `http://127.0.0.1:${l2.port}`;
    try {
      // the state the observer had acknowledged: canonical tip height and cache_version
      let acked = { height: 0, version: 0 };
      let done = false;
      const violations: string[] = [];
      let checked = 0;
      const versionOf = (etag: string | null) => Number(/-(\d+)"$/.exec(etag ?? '')?.[1] ?? -1);
      const poll = async (base: string, path: string, height: (b: any) => number | undefined) => {
        while (!done) {
          const floor = acked;
          const r = await get(base, path);
          if (r.status !== 200) continue; // `latest` before the first block
          checked++;
          const v = versionOf(r.etag);
          if (v < floor.version) violations.push(`${base}${path}: version ${v} after ${floor.version} was acknowledged`);
          const h = height(JSON.parse(r.text));
          if (h !== undefined && h < floor.height) violations.push(`${base}${path}: height ${h} after ${floor.height} was acknowledged`);
        }
      };
      const pollers = [s2.api, apiOnly].flatMap((base) => [
        poll(base, '/extended', (b) => b.chain_tip?.block_height ?? 0),
        poll(base, '/extended/v2/blocks/latest', (b) => b.height),
        poll(base, '/extended/v1/block?limit=30', (b) => b.results[0]?.height ?? 0),
        poll(base, '/extended/v2/blocks', (b) => b.results[0]?.height ?? 0),
        poll(base, '/extended/v1/tx/mempool/stats', () => undefined),
      ]);
      for (const line of lines) {
        const res = await fetch(s2.observer + line.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line.body });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        await settled(s2.observer);
        const [b] = await sql<{ h: number | null }[]>`SELECT max(block_height)::int AS h FROM blocks WHERE canonical`;
        const [v] = await sql<{ version: number }[]>`SELECT version FROM cache_version`;
        acked = { height: b.h ?? 0, version: Number(v.version) };
        await new Promise((r) => setTimeout(r, 15)); // let the pollers run on this state
      }
      done = true;
      await Promise.all(pollers);
      expect(acked.version).toBe(lines.length);
      expect(violations).toEqual([]);
      expect(checked).toBeGreaterThan(100);
    } finally {
      l2.close();
      (app as unknown as { close(): void }).close();
      await sql.end({ timeout: 5 });
      await s2.stop();
    }
  });

  it('invalidate() drops the hot entries and keeps an answer computed across it out of memory', async () => {
    const cache = other.cache;
    const req = (): HttpRequest => ({
      method: 'GET',
      path: '/extended/v1/tx/mempool/stats',
      query: new URLSearchParams(),
      rawQuery: '',
      params: {},
      headers: {},
      remoteAddress: '127.0.0.1',
      route: '/extended/v1/tx/mempool/stats',
      locals: {},
    });
    const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"marker":1}' };
    cache.invalidate();
    expect(cache.stats().entries).toBe(0);

    // the request hook ran, then a commit in this process, then the handler's answer: sent (tagged), not stored
    const r1 = req();
    expect(await cache.onRequest(r1)).toBeUndefined();
    cache.invalidate();
    const tagged = cache.onResponse(r1, answer);
    expect(tagged?.headers?.etag).toMatch(/^"[0-9a-f]+-\d+"$/);
    expect(cache.stats().entries).toBe(0);
    expect(await cache.onRequest(req())).toBeUndefined(); // still a miss

    // without a commit in between, it is stored and served
    const r2 = req();
    expect(await cache.onRequest(r2)).toBeUndefined();
    cache.onResponse(r2, answer);
    expect(cache.stats().entries).toBe(1);
    const hit = await cache.onRequest(req());
    expect(String(hit?.body)).toBe('{"marker":1}');
    // and invalidate() drops it
    cache.invalidate();
    expect(cache.stats().entries).toBe(0);
    expect(await cache.onRequest(req())).toBeUndefined();
  });

  it('keeps any ETag route answer (any page, any parameters) within its entry and byte bounds, oldest first out', async () => {
    const { ApiCache } = await import('../../src/api/cache.js');
    const small = new ApiCache(other.sql, { maxEntries: 3, maxBytes: 64 * 1024 });
    const req = (i: number): HttpRequest => ({
      method: 'GET',
      path: `/extended/v1/tx/0x${String(i).padStart(64, '0')}`,
      query: new URLSearchParams('event_limit=5'),
      rawQuery: 'event_limit=5',
      params: { tx_id: `0x${String(i).padStart(64, '0')}` },
      headers: {},
      remoteAddress: '127.0.0.1',
      route: '/extended/v1/tx/:tx_id',
      locals: {},
    });
    const answer = (i: number, size = 100) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ i, pad: 'x'.repeat(size) }),
    });
    for (let i = 0; i < 5; i++) {
      const r = req(i);
      expect(await small.onRequest(r)).toBeUndefined();
      small.onResponse(r, answer(i));
    }
    // at most 3 entries: 0 and 1 went first
    expect(small.stats().entries).toBe(3);
    expect(await small.onRequest(req(0))).toBeUndefined();
    const hit = await small.onRequest(req(4));
    expect(JSON.parse(String(hit?.body)).i).toBe(4);
    // the byte budget holds; an answer above a sixteenth of it (4 KiB here) is sent but never kept
    const big = req(9);
    await small.onRequest(big);
    small.onResponse(big, answer(9, 3 * 1024));
    expect(JSON.parse(String((await small.onRequest(req(9)))?.body)).i).toBe(9);
    expect(small.stats().bytes).toBeLessThanOrEqual(64 * 1024);
    const tooBig = req(11);
    await small.onRequest(tooBig);
    small.onResponse(tooBig, answer(11, 8 * 1024));
    expect(await small.onRequest(req(11))).toBeUndefined();
  });
});
