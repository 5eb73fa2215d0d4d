/**
 * Observer input handling: the reference's probes (fixtures/golden/_observer.json), bad input refused with a 400 that
 * names the problem and writes nothing but a dead letter, and a database outage answered 500 (the node retries).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readFixture, readGolden } from '../helpers/fixtures.js';
import { replay, settled, startTestService, type TestService } from '../helpers/service.js';
import { createTestDatabase } from '../helpers/db.js';
import { dumpDatabase } from '../helpers/dump.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service.js';

interface Probe {
  case: string;
  request: { method: string; path: string; content_type: string | null; body_prefix: string | null };
  status: number;
  body: unknown;
}

/** The full body a probe meant: fixture lines are recorded by prefix. */
function probeBody(p: Probe): string | undefined {
  const prefix = p.request.body_prefix;
  if (prefix === null) return undefined;
  if (prefix.length < 60) return prefix;
  const line = readFixture('mocknet').find((l) => l.body.startsWith(prefix));
  if (!line) throw new Error(`no mocknet line starts with the probe's body: ${p.case}`);
  return line.body;
}

/** What SPEC.md's observer decisions require where the reference answered otherwise. */
function expectedStatus(p: Probe): number {
  if (p.request.path === '/unknown_path' && p.request.method === 'POST' && p.status === 404) return 200; // stored raw, never stall the node
  if (p.status === 500 && p.request.content_type !== 'application/json') return 200; // valid JSON whatever the content type
  if (p.status === 500) return 400; // invalid message: 400 naming the field
  return p.status;
}

describe('observer probes of the reference', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  for (const p of readGolden<Probe[]>('_observer.json')) {
    it(`${p.case} → ${expectedStatus(p)}`, async () => {
      const headers: Record<string, string> = {};
      if (p.request.content_type) headers['content-type'] = p.request.content_type;
      const res = await fetch(svc.observer + p.request.path, { method: p.request.method, headers, body: probeBody(p) });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status).toBe(expectedStatus(p));
      if (res.status === 200 && p.request.method === 'POST') expect(body).toEqual({ result: 'ok' });
      if (res.status >= 400) {
        expect(body.statusCode).toBe(res.status);
        expect(typeof body.message).toBe('string');
      }
      if (p.request.method === 'GET' && p.request.path === '/') expect(body.status).toBe('ready');
    });
  }
});

