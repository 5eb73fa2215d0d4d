/**
 * PostgreSQL connections of a running service die under it, for real: the compiled service runs as a child process
 * against a PostgreSQL server of this file's own (so nothing else on the machine is disturbed), a node-like replayer
 * delivers a fixture (re-sending every non-200), REST readers ask for the chain all along, and
 *   - the service's backends are killed with pg_terminate_backend again and again, mid-ingest and mid-read;
 *   - the server is crashed (pg_ctl -m immediate) and, later, stopped cleanly, and started again each time.
 * The same process (same pid) survives all of it: while the database cannot be reached it answers 503 (REST, /ready,
 * the observer), never a 500, and it recovers by itself. Afterwards every table equals a clean replay of the fixture
 * (event_log contract: nothing acknowledged is lost, nothing is applied twice).
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { freePort, startPostgres, type PgInstance } from '../helpers/instances.js';
import { deliverUntilAccepted, nodeReplay, type NodeReplayStats } from '../helpers/node-replayer.js';
import { readFixture } from '../helpers/fixtures.js';
import { dumpEverything, rankSeq, rankSurrogateIds } from '../helpers/dump.js';
import { createFixtureDatabase } from '../helpers/fixture-db.js';
import { settled } from '../helpers/service.js';
import { connectDatabase } from '../../src/store/connect.js';

// every message kind (burn blocks, blocks, mempool, an epoch transition): 238 messages
const FIXTURE = 'epoch-3-transition';
const lines = readFixture(FIXTURE);
/** REST reads asked all along: lists and the status (each one query or several on the pool) */
const READS = ['/extended/v1/block?limit=5', '/extended/v1/tx?limit=5', '/extended/v1/tx/mempool?limit=5', '/extended/v2/burn-blocks?limit=3', '/extended/v1/status'];

type Dump = Record<string, unknown[]>;
let build: Build;
let pg: PgInstance;
let want: Dump;
let dbCounter = 0;

async function freshDatabase(): Promise<string> {
  return pg.createMigratedDatabase(`kills_${process.pid}_${dbCounter++}`);
}

/** Every chain table (derived ones included) of `url`'s database, surrogate ids and seq values ranked. */
async function everythingOf(url: string): Promise<Dump> {
  const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 2 });
  try {
    return rankSeq(rankSurrogateIds(await dumpEverything(db.sql)));
  } finally {
    await db.close();
  }
}

