/**
 * Faults with real processes: the compiled service runs as a child process against a PostgreSQL server of this
 * file's own (separate data directory and port), a node-like replayer (test/helpers/node-replayer.ts) delivers a
 * fixture and retries every non-200, and the resulting database must equal a clean replay of the same fixture.
 *   - PostgreSQL crashed (pg_ctl -m immediate) and restarted, and stopped cleanly and restarted, mid-replay
 *   - the service SIGKILLed mid-message and restarted, three times
 *   - every message delivered twice, then the node's backlog re-sent after a restart
 *   - SIGTERM: stops accepting, finishes the message in flight, tells socket clients to reconnect, exits 0 in 10 s
 *   - import-events SIGKILLed mid-batch (also with the API-only indexes deferred), and PostgreSQL crashed mid-import:
 *     a re-run resumes at the projector's place and the tables (every derived one) equal a clean import
 *   - import-events SIGKILLed while committed batches' derived tables are still owed, then PostgreSQL crashed: the
 *     owed flips survive and the next run applies them
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChainGenerator } from '../../load/generator/index.js';
import { importEvents } from '../../src/replay.js';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { freePort, startPostgres, type PgInstance } from '../helpers/instances.js';
import { deliverUntilAccepted, nodeReplay, type NodeReplayStats } from '../helpers/node-replayer.js';
import { readFixture } from '../helpers/fixtures.js';
import { createFixtureDatabase } from '../helpers/fixture-db.js';
import { dumpDatabase, dumpEverything, rankSeq, rankSurrogateIds } from '../helpers/dump.js';
import { connectDatabase } from '../../src/store/connect.js';
import type { Sql } from '../../src/store/sql.js';
import { migrate } from '../../src/store/migrate.js';
import { DEFERRABLE_INDEXES, deferredIndexCount } from '../../src/store/bulk-indexes.js';
import { createLogger } from '../../src/logger.js';

// A fixture with every message kind (burn blocks, blocks, mempool, an epoch transition): 238 messages.
const FIXTURE = 'epoch-3-transition';
// A second one with a fork and microblocks for the duplicate test.
const FORK_FIXTURES = ['mainnet-reorg-scenario2', 'mainnet-out-of-order-microblock'];

let build: Build;
let pg: PgInstance;
let dbCounter = 0;
const lines = readFixture(FIXTURE);
type Dump = Record<string, unknown[]>;
const clean = new Map<string, Dump>();

async function freshDatabase(): Promise<string> {
  return pg.createMigratedDatabase(`faults_${process.pid}_${dbCounter++}`);
}

/** Dump of `url`'s database. */
async function dumpOf(url: string): Promise<Dump> {
  const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 2 });
  try {
    return rankSeq(await dumpDatabase(db.sql));
  } finally {
    await db.close();
  }
}

/** Every table derived from the chain in `url`'s database, seq values ranked. */
async function everythingOf(url: string): Promise<Dump> {
  const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 2 });
  try {
    return rankSeq(rankSurrogateIds(await dumpEverything(db.sql)));
  } finally {
    await db.close();
  }
}

/**
 * The reference result: the fixture fed in order through the pipeline in this process, no fault (a copy of its
 * imported database, test/helpers/fixture-db.ts).
 */
async function cleanDump(name: string): Promise<Dump> {
  const cached = clean.get(name);
  if (cached) return cached;
  const db = await createFixtureDatabase(name, 'sp_faults_ref');
  try {
    const d = rankSeq(await dumpDatabase(db.sql));
    clean.set(name, d);
    return d;
  } finally {
    await db.drop();
  }
}

function expectSameDatabase(actual: Dump, expected: Dump, label = '') {
  for (const table of Object.keys(expected)) {
    expect(actual[table]?.length, `${label} ${table} row count`).toBe(expected[table].length);
    expect(actual[table], `${label} ${table}`).toEqual(expected[table]);
  }
}