describe('bad observer input changes nothing but the dead-letter table', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ OBSERVER_BODY_LIMIT: '2mb' });
    await replay(svc.observer, readFixture('mocknet').slice(0, 5));
  });
  afterAll(async () => svc?.stop());

  const block = JSON.parse(readFixture('mocknet')[5].body) as Record<string, unknown>;
  const mutations: [string, string, string | Record<string, unknown> | unknown[], string][] = [
    ['truncated JSON', '/new_block', '{"block_height": 6,', 'invalid JSON'],
    ['missing index_block_hash', '/new_block', { ...block, index_block_hash: undefined }, 'body/index_block_hash'],
    ['height as a string', '/new_block', { ...block, block_height: '6' }, 'body/block_height'],
    ['negative height', '/new_block', { ...block, block_height: -6 }, 'body/block_height'],
    ['raw_tx not hex', '/new_block', { ...block, transactions: [{ ...(block.transactions as object[])[0], raw_tx: '0xzz' }] }, 'body/transactions/0/raw_tx'],
    ['raw_tx that does not decode', '/new_block', { ...block, transactions: [{ ...(block.transactions as object[])[0], raw_tx: '0x0000' }] }, 'body/transactions/0/raw_tx'],
    ['unknown event type', '/new_block', { ...block, events: [{ txid: '0x' + '1'.repeat(64), event_index: 0, committed: true, type: 'bogus_event' }] }, 'body/events/0'],
    ['mempool tx not hex', '/new_mempool_tx', ['0xzz'], 'body/0'],
    ['mempool tx that does not decode', '/new_mempool_tx', ['0x00ff'], 'body/0'],
    ['drop without reason', '/drop_mempool_tx', { dropped_txids: [] }, 'body/reason'],
    ['burn block {}', '/new_burn_block', {}, 'body/burn_block_hash'],
  ];
  for (const [name, urlPath, payload, field] of mutations) {
    it(`${name} → 400 naming ${field}`, async () => {
      const before = await dumpDatabase(svc.db.sql);
      const res = await fetch(svc.observer + urlPath, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
      const body = (await res.json()) as { statusCode: number; error: string; message: string };
      expect(res.status).toBe(400);
      expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(body.message).toContain(field);
      const after = await dumpDatabase(svc.db.sql);
      expect(after.dead_letters.length).toBe(before.dead_letters.length + 1);
      expect({ ...after, dead_letters: [] }).toEqual({ ...before, dead_letters: [] });
    });
  }

  it('a body over OBSERVER_BODY_LIMIT → 413, nothing stored', async () => {
    const before = await dumpDatabase(svc.db.sql);
    const res = await fetch(svc.observer + '/new_block', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(3 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(await dumpDatabase(svc.db.sql)).toEqual(before);
  });
});

describe('mempool messages go to PostgreSQL as SQL literals (one round trip)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  it("quotes, backslashes and SQL in a drop message are stored verbatim and run nothing", async () => {
    const reason = "Replace'By\\Fee'); DROP TABLE txs; --";
    const body = JSON.stringify({ dropped_txids: ['0x' + 'ab'.repeat(32)], reason, new_txid: null, note: "it's \\'' \\n ; --" });
    const res = await fetch(svc.observer + '/drop_mempool_tx', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    const [row] = await svc.db.sql<{ body: string }[]>`SELECT body FROM event_log WHERE path = '/drop_mempool_tx'`;
    expect(row.body).toBe(body);
    const [{ n }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM txs`;
    expect(n).toBe(0); // the table is still there
    // the same message again is a duplicate: nothing more stored
    expect((await fetch(svc.observer + '/drop_mempool_tx', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
    const [{ m }] = await svc.db.sql<{ m: number }[]>`SELECT count(*)::int AS m FROM event_log WHERE path = '/drop_mempool_tx'`;
    expect(m).toBe(1);
  });
});

/** A TCP relay to PostgreSQL that the test can cut (connections refused, as when the server is down) and restore. */
async function relay(target: number) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const pg = net.connect(target, '127.0.0.1');
    sockets.add(client).add(pg);
    client.pipe(pg).pipe(client);
    const drop = () => {
      client.destroy();
      pg.destroy();
      sockets.delete(client);
      sockets.delete(pg);
    };
    client.on('error', drop).on('close', drop);
    pg.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const stop = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return {
    port,
    cut: stop,
    restore: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

describe('database outage', () => {
  it('observer and API answer 503 while PostgreSQL is unreachable; both recover', async () => {
    const db = await createTestDatabase();
    const pgPort = Number(new URL(db.url).port || 5432);
    const r = await relay(pgPort);
    const url = new URL(db.url);
    url.port = String(r.port);
    const service = await startService(
      loadConfig({ DATABASE_URL: url.toString(), API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'silent' }),
      createLogger('silent'),
    );
    const observer = `http://127.0.0.1:${service.observerPort}`;
    const api = `http://127.0.0.1:${service.apiPort}`;
    try {
      const lines = readFixture('mocknet');
      expect(await replay(observer, lines.slice(0, 2))).toEqual([200, 200]);
      await r.cut();
      const down = await fetch(observer + lines[2].path, { method: 'POST', body: lines[2].body });
      expect(down.status, await down.text()).toBe(503);
      const apiDown = await fetch(api + '/extended');
      expect(apiDown.status).toBe(503);
      expect(((await apiDown.json()) as { statusCode: number }).statusCode).toBe(503);
      await r.restore();
      // the node retries the same message: it is stored exactly once
      let status = 0;
      for (const t0 = Date.now(); Date.now() - t0 < 60_000 && status !== 200; ) {
        status = (await fetch(observer + lines[2].path, { method: 'POST', body: lines[2].body })).status;
        if (status !== 200) await new Promise((res) => setTimeout(res, 100));
      }
      expect(status).toBe(200);
      await settled(observer);
      const tip = (await (await fetch(api + '/extended')).json()) as { chain_tip: { block_height: number } };
      expect(tip.chain_tip.block_height).toBe(3);
    } finally {
      await service.close();
      await r.close();
      await db.drop();
    }
  });
});

describe('embedded PGlite (no DATABASE_URL)', () => {
  it('starts, ingests mocknet and reads the tip back', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-pglite-'));
    const service = await startService(
      loadConfig({ DATA_DIR: dir, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'silent' }),
      createLogger('silent'),
    );
    try {
      expect(service.db.kind).toBe('pglite');
      const statuses = await replay(`http://127.0.0.1:${service.observerPort}`, readFixture('mocknet'));
      expect(statuses.every((s) => s === 200)).toBe(true);
      const status = (await (await fetch(`http://127.0.0.1:${service.apiPort}/extended`)).json()) as { chain_tip: { block_height: number } };
      expect(status.chain_tip.block_height).toBe(28);
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
