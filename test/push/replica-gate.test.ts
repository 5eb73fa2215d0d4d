/**
 * The replica gate's memory bound, against a real streaming standby whose replay is paused (pg_wal_replay_pause): a
 * replica that stops replaying while the primary keeps committing. The gate holds at most its bound, drops the oldest
 * batches past it, and once replay resumes releases what it kept, in order, with the gap before it that makes the
 * push server's clients resume by cursor. End to end (compiled CLI, an `ingest` process on the primary, an `api`
 * process on the standby with a tiny bound, Redis between them): a Socket.IO client still gets every block message,
 * once, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replication.js';
import { ReplicaMonitor, primaryCommitLsn } from '../../src/store/replica.js';
import { ReplicaGate } from '../../src/push/replica-gate.js';
import type { PublishedMessage } from '../../src/store/push-log.js';
import { randomBytes } from 'node:crypto';
import { io as connect, type Socket } from 'socket.io-client';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { freePort } from '../helpers/instances.js';
import { deliverUntilAccepted } from '../helpers/node-replayer.js';
import { ChainGenerator } from '../../load/generator/index.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let pg: ReplicatedPostgres;
let primary: postgres.Sql;
let standby: postgres.Sql;
let build: Build | undefined;
const children: ChildService[] = [];

beforeAll(async () => {
  [pg, build] = await Promise.all([startReplicatedPostgres({ database: 'gate', applyDelayMs: 0 }), buildService()]);
  primary = postgres(pg.primary.url(), { max: 2, onnotice: () => {} });
  standby = postgres(pg.standby.url(), { max: 2, onnotice: () => {} });
  await primary`CREATE TABLE chain (n int)`;
  await pg.caughtUp();
}, 600_000);

afterAll(async () => {
  for (const c of children) await c.stop().catch(() => undefined);
  build?.remove();
  await primary?.end();
  await standby?.end();
  await pg?.destroy();
});

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('replica gate bound', () => {
  it('holds at most its bound while the replica does not replay, then releases the newest kept batches in order', async () => {
    const MAX = 50;
    const PER_BATCH = 7;
    const BATCHES = 40;
    const monitor = new ReplicaMonitor(standby, primary, { maxLagMs: 600_000, pollMs: 10, idleMs: 100 });
    await monitor.start();
    const released: PublishedMessage[][] = [];
    const gate = new ReplicaGate(monitor, (msgs) => released.push(msgs), { maxHeld: MAX });
    let seq = 0;
    try {
      // a batch committed while replay runs goes out once the standby has it
      await primary`INSERT INTO chain VALUES (0)`;
      gate.push(batch(++seq, 1, await primaryCommitLsn(primary)));
      await waitFor('the first batch released', () => released.length === 1);

      await standby`SELECT pg_wal_replay_pause()`;
      await waitFor('replay paused', async () => (await standby<{ s: string }[]>`SELECT pg_get_wal_replay_pause_state() AS s`)[0].s === 'paused');
      let most = 0;
      const pushed: string[] = [];
      for (let b = 0; b < BATCHES; b++) {
        await primary`INSERT INTO chain VALUES (${b + 1})`;
        const msgs = batch(seq + 1, PER_BATCH, await primaryCommitLsn(primary));
        seq += PER_BATCH;
        pushed.push(...msgs.map((m) => m.seq));
        gate.push(msgs);
        most = Math.max(most, gate.waiting);
      }
      // a few polls later still nothing went out: the replica has not replayed any of it
      const polls = monitor.status().replayLsn;
      await new Promise((r) => setTimeout(r, 300));
      expect(monitor.status().replayLsn).toBe(polls);
      expect(released).toHaveLength(1);
      // bounded: never more than MAX held; what is over was dropped, oldest first
      expect(most).toBeLessThanOrEqual(MAX);
      expect(gate.waiting).toBe(Math.floor(MAX / PER_BATCH) * PER_BATCH);
      expect(gate.dropped).toBe(BATCHES * PER_BATCH - gate.waiting);

      await standby`SELECT pg_wal_replay_resume()`;
      await waitFor('the kept batches released', () => gate.waiting === 0);
      const out = released.slice(1).flat().map((m) => m.seq);
      // the newest messages, in publication order; the first of them does not follow the last one delivered
      expect(out).toEqual(pushed.slice(pushed.length - out.length));
      expect(Number(out[0])).toBeGreaterThan(Number(released[0][0].seq) + 1);
      expect(monitor.status().ok).toBe(true);
    } finally {
      await monitor.close();
    }
  }, 120_000);

  it('keeps the newest batch even when it alone is over the bound', async () => {
    const monitor = new ReplicaMonitor(standby, primary, { maxLagMs: 600_000, pollMs: 10, idleMs: 100 });
    await monitor.start();
    const released: PublishedMessage[][] = [];
    const gate = new ReplicaGate(monitor, (msgs) => released.push(msgs), { maxHeld: 3 });
    try {
      await standby`SELECT pg_wal_replay_pause()`;
      await primary`INSERT INTO chain VALUES (-1)`;
      gate.push(batch(1000, 2, await primaryCommitLsn(primary)));
      await primary`INSERT INTO chain VALUES (-2)`;
      gate.push(batch(1002, 5, await primaryCommitLsn(primary)));
      expect(gate.waiting).toBe(5);
      expect(gate.dropped).toBe(2);
      await standby`SELECT pg_wal_replay_resume()`;
      await waitFor('released', () => gate.waiting === 0);
      expect(released.flat().map((m) => m.seq)).toEqual(['1002', '1003', '1004', '1005', '1006']);
    } finally {
      await standby`SELECT pg_wal_replay_resume()`.catch(() => undefined);
      await monitor.close();
    }
  }, 120_000);

  it('an api process on a standby that stops replaying holds at most its bound, and its client misses nothing', async () => {
    const env = {
      DATABASE_URL: pg.primary.url(),
      REDIS_URL,
      REDIS_KEY_PREFIX: `sp-gate-${process.pid}-${randomBytes(4).toString('hex')}`,
      RATE_LIMIT_ANON_RPM: '0',
      LOG_LEVEL: 'info',
    };
    const ingest = await spawnService(build!.main, 'ingest', env, { timeoutMs: 120_000 });
    children.push(ingest);
    await pg.caughtUp();
    const metricsPort = await freePort();
    const api = await spawnService(
      build!.main,
      'api',
      { ...env, DATABASE_READ_URL: pg.standby.url(), REPLICA_MAX_HELD_MESSAGES: '3', METRICS_PORT: String(metricsPort) },
      { timeoutMs: 120_000 },
    );
    children.push(api);
    const gauge = async (name: string) => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : undefined;
    };
    const gen = new ChainGenerator({ blocks: 30, txsPerBlock: 2, seed: 'replica-gate', forks: false, mempool: false, microblocks: false });
    const messages: { path: string; body: string }[] = [];
    for await (const m of gen.messages()) messages.push(m);
    const post = (m: { path: string; body: string }, i: number) =>
      deliverUntilAccepted(m, { observer: ingest.observer!, giveUpAfterMs: 120_000 }, { messages: 0, attempts: 0, failures: {} }, i);

    let cursor = '0';
    const got: string[] = [];
    const socket: Socket = connect(api.api, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 200,
      reconnectionDelayMax: 1000,
      query: { subscriptions: 'block' },
      auth: (cb) => cb({ cursor }),
    });
    socket.on('block', (...args: unknown[]) => {
      cursor = String((args.at(-1) as { cursor: string }).cursor);
      got.push(cursor);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      const third = Math.floor(messages.length / 3);
      for (const [i, m] of messages.slice(0, third).entries()) await post(m, i);
      await standby`SELECT pg_wal_replay_pause()`;
      let most = 0;
      for (const [i, m] of messages.slice(third).entries()) {
        await post(m, third + i);
        most = Math.max(most, (await gauge('stacks_pulse_push_replica_held_messages')) ?? 0);
      }
      // everything is stored and published on the primary
      await waitFor('the projector and the publisher', async () => {
        const [{ done }] = await primary<{ done: boolean }[]>`
          SELECT (SELECT applied_id FROM projector_state) >= (SELECT COALESCE(max(id), 0) FROM event_log)
             AND NOT EXISTS (SELECT 1 FROM push_outbox) AS done`;
        return done;
      }, 120_000);
      await waitFor('the api process to drop what is over its bound', async () => ((await gauge('stacks_pulse_push_replica_dropped_messages')) ?? 0) > 0);
      const held = (await gauge('stacks_pulse_push_replica_held_messages')) ?? -1;
      const dropped = (await gauge('stacks_pulse_push_replica_dropped_messages')) ?? -1;
      most = Math.max(most, held);
      // 3, or the newest batch when the projector applied several blocks in one transaction: far below what waited
      expect(held).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(8);
      const [{ paused }] = await primary<{ paused: number }[]>`
        SELECT count(*)::int AS paused FROM push_messages WHERE room = 'block' AND seq > ${cursor}::bigint`;
      expect(held + dropped).toBeGreaterThanOrEqual(paused);
      expect(paused).toBeGreaterThan(10);

      await standby`SELECT pg_wal_replay_resume()`;
      const expected = (await primary<{ seq: string }[]>`
        SELECT seq::text AS seq FROM push_messages WHERE room = 'block' AND event = 'block' ORDER BY push_messages.seq`).map((r) => r.seq);
      expect(expected.length).toBeGreaterThan(20);
      await waitFor('every block message', () => got.length >= expected.length && got.at(-1) === expected.at(-1), 120_000).catch((err: Error) => {
        const log = api.output().split('\n').filter((l) => /resume|gap|replica/i.test(l)).slice(-8).join('\n');
        throw new Error(`${err.message}: got ${got.length} (${got.slice(-5).join(',')}), expected ${expected.length} (${expected.slice(-5).join(',')})\n${log}`);
      });
      expect(got).toEqual(expected);
      expect(api.output()).toContain('clients resume');
    } finally {
      socket.close();
      await standby`SELECT pg_wal_replay_resume()`.catch(() => undefined);
    }
  }, 600_000);

  it('refuses a bound below one message', async () => {
    const monitor = new ReplicaMonitor(standby, primary, { maxLagMs: 1000 });
    expect(() => new ReplicaGate(monitor, () => undefined, { maxHeld: 0 })).toThrow(/at least 1/);
  });
});

function batch(first: number, n: number, lsn: string): PublishedMessage[] {
  return Array.from({ length: n }, (_, i) => ({ seq: String(first + i), room: 'blocks', event: 'block', args: [{ n: first + i }], lsn }));
}
