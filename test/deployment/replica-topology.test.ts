/**
 * The scale-out deployment on a real streaming replica: a PostgreSQL primary and a hot standby whose apply is delayed
 * (recovery_min_apply_delay), one `ingest` process on the primary, two `api` processes reading the standby
 * (DATABASE_READ_URL), Redis between them, every process spawned from the compiled CLI.
 *
 *  - every block a Socket.IO client is told about can be read at once from the api process that told it (a fixture
 *    and a generated chain with forks);
 *  - the api processes answer the reference's requests like a process reading the primary;
 *  - a stopped standby makes both api processes not ready (and their REST reads 503), its restart makes them ready;
 *  - a rolling restart of one api process loses no message for a client that resumes by cursor, also when the last
 *    messages are published while the restarted process is not yet subscribed to Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import postgres from 'postgres';
import { io as connect, type Socket } from 'socket.io-client';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replication.js';
import { freePort } from '../helpers/instances.js';
import { readFixture, readGolden } from '../helpers/fixtures.js';
import { deliverUntilAccepted } from '../helpers/node-replayer.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { GeneratedMessage } from '../../load/generator/types.js';

const APPLY_DELAY_MS = 300;
const FIXTURE = 'epoch-3-transition';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Deployment {
  pg: ReplicatedPostgres;
  ingest: ChildService;
  apis: ChildService[];
  apiPorts: number[];
  env: Record<string, string>;
}

let build: Build | undefined;
const deployments: Deployment[] = [];

async function deploy(database: string): Promise<Deployment> {
  const pg = await startReplicatedPostgres({ database, applyDelayMs: APPLY_DELAY_MS });
  const d: Deployment = { pg, ingest: undefined as unknown as ChildService, apis: [], apiPorts: [], env: {} };
  deployments.push(d);
  d.env = {
    DATABASE_URL: pg.primary.url(),
    REDIS_URL,
    // a prefix of its own: parallel test files on the same Redis never see each other's messages
    REDIS_KEY_PREFIX: `sp-topology-${process.pid}-${randomBytes(4).toString('hex')}`,
    RATE_LIMIT_ANON_RPM: '0',
    LOG_LEVEL: 'warn',
  };
  // ingest first: it applies the migrations on the primary
  d.ingest = await spawnService(build!.main, 'ingest', { ...d.env, LOG_LEVEL: 'info' }, { timeoutMs: 120_000 });
  await pg.caughtUp();
  d.apiPorts = [await freePort(), await freePort()];
  d.apis = await Promise.all(d.apiPorts.map((port) => startApi(d, port)));
  return d;
}

function startApi(d: Deployment, port: number, env: Record<string, string> = {}): Promise<ChildService> {
  return spawnService(
    build!.main,
    'api',
    { ...d.env, DATABASE_READ_URL: d.pg.standby.url(), API_PORT: String(port), REPLICA_MAX_LAG_MS: '5000', LOG_LEVEL: 'info', ...env },
    { timeoutMs: 120_000 },
  );
}

const relays: net.Server[] = [];

/**
 * A TCP relay to Redis that holds every connection's bytes until open(): to the process connecting through it, a
 * Redis that answers late (its commands, the push channel subscription among them, wait), not one that is down (which
 * would close the connection and make the process resync by itself).
 */
async function heldRedisRelay(target: string): Promise<{ url: string; open(): void }> {
  const u = new URL(target);
  let opened = false;
  const waiting: (() => void)[] = [];
  const server = net.createServer((client) => {
    const early: Buffer[] = [];
    const keep = (b: Buffer) => early.push(b);
    client.on('data', keep);
    client.on('error', () => undefined);
    const relay = () => {
      const upstream = net.connect(Number(u.port || 6379), u.hostname);
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      upstream.once('connect', () => {
        client.off('data', keep);
        for (const b of early) upstream.write(b);
        client.pipe(upstream);
        upstream.pipe(client);
      });
    };
    if (opened) relay();
    else waiting.push(relay);
  });
  relays.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}${u.pathname}`,
    open() {
      opened = true;
      waiting.splice(0).forEach((f) => f());
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/**
 * A Socket.IO client following `block` on one api process: for every block message it asks that same process for the
 * block at once, and records what came back.
 */
function blockReader(api: string) {
  const checks: Promise<{ hash: string; status: number }>[] = [];
  const socket: Socket = connect(api, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    query: { subscriptions: 'block' },
  });
  socket.on('block', (block: { hash: string }) => {
    checks.push(
      fetch(`${api}/extended/v1/block/${block.hash}`, { signal: AbortSignal.timeout(30_000) }).then(async (r) => {
        await r.arrayBuffer();
        return { hash: block.hash, status: r.status };
      }),
    );
  });
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return { socket, checks, connected };
}

/**
 * Once the projector has applied every logged message and the publisher has stored every change's messages: how many
 * `block` messages there are (read on the primary; the room's `reorg` messages are not counted).
 */
async function settle(sql: postgres.Sql): Promise<void> {
  await until('the projector and the publisher to catch up', async () => {
    const [{ done }] = await sql<{ done: boolean }[]>`
      SELECT (SELECT applied_id FROM projector_state) >= (SELECT COALESCE(max(id), 0) FROM event_log)
         AND NOT EXISTS (SELECT 1 FROM push_outbox) AS done`;
    return done ? true : undefined;
  });
}

async function settledBlockMessages(d: Deployment): Promise<number> {
  const sql = postgres(d.pg.primary.url(), { max: 1, onnotice: () => {} });
  try {
    await settle(sql);
    const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_messages WHERE room = 'block' AND event = 'block'`;
    return n;
  } finally {
    await sql.end();
  }
}

