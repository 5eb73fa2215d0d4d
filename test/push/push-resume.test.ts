/**
 * Beyond the reference: resume by cursor (Socket.IO `auth.cursor`, JSON-RPC `params.cursor`), reorg
 * messages, slow consumers, connection rate limits, and publication of changes a dead process left unpublished.
 */
import { describe, expect, it } from 'vitest';
import { makeContractDeploy, randomPrivateKey } from '@stacks/transactions';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service.js';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { createTestDatabase } from '../helpers/db.js';
import { readFixture, readGolden, type FixtureLine } from '../helpers/fixtures.js';
import { recordingSocket, rpcClient, type Recorded } from '../helpers/push-clients.js';

const FIXTURE = 'epoch-3-transition';
const rooms = readGolden<{ subscriptions: string[] }>(`${FIXTURE}.socketio.json`).subscriptions;

const strip = (r: Recorded[]) => r.map((m) => ({ event: m.event, args: m.args }));

async function settle(svc: TestService): Promise<void> {
  await svc.service.pipeline!.idle();
  await svc.service.push!.publisher!.idle();
}

/** JSON-RPC subscribe params for a Socket.IO room name (the rooms JSON-RPC has). */
function rpcParams(room: string): Record<string, unknown> | undefined {
  const [kind, value] = [room.split(':')[0], room.slice(room.indexOf(':') + 1)];
  switch (kind) {
    case 'block':
    case 'mempool':
    case 'microblock':
      return { event: kind };
    case 'transaction':
      return { event: 'tx_update', tx_id: value };
    case 'address-transaction':
      return { event: 'address_tx_update', address: value };
    case 'address-stx-balance':
      return { event: 'address_balance_update', address: value };
  }
  return undefined;
}