/** One service process (observer + API) on fixed ports, so a restarted one is reachable where the old one was. */
interface Ports {
  observer: number;
  api: number;
}
async function ports(): Promise<Ports> {
  return { observer: await freePort(), api: await freePort() };
}
function serviceEnv(url: string, p: Ports): Record<string, string> {
  return {
    DATABASE_URL: url,
    OBSERVER_PORT: String(p.observer),
    API_PORT: String(p.api),
    LOG_LEVEL: 'info',
    RATE_LIMIT_ANON_RPM: '0',
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function totalFailures(s: NodeReplayStats): number {
  return Object.values(s.failures).reduce((a, b) => a + b, 0);
}

beforeAll(async () => {
  [build, pg] = await Promise.all([buildService(), startPostgres(), cleanDump(FIXTURE)]);
}, 300_000);

afterAll(async () => {
  build?.remove();
  await pg?.destroy();
});

describe('faults', () => {
  it('PostgreSQL crashed and restarted, then stopped and restarted, mid-replay: same database as a clean replay', async () => {
    const url = await freshDatabase();
    const p = await ports();
    let svc = await spawnService(build.main, 'serve', serviceEnv(url, p));
    const restarts: Promise<void>[] = [];
    let crashes = 0;
    let respawning: Promise<void> | undefined;
    const at = new Map<number, 'immediate' | 'fast'>([
      [Math.floor(lines.length / 3), 'immediate'],
      [Math.floor((2 * lines.length) / 3), 'fast'],
    ]);
    try {
      const stats = await nodeReplay(lines, {
        observer: `http://127.0.0.1:${p.observer}`,
        giveUpAfterMs: 90_000,
        beforeAttempt: async (i, attempt) => {
          // a supervisor (systemd Restart=always, Kubernetes): a process that exited is started again
          if (attempt > 1 && !alive(svc.pid)) {
            crashes++;
            respawning ??= (async () => {
              await svc.stop();
              // it exits again while PostgreSQL is still down (startup needs the database): keep restarting
              for (let n = 0; ; n++) {
                try {
                  svc = await spawnService(build.main, 'serve', serviceEnv(url, p));
                  return;
                } catch (err) {
                  if (n > 60) throw err;
                  await new Promise((r) => setTimeout(r, 500));
                }
              }
            })().finally(() => (respawning = undefined));
            await respawning;
          }
          const mode = at.get(i);
          if (!mode || attempt !== 1) return;
          // the server goes away while this message is being stored (or just before), and comes back 1.5 s later
          restarts.push(
            (async () => {
              await pg.stop(mode);
              await new Promise((r) => setTimeout(r, 1500));
              await pg.start();
            })(),
          );
        },
      });
      await Promise.all(restarts);
      expect(stats.messages).toBe(lines.length);
      // the outages were seen by the node (non-200 answers), and the service survived them
      expect(totalFailures(stats)).toBeGreaterThan(0);
      const status = await fetch(`http://127.0.0.1:${p.api}/extended/v1/status`);
      expect(status.status).toBe(200);
      expectSameDatabase(await dumpOf(url), clean.get(FIXTURE)!);
      // reported, not asserted: postgres.js 3.4.9 can crash the process when the server goes away (see src/main.ts)
      console.log(`PostgreSQL restarts: ${JSON.stringify(stats)}; service process exits: ${crashes}`);
    } finally {
      await Promise.allSettled(restarts);
      await svc.stop();
    }
  }, 300_000);

  it('the service SIGKILLed mid-message three times and restarted: same database as a clean replay', async () => {
    const url = await freshDatabase();
    const p = await ports();
    let svc: ChildService = await spawnService(build.main, 'serve', serviceEnv(url, p));
    const killAt = new Set([40, 120, 200].map((k) => Math.min(k, lines.length - 1)));
    const restarts: Promise<void>[] = [];
    let kills = 0;
    try {
      const stats = await nodeReplay(lines, {
        observer: `http://127.0.0.1:${p.observer}`,
        giveUpAfterMs: 90_000,
        beforeAttempt: (i, attempt) => {
          if (!killAt.has(i) || attempt !== 1) return;
          const victim = svc;
          restarts.push(
            (async () => {
              // the message is on its way: kill while it is read, decoded or stored
              await new Promise((r) => setTimeout(r, 3));
              process.kill(victim.pid, 'SIGKILL');
              kills++;
              await victim.stop();
              svc = await spawnService(build.main, 'serve', serviceEnv(url, p));
            })(),
          );
        },
      });
      await Promise.all(restarts);
      expect(kills).toBe(3);
      expect(stats.messages).toBe(lines.length);
      expect(totalFailures(stats)).toBeGreaterThan(0);
      expectSameDatabase(await dumpOf(url), clean.get(FIXTURE)!);
    } finally {
      await Promise.allSettled(restarts);
      await svc.stop();
    }
  }, 300_000);

  it('every message delivered twice, then the backlog re-sent after a restart: same database', async () => {
    for (const name of [FIXTURE, ...FORK_FIXTURES]) {
      const fixture = name === FIXTURE ? lines : readFixture(name);
      const expected = await cleanDump(name);
      const url = await freshDatabase();
      const p = await ports();
      let svc = await spawnService(build.main, 'serve', serviceEnv(url, p));
      try {
        const opts = { observer: `http://127.0.0.1:${p.observer}` };
        const stats: NodeReplayStats = { messages: 0, attempts: 0, failures: {} };
        for (let i = 0; i < fixture.length; i++) {
          await deliverUntilAccepted(fixture[i], opts, stats, i);
          await deliverUntilAccepted(fixture[i], opts, stats, i);
        }
        expect(stats.failures, name).toEqual({});
        expect(stats.attempts, name).toBe(2 * fixture.length);
        // the node restarts and re-sends what it is not sure was delivered: here, the last half of the stream
        // (a node re-sends from its last acknowledged block; a generous backlog is the stricter test)
        await svc.stop();
        svc = await spawnService(build.main, 'serve', serviceEnv(url, p));
        const backlog = await nodeReplay(fixture.slice(Math.floor(fixture.length / 2)), opts);
        expect(backlog.failures, `${name} backlog`).toEqual({});
        expect(svc.output(), name).toContain('duplicate');
        expectSameDatabase(await dumpOf(url), expected, name);
      } finally {
        await svc.stop();
      }
    }
  }, 300_000);
});

describe('import-events faults', () => {
  let dir: string;
  let file: string;
  let want: Dump;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sp-import-faults-'));
    file = path.join(dir, 'chain.tsv');
    const gen = new ChainGenerator({ blocks: 160, txsPerBlock: 8, seed: 'import-faults', forks: true, forkEvery: 9, forkDepth: 2, microblockEvery: 5 });
    const out: string[] = [];
    let i = 0;
    for await (const m of gen.messages()) out.push(`${++i}\t${new Date(1_700_000_000_000 + i * 1000).toISOString()}\t${m.path}\t${m.body}`);
    writeFileSync(file, out.join('\n') + '\n');
    // the clean import, in this process
    const url = await freshDatabase();
    const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 4 });
    try {
      await migrate(db.sql);
      const pipeline = testPipeline(db.sql, createLogger('silent'));
      await importEvents(file, pipeline, createLogger('silent'));
      await pipeline.stop();
    } finally {
      await db.close();
    }
    want = await everythingOf(url);
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Where the projector stands in `url`'s database. */
  async function progressOf(url: string): Promise<{ applied: number; logged: number }> {
    const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 1 });
    try {
      const [r] = await db.sql<{ applied: number; logged: number }[]>`
        SELECT (SELECT applied_id FROM projector_state)::int AS applied, COALESCE((SELECT max(id) FROM event_log), 0)::int AS logged`;
      return r ?? { applied: 0, logged: 0 };
    } catch {
      return { applied: 0, logged: 0 }; // not migrated yet
    } finally {
      await db.close();
    }
  }

  function importChild(url: string, extra: string[] = []) {
    const child = spawn(process.execPath, [build.main, 'import-events', '--file', file, ...extra], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exit, output: () => out };
  }

  function importAgain(url: string) {
    return spawnSync(process.execPath, [build.main, 'import-events', '--file', file], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 180_000,
    });
  }

  /** A re-run of the import exits 0, applies everything logged, and leaves the tables of the clean import. */
  async function reRunEqualsClean(url: string): Promise<void> {
    const again = importAgain(url);
    expect(again.status, again.stderr).toBe(0);
    const done = await progressOf(url);
    expect(done.applied).toBe(done.logged);
    expect(await everythingOf(url)).toEqual(want);
  }

  /** Deferred derived-table flips committed and not applied yet. */
  async function owedFlips(sql: Sql): Promise<number> {
    const [r] = await sql<{ n: number }[]>`
      SELECT ((SELECT count(*) FROM derived_deferred) + (SELECT count(*) FROM nft_custody_deferred))::int AS n`;
    return r.n;
  }

  /** SIGKILLs the import while the projector is inside the log (something applied, more logged than applied). */
  async function killMidBatch(url: string, run: ReturnType<typeof importChild>): Promise<{ applied: number; logged: number }> {
    let seen = { applied: 0, logged: 0 };
    for (let i = 0; i < 3000; i++) {
      seen = await progressOf(url);
      if (seen.applied > 0 && seen.logged > seen.applied) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    run.child.kill('SIGKILL');
    expect(await run.exit, run.output()).toBeNull();
    return seen;
  }

  it('SIGKILLed mid-batch, then run again: it resumes at the last applied message; the tables equal a clean import', async () => {
    const url = await freshDatabase();
    const seen = await killMidBatch(url, importChild(url));
    expect(seen.applied).toBeGreaterThan(0);
    const left = await progressOf(url);
    expect(left.logged, 'killed before the end').toBeGreaterThan(left.applied);
    await reRunEqualsClean(url);
  }, 300_000);

  it('SIGKILLed with the API-only indexes deferred: the re-run builds them; the tables and indexes equal a clean import', async () => {
    const url = await freshDatabase();
    await killMidBatch(url, importChild(url, ['--defer-indexes', 'on']));
    const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 2 });
    try {
      expect(await deferredIndexCount(db.sql), 'left deferred by the killed import').toBe(DEFERRABLE_INDEXES.length);
      // the default (auto) re-run keeps deferring them, then builds them at the end
      const again = importAgain(url);
      expect(again.status, again.stderr).toBe(0);
      expect(await deferredIndexCount(db.sql)).toBe(0);
      const present = await db.sql<{ name: string }[]>`
        SELECT indexname AS name FROM pg_indexes WHERE indexname = ANY(${DEFERRABLE_INDEXES as string[]})`;
      expect(present.length).toBe(DEFERRABLE_INDEXES.length);
    } finally {
      await db.close();
    }
    const done = await progressOf(url);
    expect(done.applied).toBe(done.logged);
    expect(await everythingOf(url)).toEqual(want);
  }, 300_000);

  it('PostgreSQL crashed and restarted mid-import: the import rides it out (or a re-run finishes it); the tables equal a clean import', async () => {
    const url = await freshDatabase();
    const run = importChild(url);
    for (let i = 0; i < 3000; i++) {
      const p = await progressOf(url);
      if (p.applied > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await pg.stop('immediate');
    await new Promise((r) => setTimeout(r, 1500));
    await pg.start();
    const code = await run.exit;
    // postgres.js may end the process on a connection the server dropped (see src/main.ts): the operator runs it again
    if (code !== 0) {
      const again = importAgain(url);
      expect(again.status, again.stderr).toBe(0);
    }
    const done = await progressOf(url);
    expect(done.applied, `first run exited ${code}: ${run.output().slice(-2000)}`).toBe(done.logged);
    expect(await everythingOf(url)).toEqual(want);
    console.log(`PostgreSQL crash mid-import: the first run exited ${code}`);
  }, 300_000);

  it('killed after batches committed but before their derived tables were applied, then PostgreSQL crashed: the owed flips survive, the next run applies them first; the tables equal a clean import', async () => {
    const url = await freshDatabase();
    const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 2 });
    let seen = 0;
    try {
      // the flush behind writes stx_totals; a batch's own transaction does not (its flips are deferred): holding a
      // write lock on it stops the flush behind in its transaction while batches keep committing
      const held = db.sql.reserve();
      const lock = await held;
      await lock`BEGIN`;
      await lock`LOCK TABLE stx_totals IN EXCLUSIVE MODE`;
      const run = importChild(url);
      for (let i = 0; i < 3000 && (seen = await owedFlips(db.sql)) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const progress = await progressOf(url);
      run.child.kill('SIGKILL');
      expect(await run.exit, run.output()).toBeNull();
      await lock`ROLLBACK`;
      lock.release();
      expect(seen, 'batches committed with their flips owed').toBeGreaterThan(0);
      expect(progress.applied, 'the log position moved with the batches').toBeGreaterThan(0);
    } finally {
      await db.close();
    }
    await pg.stop('immediate');
    await pg.start();
    const after = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 1 });
    try {
      expect(await owedFlips(after.sql), 'the owed flips are durable (ordinary tables, not emptied by crash recovery)').toBeGreaterThanOrEqual(seen);
    } finally {
      await after.close();
    }
    await reRunEqualsClean(url);
  }, 300_000);
});

