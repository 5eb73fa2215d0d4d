/**
 * The replica gate's memory bound, against a real streaming standby whose replay is paused (pg_wal_replay_pause): a
 * replica that stops replaying while the primary keeps committing. The gate holds at most its bound, drops the oldest
 * batches past it, and once replay resumes releases what it kept, in order, with the gap before it that makes the
 * push server's clients resume by cursor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { startReplicatedPostgres, type ReplicatedPostgres } from './helpers/replication.js';
import { ReplicaMonitor, primaryCommitLsn } from '../src/store/replica.js';
import { ReplicaGate } from '../src/push/replica-gate.js';
import type { PublishedMessage } from '../src/store/push-log.js';

let pg: ReplicatedPostgres;
let primary: postgres.Sql;
let standby: postgres.Sql;

beforeAll(async () => {
  pg = await startReplicatedPostgres({ database: 'gate', applyDelayMs: 0 });
  primary = postgres(pg.primary.url(), { max: 2, onnotice: () => {} });
  standby = postgres(pg.standby.url(), { max: 2, onnotice: () => {} });
  await primary`CREATE TABLE chain (n int)`;
  await pg.caughtUp();
}, 240_000);

afterAll(async () => {
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

  it('refuses a bound below one message', async () => {
    const monitor = new ReplicaMonitor(standby, primary, { maxLagMs: 1000 });
    expect(() => new ReplicaGate(monitor, () => undefined, { maxHeld: 0 })).toThrow(/at least 1/);
  });
});

function batch(first: number, n: number, lsn: string): PublishedMessage[] {
  return Array.from({ length: n }, (_, i) => ({ seq: String(first + i), room: 'blocks', event: 'block', args: [{ n: first + i }], lsn }));
}