function expectSameDatabase(actual: Dump, expected: Dump) {
  for (const table of Object.keys(expected)) {
    // a position in event_log, whose ids skip ahead after a crash (sequence caching): completeness is checked by
    // settled() (applied reaches acknowledged) and by event_log's rows being equal
    if (table === 'projector_state') continue;
    expect(actual[table]?.length, `${table} row count`).toBe(expected[table].length);
    expect(actual[table], table).toEqual(expected[table]);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startServe(url: string): Promise<ChildService> {
  const [observer, api] = [await freePort(), await freePort()];
  return spawnService(build.main, 'serve', {
    DATABASE_URL: url,
    OBSERVER_PORT: String(observer),
    API_PORT: String(api),
    LOG_LEVEL: 'info',
    RATE_LIMIT_ANON_RPM: '0',
  });
}

/** Statuses of REST reads and connection failures, asked in a loop until stopped. */
function readLoop(api: string) {
  const statuses: Record<string, number> = {};
  const failures: string[] = [];
  const bodies503: string[] = [];
  let stop = false;
  const done = (async () => {
    for (let i = 0; !stop; i++) {
      const path = READS[i % READS.length];
      try {
        const res = await fetch(api + path, { signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 503 && bodies503.length < 3) bodies503.push(text);
        if (res.status >= 500 && res.status !== 503) failures.push(`${path} → ${res.status}: ${text.slice(0, 300)}`);
      } catch (err) {
        failures.push(`${path} → ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    statuses,
    failures,
    bodies503,
    async stop() {
      stop = true;
      await done;
    },
  };
}

/** Kills every backend of the service (its application_name) in `database` every few tens of milliseconds. */
function killLoop(database: string) {
  const admin = postgres(pg.url(), { max: 1, onnotice: () => {} });
  let stop = false;
  let kills = 0;
  let rounds = 0;
  const done = (async () => {
    while (!stop) {
      const [r] = await admin<{ n: number }[]>`
        SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND application_name = 'stacks-pulse' AND pid <> pg_backend_pid()`;
      kills += r.n;
      rounds++;
      // irregular pauses: the kills land at every stage of a message (logging, projecting, publishing) and of a read,
      // with room for work to complete between them (a kill every few milliseconds would let nothing finish)
      await new Promise((res) => setTimeout(res, 100 + Math.floor(Math.random() * 600)));
    }
  })();
  return {
    kills: () => kills,
    rounds: () => rounds,
    async stop() {
      stop = true;
      await done;
      await admin.end();
    },
  };
}

function totalFailures(s: NodeReplayStats): number {
  return Object.values(s.failures).reduce((a, b) => a + b, 0);
}

beforeAll(async () => {
  // the compilation, this file's server and the reference (a copy of the fixture imported through the pipeline in
  // this process, no fault: test/helpers/fixture-db.ts) side by side
  const reference = async () => {
    const db = await createFixtureDatabase(FIXTURE, 'sp_kills_ref');
    try {
      want = rankSeq(rankSurrogateIds(await dumpEverything(db.sql)));
    } finally {
      await db.drop();
    }
  };
  [build, pg] = await Promise.all([buildService(), startPostgres(), reference()]);
}, 600_000);

afterAll(async () => {
  build?.remove();
  await pg?.destroy();
});

describe('connections that die', () => {
  it('backends killed again and again mid-ingest and mid-read: the process survives, nothing acknowledged is lost', async () => {
    const url = await freshDatabase();
    const database = new URL(url).pathname.slice(1);
    const svc = await startServe(url);
    try {
      const reads = readLoop(svc.api);
      const killer = killLoop(database);
      const stats: NodeReplayStats = { messages: 0, attempts: 0, failures: {} };
      try {
        const started = Date.now();
        const opts = { observer: svc.observer!, giveUpAfterMs: 120_000, attemptTimeoutMs: 60_000 };
        for (const [i, l] of lines.entries()) {
          // paced by the kills, not by the machine's speed: on a fast machine the whole stream would otherwise be
          // stored and projected between a few of them (a kill for every 4 messages; bounded, the assertion below
          // says whether they landed)
          for (const deadline = Date.now() + 30_000; killer.kills() < Math.floor(i / 4) && Date.now() < deadline; ) {
            await new Promise((r) => setTimeout(r, 25));
          }
          await deliverUntilAccepted(l, opts, stats, i);
          stats.messages++;
          if (i % 60 === 0) console.log(`message ${i} accepted after ${Date.now() - started} ms; backends killed so far ${killer.kills()}`);
        }
      } finally {
        await killer.stop();
        await reads.stop();
      }
      // the kills stop: the service catches up by itself (the projector retries, nothing is re-sent)
      await settled(svc.observer!, 180_000);
      expect(alive(svc.pid), svc.output().slice(-3000)).toBe(true);
      expect(svc.output()).not.toContain('uncaught exception: exiting');
      // the kills landed while messages were being stored and projected
      expect(killer.kills()).toBeGreaterThan(50);
      expect(stats.messages).toBe(lines.length);
      // reads got an answer every time: the chain, or 503 while a connection was being replaced; never a 500
      expect(reads.failures, svc.output().split('\n').filter((l) => l.includes('HTTP handler')).slice(0, 3).join('\n')).toEqual([]);
      expect(reads.statuses['200']).toBeGreaterThan(0);
      for (const b of reads.bodies503) expect(JSON.parse(b)).toHaveProperty('message');
      const ready = await fetch(svc.api + '/ready');
      expect(ready.status).toBe(200);
      expectSameDatabase(await everythingOf(url), want);
      console.log(`backend kills: ${killer.kills()}; node re-sends: ${totalFailures(stats)} ${JSON.stringify(stats.failures)}; reads: ${JSON.stringify(reads.statuses)}`);
    } finally {
      await svc.stop();
    }
  }, 900_000);

  it('the server crashed, then stopped, and restarted: the same process answers 503 meanwhile and recovers by itself', async () => {
    const url = await freshDatabase();
    const svc = await startServe(url);
    const opts = { observer: svc.observer!, giveUpAfterMs: 120_000 };
    const thirds = [0, Math.floor(lines.length / 3), Math.floor((2 * lines.length) / 3), lines.length];
    try {
      for (const [n, mode] of [[1, 'immediate'], [2, 'fast']] as const) {
        const part = await nodeReplay(lines.slice(thirds[n - 1], thirds[n]), opts);
        expect(part.messages).toBe(thirds[n] - thirds[n - 1]);
        await pg.stop(mode);
        try {
          // while the server is down: 503 with a JSON reason everywhere, the process still there
          const block = await fetch(svc.api + '/extended/v1/block?limit=1');
          expect(block.status, mode).toBe(503);
          expect(((await block.json()) as { message: string }).message).toMatch(/database unavailable/);
          const ready = await fetch(svc.api + '/ready');
          expect(ready.status, mode).toBe(503);
          const body = (await ready.json()) as { failed: string[] };
          expect(body.failed).toContain('database');
          const health = await fetch(svc.api + '/health');
          expect(health.status).toBe(200);
          const next = lines[thirds[n]];
          const post = await fetch(svc.observer! + next.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: next.body });
          await post.arrayBuffer();
          expect(post.status, mode).toBe(503);
          expect(alive(svc.pid)).toBe(true);
        } finally {
          await pg.start();
        }
        // ready again without any restart of the process
        const deadline = Date.now() + 60_000;
        let status = 0;
        while (Date.now() < deadline && status !== 200) {
          status = (await fetch(svc.api + '/ready')).status;
          if (status !== 200) await new Promise((r) => setTimeout(r, 100));
        }
        expect(status, `${mode}: ready again`).toBe(200);
      }
      const stats: NodeReplayStats = { messages: 0, attempts: 0, failures: {} };
      for (const l of lines.slice(thirds[2])) await deliverUntilAccepted(l, opts, stats);
      await settled(svc.observer!, 120_000);
      expect(alive(svc.pid)).toBe(true);
      expect(svc.output()).not.toContain('uncaught exception: exiting');
      expect((await fetch(svc.api + '/extended/v1/block?limit=1')).status).toBe(200);
      expectSameDatabase(await everythingOf(url), want);
    } finally {
      await svc.stop();
    }
  }, 300_000);
});