async function post(observer: string, m: { path: string; body: string }, index: number): Promise<void> {
  await deliverUntilAccepted(m, { observer, giveUpAfterMs: 120_000 }, { messages: 0, attempts: 0, failures: {} }, index);
}

beforeAll(async () => {
  build = await buildService();
}, 600_000);

afterAll(async () => {
  for (const d of deployments) {
    for (const s of [...d.apis, d.ingest]) await s?.stop().catch(() => undefined);
    await d.pg.destroy().catch(() => undefined);
  }
  for (const r of relays) r.close();
  build?.remove();
}, 300_000);

describe('api processes on a delayed streaming replica', () => {
  let fixture: Deployment;

  it('delivers no block message the same api process cannot serve at once (fixture)', async () => {
    fixture = await deploy('sp_topology_fixture');
    const readers = fixture.apis.map((a) => blockReader(a.api));
    await Promise.all(readers.map((r) => r.connected));
    const lines = readFixture(FIXTURE);
    for (const [i, line] of lines.entries()) await post(fixture.ingest.observer!, line, i);
    const blocks = await settledBlockMessages(fixture);
    expect(blocks).toBeGreaterThan(40);
    // every block message reached both processes
    await until('every block message', () => (readers.every((r) => r.checks.length >= blocks) ? true : undefined));
    for (const r of readers) {
      const results = await Promise.all(r.checks);
      const misses = results.filter((x) => x.status !== 200);
      expect(results.length).toBe(blocks);
      expect(misses).toEqual([]);
      r.socket.close();
    }
  }, 600_000);

  it('answers the reference requests like a process reading the primary', async () => {
    await fixture.pg.caughtUp();
    // a process that reads the primary (no DATABASE_READ_URL) is the single-process answer
    const single = await spawnService(build!.main, 'api', { ...fixture.env, API_PORT: '0', LOG_LEVEL: 'info' }, { timeoutMs: 120_000 });
    fixture.apis.push(single); // stopped with the rest
    const golden = readGolden<{ request: string }[]>(`${FIXTURE}.json`);
    const requests = golden.map((g) => g.request).filter((r, i) => i % 3 === 0 && !r.includes('/mempool'));
    expect(requests.length).toBeGreaterThan(20);
    let compared = 0;
    for (const request of requests) {
      const [a, b, want] = await Promise.all([fixture.apis[0], fixture.apis[1], single].map((s) => getJson(s.api + request)));
      expect({ request, ...a }).toEqual({ request, ...want });
      expect({ request, ...b }).toEqual({ request, ...want });
      compared++;
    }
    expect(compared).toBe(requests.length);
  }, 600_000);

  it('is not ready while the replica is down, and ready again once it is back', async () => {
    const [api1, api2] = fixture.apis;
    for (const a of [api1, api2]) expect((await getJson(`${a.api}/ready`)).status).toBe(200);
    await fixture.pg.standby.stop('fast');
    for (const a of [api1, api2]) {
      const ready = await until('not ready', async () => {
        const r = await getJson(`${a.api}/ready`);
        return r.status === 503 ? r : undefined;
      });
      expect(ready.body).toMatchObject({ status: 'not ready', failed: ['replica'], checks: { replica: { ok: false }, database: { ok: true } } });
      const read = await getJson(`${a.api}/extended/v1/block?limit=1`);
      expect(read.status).toBe(503);
      expect((read.body as { message: string }).message).toMatch(/read replica unreachable/);
      expect((await getJson(`${a.api}/health`)).status).toBe(200);
    }
    await fixture.pg.standby.start();
    for (const a of [api1, api2]) {
      await until('ready again', async () => ((await getJson(`${a.api}/ready`)).status === 200 ? true : undefined));
      expect((await getJson(`${a.api}/extended/v1/block?limit=1`)).status).toBe(200);
    }
  }, 600_000);
});