describe('resume by cursor', () => {
  it('Socket.IO: a client killed mid-replay and reconnected with auth.cursor gets the uninterrupted stream', async () => {
    const lines = readFixture(FIXTURE);
    const svc = await startTestService();
    try {
      const a = await recordingSocket(svc.api, { rooms });
      const b1 = await recordingSocket(svc.api, { rooms });
      let i = 0;
      // killed once a third of the stream went out, while messages may still be in flight
      while (a.got.length < 100) await replay(svc.observer, [lines[i++]]);
      b1.socket.io.engine.close();
      const away = a.got.length;
      while (a.got.length < away + 80) await replay(svc.observer, [lines[i++]]);
      const cut2 = i;
      const cursor = b1.got.at(-1)?.cursor ?? '0';
      expect(b1.got.length).toBeGreaterThan(0);
      // reconnect while the rest of the replay is being published
      const rest = replay(svc.observer, lines.slice(cut2));
      const b2 = await recordingSocket(svc.api, { rooms, auth: { cursor } });
      await rest;
      await settle(svc);
      await Promise.all([a.sync(), b2.sync()]);
      const combined = [...b1.got, ...b2.got];
      expect(a.got.length).toBeGreaterThan(100);
      expect(strip(combined)).toEqual(strip(a.got));
      // both replayed (missed while away) and live messages reached b2
      const m = svc.service.push!.server!.metrics();
      expect(m.resumes).toBe(1);
      expect(m.messages_replayed).toBeGreaterThan(0);
      expect(m.messages_replayed).toBeLessThan(b2.got.length);
      // from the very start (cursor 0): the whole stream, in cursor order (not text order: 9 < 10)
      const all = await recordingSocket(svc.api, { rooms, auth: { cursor: '0' } });
      await all.sync();
      expect(strip(all.got)).toEqual(strip(a.got));
      all.socket.disconnect();
      a.socket.disconnect();
      b2.socket.disconnect();
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('JSON-RPC: a connection killed mid-replay, resubscribed with params.cursor, misses nothing and gets nothing twice', async () => {
    const lines = readFixture(FIXTURE);
    const svc = await startTestService();
    const url = svc.api.replace('http', 'ws') + '/extended/v1/ws';
    const topics = rooms.map(rpcParams).filter((p): p is Record<string, unknown> => !!p);
    expect(topics.length).toBeGreaterThan(4);
    try {
      const a = await rpcClient(url);
      const b1 = await rpcClient(url);
      for (const t of topics) {
        expect((await a.call('subscribe', t)).error).toBeUndefined();
        expect((await b1.call('subscribe', t)).error).toBeUndefined();
      }
      let i = 0;
      while (a.notifications().length < 100) await replay(svc.observer, [lines[i++]]);
      b1.ws.terminate();
      const away = a.notifications().length;
      while (a.notifications().length < away + 80) await replay(svc.observer, [lines[i++]]);
      const cut2 = i;
      const before = b1.notifications();
      expect(before.length).toBeGreaterThan(0);
      const cursor = before.at(-1)!.cursor;
      const rest = replay(svc.observer, lines.slice(cut2));
      const b2 = await rpcClient(url);
      for (const t of topics) expect((await b2.call('subscribe', { ...t, cursor })).error).toBeUndefined();
      await rest;
      await settle(svc);
      await Promise.all([a.sync(), b2.sync()]);
      const key = (n: { method: string; params: unknown; cursor: string }) => JSON.stringify([n.cursor, n.method, n.params]);
      const got = [...before, ...b2.notifications()];
      const want = a.notifications();
      expect(want.length).toBeGreaterThan(100);
      // no duplicate, no gap (topics catch up one by one, so compare per topic order and as a set)
      expect(new Set(got.map(key)).size).toBe(got.length);
      expect(got.map(key).sort()).toEqual(want.map(key).sort());
      const topic = (n: { method: string; params: unknown }) => {
        const p = n.params as { address?: string; tx_id?: string };
        return `${n.method}:${p.address ?? p.tx_id ?? ''}`;
      };
      const perTopic = (ns: typeof got) =>
        Object.fromEntries([...new Set(ns.map(topic))].map((t) => [t, ns.filter((n) => topic(n) === t).map((n) => n.cursor)]));
      expect(perTopic(got)).toEqual(perTopic(want));
      a.ws.close();
      b2.ws.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('reorgs', () => {
  it('mainnet-reorg-scenario2: block subscribers get `reorg`, orphaned txs their new state', async () => {
    const name = 'mainnet-reorg-scenario2';
    const lines = readFixture(name);
    const txIds = new Set<string>();
    for (const l of lines) {
      if (l.path !== '/new_block') continue;
      for (const t of (JSON.parse(l.body) as { transactions: { txid: string }[] }).transactions) txIds.add(t.txid.toLowerCase());
    }
    const svc = await startTestService();
    try {
      const c = await recordingSocket(svc.api, { rooms: ['block', ...[...txIds].map((t) => `transaction:${t}`)] });
      const sql = svc.db.sql;
      let reorgs = 0;
      for (let i = 0; i < lines.length; i++) {
        const from = c.got.length;
        expect(await replay(svc.observer, [lines[i]])).toEqual([200]);
        await settle(svc);
        await c.sync();
        const got = c.got.slice(from);
        const reorgAt = got.findIndex((m) => m.event === 'reorg');
        if (reorgAt < 0) continue;
        reorgs++;
        const r = got[reorgAt].args[0] as { orphaned: string[]; new_tip: { height: number; index_block_hash: string } };
        expect(Object.keys(got[reorgAt].args.at(-1) as object)).toContain('cursor');
        // the orphaned blocks are no longer canonical; new_tip is the canonical tip, announced right behind
        expect(r.orphaned.length).toBeGreaterThan(0);
        const orphaned = await sql<{ index_block_hash: string; canonical: boolean }[]>`
          SELECT index_block_hash, canonical FROM blocks WHERE index_block_hash = ANY(${r.orphaned})`;
        expect(orphaned.map((b) => b.canonical)).toEqual(r.orphaned.map(() => false));
        const tip = await (await fetch(`${svc.api}/extended/v2/blocks/latest`)).json() as { height: number; index_block_hash: string };
        expect(r.new_tip).toEqual({ height: tip.height, index_block_hash: tip.index_block_hash });
        const next = got[reorgAt + 1];
        expect(next.event).toBe('block');
        expect((next.args[0] as { hash: string; height: number }).height).toBe(tip.height);
        // every tx of the orphaned blocks: its room got the tx in its new state (as REST shows it now)
        const moved = await sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs WHERE index_block_hash = ANY(${r.orphaned})`;
        expect(moved.length).toBeGreaterThan(0);
        for (const { tx_id } of moved) {
          const msgs = got.filter((m) => m.event === `transaction:${tx_id}`);
          expect(msgs.length, tx_id).toBeGreaterThan(0);
          const rest = await (await fetch(`${svc.api}/extended/v1/tx/${tx_id}`)).json() as Record<string, unknown>;
          const pushed = msgs.at(-1)!.args[0] as Record<string, unknown>;
          const pick = (t: Record<string, unknown>) => ({
            tx_id: t.tx_id,
            canonical: t.canonical,
            tx_status: t.tx_status,
            block_hash: t.block_hash,
            block_height: t.block_height,
          });
          expect(pick(pushed)).toEqual(pick(rest));
        }
        // and before the reorg these txs had been published in their old (canonical) placement
        for (const { tx_id } of moved) {
          const old = c.got.slice(0, from).filter((m) => m.event === `transaction:${tx_id}`).at(-1);
          if (old) expect((old.args[0] as { canonical: boolean }).canonical, tx_id).toBe(true);
        }
      }
      expect(reorgs).toBeGreaterThan(0);
      c.socket.disconnect();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

/** One /new_mempool_tx message of `n` contract deploys of about `size` bytes each (fresh key: new tx ids). */
async function bigMempoolMessage(n: number, size: number): Promise<FixtureLine> {
  const key = randomPrivateKey();
  const raws: string[] = [];
  for (let i = 0; i < n; i++) {
    const tx = await makeContractDeploy({
      contractName: `big-${i}`,
      codeBody: `;; ${'x'.repeat(size)}\n(define-read-only (f) u${i})`,
      senderKey: key,
      fee: 10_000,
      nonce: i,
      network: 'mainnet',
    });
    raws.push('0x' + tx.serialize().replace(/^0x/, ''));
  }
  return { id: 0, timestamp: '', path: '/new_mempool_tx', body: JSON.stringify(raws) } as unknown as FixtureLine;
}

describe('slow consumers', () => {
  it('a client that never reads is disconnected with a reason past the limit; others get everything', async () => {
    const svc = await startTestService({
      PUSH_MAX_BUFFER: '1mb',
      // a paused client cannot answer pings: keep the heartbeat out of this test's way on a loaded machine
      SOCKET_PING_INTERVAL_MS: '120000',
      SOCKET_PING_TIMEOUT_MS: '120000',
    });
    try {
      const fast = await recordingSocket(svc.api, { rooms: ['mempool'] });
      const slow = await recordingSocket(svc.api, { rooms: ['mempool'] });
      const slowDisconnect = new Promise<string>((r) => slow.socket.once('disconnect', (reason) => r(reason)));
      const rpcFast = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
      const rpcSlow = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
      await rpcFast.call('subscribe', { event: 'mempool' });
      await rpcSlow.call('subscribe', { event: 'mempool' });
      const rpcClosed = new Promise<{ code: number; reason: string }>((r) =>
        rpcSlow.ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
      );
      const n = 160;
      const msg = await bigMempoolMessage(n, 60_000);
      // stop reading: the kernel buffers fill (about 4 MB on loopback), then the server's
      const engine = slow.socket.io.engine as unknown as { transport: { ws: { _socket: { pause(): void; resume(): void } } } };
      engine.transport.ws._socket.pause();
      (rpcSlow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
      expect(await replay(svc.observer, [msg])).toEqual([200]);
      await settle(svc);
      await fast.sync();
      await rpcFast.sync();
      // over the limit at two consecutive checks (1 s apart)
      const deadline = Date.now() + 120_000;
      while (svc.service.push!.server!.metrics().slow_consumer_disconnects < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const m = svc.service.push!.server!.metrics();
      expect(m.slow_consumer_disconnects).toBe(2);
      expect(m.max_buffered_bytes).toBe(1024 * 1024);
      const status = await (await fetch(`${svc.api}/extended/v1/status/push`)).json();
      expect(status).toMatchObject({ slow_consumer_disconnects: 2, socket_connections: 1, rpc_connections: 1 });
      // the others got every message, in order, and are still connected
      expect(fast.got.filter((x) => x.event === 'mempool')).toHaveLength(n);
      expect(rpcFast.notifications().filter((x) => x.method === 'mempool')).toHaveLength(n);
      expect(fast.socket.connected).toBe(true);
      // published after the disconnection: the fast clients get it, the slow ones only by resuming
      expect(await replay(svc.observer, [await bigMempoolMessage(2, 100)])).toEqual([200]);
      await settle(svc);
      await fast.sync();
      expect(fast.got.filter((x) => x.event === 'mempool')).toHaveLength(n + 2);
      // the slow ones, reading again, get what was buffered, then the reason and the disconnection
      engine.transport.ws._socket.resume();
      (rpcSlow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
      expect(await slowDisconnect).toBe('io server disconnect');
      const reason = slow.got.find((x) => x.event === 'slow-consumer');
      expect(reason?.args[0]).toMatch(/slow consumer.*cursor/);
      const closed = await rpcClosed;
      expect(closed.code).toBe(1013);
      expect(closed.reason).toMatch(/slow consumer/);
      expect(slow.got.filter((x) => x.event === 'mempool').length).toBeLessThan(n + 2);
      // and resume from their last cursor: the rest, nothing twice
      const last = slow.got.filter((x) => x.event === 'mempool').at(-1)?.cursor ?? '0';
      const again = await recordingSocket(svc.api, { rooms: ['mempool'], auth: { cursor: last } });
      await again.sync();
      expect([...slow.got, ...again.got].filter((x) => x.event === 'mempool').map((x) => x.cursor)).toEqual(
        fast.got.filter((x) => x.event === 'mempool').map((x) => x.cursor),
      );
      fast.socket.disconnect();
      again.socket.disconnect();
      rpcFast.ws.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('connection rate limits and API keys', () => {
  it('new Socket.IO and JSON-RPC connections count against the anonymous limit; a bad key is refused', async () => {
    const svc = await startTestService({ RATE_LIMIT_ANON_RPM: '3', RATE_LIMIT_EXEMPT: 'none' });
    try {
      const ok1 = await recordingSocket(svc.api);
      const ok2 = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
      const ok3 = await recordingSocket(svc.api);
      const refused = await recordingSocket(svc.api).then(
        () => undefined,
        (err: Error & { data?: { status: number } }) => err,
      );
      expect(refused?.message).toMatch(/^Rate limit exceeded: 3 requests per minute/);
      expect(refused?.data?.status).toBe(429);
      const rpcRefused = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws').then(
        () => undefined,
        (err: Error & { status?: number }) => err,
      );
      expect(rpcRefused?.status).toBe(429);
      const badKey = await recordingSocket(svc.api, { headers: { 'x-api-key': 'nope' } }).then(
        () => undefined,
        (err: Error & { data?: { status: number } }) => err,
      );
      expect(badKey?.data?.status).toBe(401);
      const badKeyRpc = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws', { 'x-api-key': 'nope' }).then(
        () => undefined,
        (err: Error & { status?: number }) => err,
      );
      expect(badKeyRpc?.status).toBe(401);
      expect(svc.service.push!.server!.metrics().connections_refused).toBe(4);
      // the accepted connections work
      expect(await ok1.socket.timeout(5000).emitWithAck('subscribe', 'block')).toBeNull();
      expect((await ok2.call('subscribe', { event: 'block' })).result).toEqual({});
      ok1.socket.disconnect();
      ok3.socket.disconnect();
      ok2.ws.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('crash safety', () => {
  it('changes committed by a process that died before publishing are published at the next start', async () => {
    const lines = readFixture('fuzzed-transactions-1');
    const k = lines.length - 4;
    const rooms2 = readGolden<{ subscriptions: string[] }>('fuzzed-transactions-1.socketio.json').subscriptions;
    // reference: an uninterrupted service
    const ref = await startTestService();
    let want: Recorded[];
    try {
      const c = await recordingSocket(ref.api, { rooms: rooms2 });
      await replay(ref.observer, lines);
      await settle(ref);
      await c.sync();
      want = c.got;
      c.socket.disconnect();
    } finally {
      await ref.stop();
    }
    const db = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: db.url, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', RATE_LIMIT_ANON_RPM: '0' });
    const log = createLogger('silent');
    try {
      let svc = await startService(config, log);
      const api = () => `http://127.0.0.1:${svc.apiPort}`;
      const c1 = await recordingSocket(api(), { rooms: rooms2 });
      await replay(`http://127.0.0.1:${svc.observerPort}`, lines.slice(0, k));
      await svc.pipeline!.idle();
      await svc.push!.publisher!.idle();
      await c1.sync();
      const cursor = c1.got.at(-1)!.cursor;
      c1.socket.disconnect();
      await svc.close();
      // a process that commits with the outbox on and dies before publishing (no publisher runs)
      const crashed = testPipeline(db.sql, log);
      crashed.pushOutbox = true;
      for (const l of lines.slice(k)) expect((await applied(crashed, l.path, l.body)).status).toBe(200);
      await crashed.stop();
      const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_outbox`;
      expect(n).toBeGreaterThan(0);
      // next start: published before the observer listens; a client resuming from its cursor gets it all
      svc = await startService(config, log);
      try {
        const [{ left }] = await db.sql<{ left: number }[]>`SELECT count(*)::int AS left FROM push_outbox`;
        expect(left).toBe(0);
        const c2 = await recordingSocket(api(), { rooms: rooms2, auth: { cursor } });
        await c2.sync();
        const got = [...c1.got, ...c2.got];
        expect(c2.got.length).toBeGreaterThan(0);
        // nothing twice, in cursor order
        expect(got.map((m) => BigInt(m.cursor))).toEqual(got.map((m) => BigInt(m.cursor)).sort((x, y) => (x < y ? -1 : 1)));
        expect(new Set(got.map((m) => m.cursor)).size).toBe(got.length);
        // Rebuilt from the database as it is now (the snapshots of those commits are gone): the block stream is
        // exact, and every tx room ends in the state the uninterrupted service published last; intermediate states
        // of the lost changes (a tx briefly pending before it was mined, balances between them) may differ.
        const noCursor = (args: unknown[]) => [...args.slice(0, -1), { ...(args.at(-1) as object), cursor: undefined }];
        const blocks = (r: Recorded[]) =>
          r.filter((m) => m.event === 'block' || m.event === 'reorg').map((m) => ({ event: m.event, args: noCursor(m.args) }));
        expect(blocks(got)).toEqual(blocks(want));
        const lastByRoom = (r: Recorded[]) =>
          Object.fromEntries(r.filter((m) => m.event.startsWith('transaction:')).map((m) => [m.event, m.args.slice(0, -1)]));
        expect(Object.keys(lastByRoom(want)).length).toBeGreaterThan(0);
        expect(lastByRoom(got)).toEqual(lastByRoom(want));
        c2.socket.disconnect();
      } finally {
        await svc.close();
      }
    } finally {
      await db.drop();
    }
  }, 300_000);
});
