/**
 * Socket.IO / WebSocket abuse against the real service while a fixture is replayed: invalid rooms (handshake and
 * subscribe), oversized frames (Socket.IO and JSON-RPC), one client sending 1,000 subscribe calls per second, and
 * connections that never read (WebSocket clients that stop reading, a TCP connection that sends half a request).
 * The server must stay up, and a well-behaved Socket.IO client and the REST API must not notice: the client receives
 * every block message published during the abuse, in order, and REST keeps answering.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { readFixture } from '../helpers/fixtures.js';

let svc: TestService;
const closers: (() => void)[] = [];

beforeAll(async () => {
  svc = await startTestService();
}, 300_000);

afterAll(async () => {
  for (const c of closers) {
    try {
      c();
    } catch {
      /* already gone */
    }
  }
  await svc?.stop();
});

const wsBase = () => svc.api.replace('http://', 'ws://');

async function connected(s: Socket): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });
}

function openWs(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  closers.push(() => ws.terminate());
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function closedWithin(ws: WebSocket, ms: number): Promise<number | 'open'> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve(-1);
    const t = setTimeout(() => resolve('open'), ms);
    ws.once('close', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

describe('socket abuse', () => {
  it('invalid rooms, oversized frames, 1,000 subscribes/s, never-reading connections: server up, others unaffected', async () => {
    // the well-behaved client, connected before any abuse
    const good = connect(svc.api, { transports: ['websocket'], query: { subscriptions: 'block' }, reconnection: false });
    closers.push(() => good.close());
    await connected(good);
    const goodBlocks: { height: number; cursor: string }[] = [];
    let goodDisconnected = false;
    good.on('disconnect', () => (goodDisconnected = true));
    good.on('block', (...args: unknown[]) => {
      const meta = args.at(-1) as { cursor: string; height: number };
      goodBlocks.push({ height: meta.height, cursor: meta.cursor });
    });

    // 1. invalid rooms in the handshake: refused with an error naming them
    const bad = connect(svc.api, { transports: ['websocket'], query: { subscriptions: 'block,nope,transaction:zz' }, reconnection: false });
    closers.push(() => bad.close());
    const handshakeError = await new Promise<Error>((resolve) => bad.once('connect_error', resolve));
    expect(handshakeError.message).toMatch(/Invalid topic/);

    // invalid subscribe calls on a connected socket: each acknowledged with an error, the socket stays connected
    const prober = connect(svc.api, { transports: ['websocket'], reconnection: false });
    closers.push(() => prober.close());
    await connected(prober);
    const invalid: unknown[] = ['nope', '', 'transaction:', 'address-transaction:SPX', 'x'.repeat(100_000), 42, null, { room: 'block' }, ['block']];
    for (const room of invalid) {
      const ack = await prober.timeout(5000).emitWithAck('subscribe', room);
      expect(typeof ack === 'string' && ack.startsWith('Invalid topic'), `subscribe ${JSON.stringify(room)?.slice(0, 40)}`).toBe(true);
    }
    prober.emit('no-such-event', 'x'.repeat(1000));
    prober.emit('unsubscribe', { not: 'a room' }, 7);
    expect(prober.connected).toBe(true);

    // 2. oversized frames: a 4 MiB Socket.IO frame and a 4 MiB JSON-RPC frame close those connections only
    const bigSio = await openWs(`${wsBase()}/socket.io/?EIO=4&transport=websocket`);
    bigSio.send('40');
    bigSio.send('42' + JSON.stringify(['subscribe', 'x'.repeat(4 * 1024 * 1024)]));
    const bigRpc = await openWs(`${wsBase()}/extended/v1/ws`);
    bigRpc.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { event: 'x'.repeat(4 * 1024 * 1024) } }));
    const [sioClose, rpcClose] = await Promise.all([closedWithin(bigSio, 5000), closedWithin(bigRpc, 5000)]);
    expect(sioClose).not.toBe('open');
    expect(rpcClose).not.toBe('open');
    // malformed frames on a JSON-RPC connection get errors, not a crash
    const rpc = await openWs(`${wsBase()}/extended/v1/ws`);
    const rpcReplies: string[] = [];
    rpc.on('message', (d) => rpcReplies.push(String(d)));
    for (const f of ['{', 'null', '[]', '{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"nope"}}', Buffer.from([0xff, 0xfe, 0])]) rpc.send(f);
    await new Promise((r) => setTimeout(r, 300));
    expect(rpcReplies.length).toBeGreaterThanOrEqual(4);
    expect(rpcReplies.every((r) => (JSON.parse(r) as { error?: unknown }).error !== undefined)).toBe(true);

    // 3. connections that never read: WebSocket clients subscribed to everything that stop reading their socket,
    // and a TCP connection holding half an HTTP request
    const stalled: WebSocket[] = [];
    for (let i = 0; i < 10; i++) {
      const ws = await openWs(`${wsBase()}/socket.io/?EIO=4&transport=websocket&subscriptions=block,microblock,mempool`);
      ws.send('40');
      stalled.push(ws);
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const ws of stalled) (ws as unknown as { _socket: net.Socket })._socket.pause();
    const half = net.connect(Number(new URL(svc.api).port), '127.0.0.1');
    closers.push(() => half.destroy());
    half.write('GET /extended/v1/block HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    half.pause();

    // 4. one client sending 1,000 subscribe calls per second (valid and invalid rooms) for 3 s, during the replay
    const flooder = connect(svc.api, { transports: ['websocket'], reconnection: false });
    closers.push(() => flooder.close());
    await connected(flooder);
    let flooded = 0;
    const flood = setInterval(() => {
      for (let i = 0; i < 100; i++) {
        flooder.emit('subscribe', i % 2 ? `transaction:0x${(flooded + i).toString(16).padStart(64, '0')}` : `bogus-${flooded + i}`);
      }
      flooded += 100;
    }, 100);

    // the replay that produces the messages, while REST is polled
    const lines = readFixture('epoch-3-transition');
    const restTimes: number[] = [];
    let restFailures = 0;
    let replaying = true;
    const poller = (async () => {
      while (replaying) {
        const t = performance.now();
        const res = await fetch(svc.api + '/extended/v1/block?limit=5').catch(() => undefined);
        if (!res || res.status !== 200) restFailures++;
        await res?.arrayBuffer();
        restTimes.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const started = Date.now();
    const statuses = await replay(svc.observer, lines);
    while (Date.now() - started < 3000) await new Promise((r) => setTimeout(r, 100));
    clearInterval(flood);
    replaying = false;
    await poller;
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(flooded).toBeGreaterThanOrEqual(2500);
    await svc.service.push?.publisher?.idle();

    // every block message published reached the good client, in order, without a disconnect
    const published = await svc.db.sql<{ seq: string }[]>`SELECT seq::text AS seq FROM push_messages WHERE room = 'block' AND event = 'block' ORDER BY push_messages.seq`;
    for (let i = 0; i < 100 && goodBlocks.length < published.length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(published.length).toBeGreaterThan(20);
    expect(goodBlocks.map((b) => b.cursor)).toEqual(published.map((p) => p.seq));
    expect(goodDisconnected).toBe(false);
    // REST answered throughout
    restTimes.sort((a, b) => a - b);
    const p99 = restTimes[Math.floor(restTimes.length * 0.99)];
    console.log(
      `socket abuse: ${flooded} subscribe calls from one client, ${stalled.length} stalled sockets, ${published.length} block messages ` +
        `all delivered to the good client; REST ${restTimes.length} requests, ${restFailures} failures, p99 ${p99.toFixed(1)} ms`,
    );
    expect(restFailures).toBe(0);
    expect(p99).toBeLessThan(2000);
    // the flooding client itself is still served
    expect(flooder.connected).toBe(true);
    expect(await flooder.timeout(5000).emitWithAck('subscribe', 'block')).toBe(null);

    // the server is up: a new client connects and the API answers
    const late = connect(svc.api, { transports: ['websocket'], query: { subscriptions: 'block' }, reconnection: false });
    closers.push(() => late.close());
    await connected(late);
    expect((await fetch(svc.api + '/extended')).status).toBe(200);
  }, 300_000);
});