describe('a generated chain with forks', () => {
  let chain: Deployment;
  let messages: GeneratedMessage[] = [];

  beforeAll(async () => {
    const gen = new ChainGenerator({ blocks: 48, txsPerBlock: 3, seed: 'replica-topology', forks: true, forkEvery: 6, forkDepth: 2, mempool: false, microblocks: false });
    messages = [];
    for await (const m of gen.messages()) messages.push(m);
  }, 300_000);

  it('delivers no block message the same api process cannot serve at once', async () => {
    chain = await deploy('sp_topology_chain');
    const readers = chain.apis.map((a) => blockReader(a.api));
    await Promise.all(readers.map((r) => r.connected));
    const half = messages.slice(0, Math.floor(messages.length / 2));
    for (const [i, m] of half.entries()) await post(chain.ingest.observer!, m, i);
    const blocks = await settledBlockMessages(chain);
    expect(blocks).toBeGreaterThan(20); // one per stored block above height 1, forks included
    await until('every block message', () => (readers.every((r) => r.checks.length >= blocks) ? true : undefined));
    for (const r of readers) {
      const results = await Promise.all(r.checks);
      expect(results.length).toBe(blocks);
      expect(results.filter((x) => x.status !== 200)).toEqual([]);
      r.socket.close();
    }
  }, 600_000);

  // A process that starts while messages are being published takes its starting cursor only once its push channel
  // subscription is active and its replica has replayed what the primary had then (PushServer.startingCursor): a
  // message published just before it subscribed reached a resuming client only with the next message, and at the end
  // of a stream never.
  it('loses no message for a client that resumes by cursor across a rolling restart', async () => {
    const url = chain.apis[0].api;
    const primary = postgres(chain.pg.primary.url(), { max: 1, onnotice: () => {} });
    try {
      const [{ start }] = await primary<{ start: string }[]>`SELECT COALESCE(max(seq), 0)::text AS start FROM push_messages`;
      let cursor = start;
      const got: string[] = [];
      const socket: Socket = connect(url, {
        transports: ['websocket'],
        forceNew: true,
        reconnectionDelay: 200,
        reconnectionDelayMax: 1000,
        query: { subscriptions: 'block' },
        // read at every (re)connection: the client resumes after the last message it got
        auth: (cb) => cb({ cursor }),
      });
      socket.on('block', (...args: unknown[]) => {
        cursor = String((args.at(-1) as { cursor: string }).cursor);
        got.push(cursor);
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      const rest = messages.slice(Math.floor(messages.length / 2), -4);
      const tail = messages.slice(-4);
      const third = Math.floor(rest.length / 3);
      let posted = 0;
      const sender = (async () => {
        for (const [i, m] of rest.entries()) {
          await post(chain.ingest.observer!, m, i);
          posted++;
        }
      })();
      // restart the client's api process (same port) while the chain keeps coming
      await until('a third of the chain', () => (posted >= third ? true : undefined));
      await chain.apis[0].stop();
      chain.apis[0] = await startApi(chain, chain.apiPorts[0]);
      await sender;
      await settle(primary);
      await chain.pg.caughtUp();
      // Restart it again, the end of the stream published while its Redis answers late: the process has started
      // (its standby lags the primary) but is not subscribed to the push channel yet, and no message follows the
      // tail. Its clients must still get the tail, from the standby, once the process has a starting cursor.
      const [{ before }] = await primary<{ before: string }[]>`SELECT COALESCE(max(seq), 0)::text AS before FROM push_messages`;
      await chain.apis[0].stop();
      const relay = await heldRedisRelay(REDIS_URL);
      chain.apis[0] = await startApi(chain, chain.apiPorts[0], { REDIS_URL: relay.url, PUSH_START_WAIT_MS: '300000' });
      for (const [i, m] of tail.entries()) await post(chain.ingest.observer!, m, rest.length + i);
      await settle(primary);
      await chain.pg.caughtUp();
      const [{ late }] = await primary<{ late: number }[]>`
        SELECT count(*)::int AS late FROM push_messages WHERE room = 'block' AND event = 'block' AND seq > ${before}::bigint`;
      expect(late).toBeGreaterThan(0);
      relay.open();
      // every message the chain makes is stored before the expected list is read: a message stored later would be
      // one the client gets but the list lacks
      await settle(primary);
      await chain.pg.caughtUp();
      const expected = (
        await primary<{ seq: string }[]>`SELECT seq::text AS seq FROM push_messages WHERE room = 'block' AND event = 'block' AND seq > ${start}::bigint ORDER BY seq`
      ).map((r) => r.seq);
      expect(expected.length).toBeGreaterThan(10);
      // wait until the client has the last one (or the time is up), then compare: a difference shows as a diff
      await until('every block message after the restart', () => (got.length >= expected.length || got.includes(expected.at(-1)!) ? true : undefined)).catch(() => undefined);
      // on a difference, what was missed or repeated and what the restarted process logged (warnings and up)
      const diagnosis = () =>
        JSON.stringify({
          missing: expected.filter((c) => !got.includes(c)),
          repeated: got.filter((c, i) => got.indexOf(c) !== i),
          unexpected: got.filter((c) => !expected.includes(c)),
          restarted: chain.apis[0].output().split('\n').filter((l) => /"level":(40|50|60)/.test(l)).slice(-20),
        });
      expect(got, diagnosis()).toEqual(expected);
      socket.close();
    } finally {
      await primary.end();
    }
  }, 600_000);
});
