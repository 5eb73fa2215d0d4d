/**
 * Redis stopped and restarted while blocks are being pushed, with real processes: an ingest process (`serve`,
 * observer + API) and a separate API process (`api`), both on a Redis server of this test's own (own port, no
 * persistence). Socket.IO subscribers on both processes behave like real clients (keep the last cursor, reconnect
 * with it); REST is polled on both throughout. REST must keep answering, and every subscriber must end up with
 * every block message exactly once, in cursor order, those published during the outage included: an api process
 * whose Redis subscription was interrupted makes its clients resume from PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { freePort, startRedis, type RedisInstance } from '../helpers/instances.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nodeReplay } from '../helpers/node-replayer.js';
import { readFixture } from '../helpers/fixtures.js';

let build: Build;
let redis: RedisInstance;
let db: TestDatabase;
const children: ChildService[] = [];

beforeAll(async () => {
  [build, redis, db] = await Promise.all([buildService(), startRedis(), createTestDatabase('sp_redisfault')]);
}, 300_000);

afterAll(async () => {
  for (const c of children) await c.stop();
  build?.remove();
  await redis?.destroy();
  await db?.drop();
});

interface Subscriber {
  socket: Socket;
  cursors: string[];
  disconnects: string[];
}

/**
 * A client as the docs describe: remembers the last cursor and resumes from it on every reconnect. Before its first
 * message it resumes from `start`, the process's last cursor when it connected (as a client that loaded the state
 * over REST would), so it also gets what is published before its first message.
 */
async function subscriber(api: string): Promise<Subscriber> {
  const start = ((await (await fetch(`${api}/extended/v1/status/push`)).json()) as { last_cursor: string }).last_cursor;
  const sub: Subscriber = { socket: undefined as unknown as Socket, cursors: [], disconnects: [] };
  sub.socket = connect(api, {
    transports: ['websocket'],
    query: { subscriptions: 'block' },
    reconnectionDelay: 200,
    reconnectionDelayMax: 1000,
    auth: (cb) => cb({ cursor: sub.cursors.at(-1) ?? start }),
  });
  sub.socket.on('block', (...args: unknown[]) => sub.cursors.push((args.at(-1) as { cursor: string }).cursor));
  sub.socket.on('disconnect', (reason) => sub.disconnects.push(reason));
  return sub;
}

describe('Redis outage during push', () => {
  it('REST keeps answering; subscribers on both processes get every block message once, in order', async () => {
    const observerPort = await freePort();
    const common = { DATABASE_URL: db.url, REDIS_URL: redis.url, RATE_LIMIT_ANON_RPM: '0', LOG_LEVEL: 'info' };
    const ingest = await spawnService(build.main, 'serve', { ...common, OBSERVER_PORT: String(observerPort) });
    children.push(ingest);
    const api = await spawnService(build.main, 'api', common);
    children.push(api);

    const subs = await Promise.all([subscriber(ingest.api), subscriber(api.api), subscriber(api.api)]);
    await Promise.all(subs.map((s) => new Promise<void>((r) => s.socket.once('connect', () => r()))));

    const rest = { ok: 0, failed: [] as string[] };
    let polling = true;
    const poll = (base: string) =>
      (async () => {
        while (polling) {
          try {
            const res = await fetch(`${base}/extended/v1/block?limit=1`, { signal: AbortSignal.timeout(5000) });
            await res.arrayBuffer();
            if (res.status === 200) rest.ok++;
            else rest.failed.push(`${base} ${res.status}`);
          } catch (err) {
            rest.failed.push(`${base} ${String(err)}`);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
    const pollers = [poll(ingest.api), poll(api.api)];

    const lines = readFixture('epoch-3-transition');
    const outageAt = Math.floor(lines.length / 3);
    let outage: Promise<void> | undefined;
    let outageMs = 0;
    const window: number[] = [];
    const stats = await nodeReplay(lines, {
      observer: `http://127.0.0.1:${observerPort}`,
      afterAccepted: async (i) => {
        if (i === outageAt) {
          outage = (async () => {
            const t = Date.now();
            window.push((await published()).length);
            await redis.stop();
            await new Promise((r) => setTimeout(r, 2000));
            await redis.start();
            outageMs = Date.now() - t;
            await new Promise((r) => setTimeout(r, 1000)); // every process has reconnected and re-subscribed by now
            window.push((await published()).length);
          })();
        }
        // deliver at a node-like pace so the outage spans many blocks
        await new Promise((r) => setTimeout(r, 15));
      },
    });
    await outage;
    // let the last publications travel
    async function published() {
      return (
        await db.sql<{ seq: string }[]>`
          SELECT seq::text AS seq FROM push_messages WHERE room = 'block' AND event = 'block' ORDER BY push_messages.seq`
      ).map((r) => r.seq);
    }
    let expected = await published();
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await published();
      if (now.length === expected.length && subs.every((s) => s.cursors.length >= now.length)) break;
      expected = now;
    }
    polling = false;
    await Promise.all(pollers);

    console.log(
      `Redis outage ${outageMs} ms during replay (${JSON.stringify(stats.failures)} node retries): REST ${rest.ok} ok, ` +
        `${rest.failed.length} failed; block messages ${expected.length}; received ${subs.map((s) => s.cursors.length).join('/')}; ` +
        `disconnects ${subs.map((s) => s.disconnects.join('+') || 0).join('/')}; outage between block messages #${window.join('-#')}; ` +
        `missed (by index): ${subs.map((s) => JSON.stringify(expected.flatMap((c, i) => (s.cursors.includes(c) ? [] : [i])))).join(' ')}`,
    );
    expect(stats.messages).toBe(lines.length);
    expect(expected.length).toBeGreaterThan(20);
    expect(rest.failed.slice(0, 5)).toEqual([]);
    expect(rest.ok).toBeGreaterThan(20);
    // Subscribers that stay connected (auto-reconnecting, resuming with their last cursor) miss nothing, those
    // published during the outage included, get nothing twice, in order.
    const [from, to] = window;
    expect(to).toBeGreaterThan(from); // block messages were published during the outage
    for (const s of subs) expect(s.cursors).toEqual(expected);
    // the processes made their clients resume (the outage interrupted every subscription)
    for (const base of [ingest.api, api.api]) {
      const m = (await (await fetch(`${base}/extended/v1/status/push`)).json()) as { forced_resyncs: number };
      expect(m.forced_resyncs).toBeGreaterThan(0);
    }
    for (const s of subs) s.socket.close();

    // Resume by cursor: a client that reconnects with the last cursor it had before the outage gets every later
    // message, those published during the outage included, once and in order, from either process.
    const before = from > 0 ? expected[from - 1] : '0';
    for (const base of [ingest.api, api.api]) {
      const got: string[] = [];
      const s = connect(base, { transports: ['websocket'], query: { subscriptions: 'block' }, auth: { cursor: before }, reconnection: false });
      s.on('block', (...args: unknown[]) => got.push((args.at(-1) as { cursor: string }).cursor));
      await new Promise<void>((r) => s.once('connect', () => r()));
      const want = expected.slice(from);
      for (let i = 0; i < 100 && got.length < want.length; i++) await new Promise((r) => setTimeout(r, 50));
      s.close();
      expect(got).toEqual(want);
    }
  }, 300_000);
});