/** Starts `node <main> serve` without the helper, to observe its exit code and timing. */
function spawnRaw(env: Record<string, string>) {
  const child = spawn(process.execPath, [build.main, 'serve'], {
    env: { PATH: process.env.PATH ?? '', API_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const ready = (async () => {
    for (let i = 0; i < 600; i++) {
      if (out.includes('API listening')) return;
      if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`did not start:\n${out}`);
  })();
  return { child, exit, ready, output: () => out };
}

/** GET on a new TCP connection (no keep-alive pool): the status, or the connection error's code. */
function newConnectionGet(port: number, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

/** POSTs `body` but holds back its last byte until `release()`: the message is in flight for as long as we like. */
function heldBackPost(port: number, path: string, body: string) {
  const buf = Buffer.from(body);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': buf.length } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.write(buf.subarray(0, buf.length - 1));
    void released.then(() => req.end(buf.subarray(buf.length - 1)));
  });
  response.catch(() => undefined); // awaited by the test; not an unhandled rejection when it fails earlier
  return { response, release };
}

describe('SIGTERM', () => {
  it('stops accepting, finishes the message in flight, tells socket clients to reconnect, exits 0 within 10 s', async () => {
    const url = await freshDatabase();
    const p = await ports();
    const env = serviceEnv(url, p);
    const first = spawnRaw(env);
    let second: ReturnType<typeof spawnRaw> | undefined;
    let client: Socket | undefined;
    try {
      await first.ready;
      // some chain first, then the biggest /new_block of the fixture is the message in flight
      const blockIdx = lines.findIndex((l, i) => i > 20 && l.path === '/new_block');
      const stats = await nodeReplay(lines.slice(0, blockIdx), { observer: `http://127.0.0.1:${p.observer}` });
      expect(totalFailures(stats)).toBe(0);
      const inFlight = lines[blockIdx];
      const height = (JSON.parse(inFlight.body) as { block_height: number }).block_height;

      client = connect(`http://127.0.0.1:${p.api}`, {
        transports: ['websocket'],
        query: { subscriptions: 'block' },
        reconnectionDelay: 200,
        reconnectionDelayMax: 500,
      });
      await new Promise<void>((resolve, reject) => {
        client!.once('connect', () => resolve());
        client!.once('connect_error', reject);
      });
      const disconnects: string[] = [];
      client.on('disconnect', (reason) => disconnects.push(reason));
      let reconnected = false;
      client.io.on('reconnect', () => (reconnected = true));

      const post = heldBackPost(p.observer, inFlight.path, inFlight.body);
      await new Promise((r) => setTimeout(r, 300)); // the request is open, its body almost read
      const termAt = Date.now();
      first.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      // no new connection is accepted on either port
      expect(await newConnectionGet(p.api, '/extended/v1/status')).toBe('ECONNREFUSED');
      expect(await newConnectionGet(p.observer, '/')).toBe('ECONNREFUSED');
      post.release();
      const answer = await post.response;
      expect(answer.status).toBe(200); // the message in flight was finished and acknowledged
      const exited = await first.exit;
      expect(exited.code).toBe(0);
      expect(exited.at - termAt).toBeLessThan(10_000);
      console.log(`SIGTERM: in-flight message answered ${answer.status}, exit code ${exited.code} after ${exited.at - termAt} ms`);
      // socket clients were told to reconnect: a transport close, not "io server disconnect" (which means "stay away")
      expect(disconnects.length).toBe(1);
      expect(disconnects[0]).not.toBe('io server disconnect');

      // the acknowledged block is stored
      const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 1 });
      try {
        const rows = await db.sql`SELECT block_height FROM blocks WHERE block_height = ${height}`;
        expect(rows.length).toBe(1);
      } finally {
        await db.close();
      }
      // and the client does reconnect, by itself, to the next process on the same port
      second = spawnRaw(env);
      await second.ready;
      for (let i = 0; i < 100 && !reconnected; i++) await new Promise((r) => setTimeout(r, 50));
      expect(reconnected).toBe(true);
    } finally {
      client?.close();
      for (const s of [first, second]) {
        if (s && s.child.exitCode === null) {
          s.child.kill('SIGTERM');
          await s.exit;
        }
      }
    }
  }, 300_000);
});
