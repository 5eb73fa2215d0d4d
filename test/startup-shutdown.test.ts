// Start-up and shutdown as an operator sees them (real processes): URLs printed when listening, one-line start-up
// errors naming the setting, a clean Ctrl-C of an ingest process without error logs, Redis outages logged sparingly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, spawnService, type Build } from './helpers/build.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { readFixture } from './helpers/fixtures.js';

let build: Build;
const dirs: string[] = [];
beforeAll(async () => {
  build = await buildService();
}, 600_000);
afterAll(() => {
  build?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** pino lines of `out` at `level` or above (50 error, 60 fatal) */
function logLines(out: string, minLevel: number): { level: number; msg: string }[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as { level: number; msg: string };
      } catch {
        return { level: 0, msg: l };
      }
    })
    .filter((l) => l.level >= minLevel);
}

describe('clean shutdown of an ingest process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('SIGTERM / SIGINT while the node is sending: exit 0, no error logs, every acknowledged message stored', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      await db.sql`TRUNCATE event_log CASCADE`.catch(() => undefined);
      const svc = await spawnService(build.main, 'ingest', { DATABASE_URL: db.url, API_MODE: 'ingest' });
      const lines = readFixture('mocknet');
      const acked: string[] = [];
      let stop = false;
      // a node on a keep-alive connection, sending as fast as it is answered
      const sender = (async () => {
        for (const l of lines) {
          if (stop) break;
          try {
            const res = await fetch(svc.observer! + l.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: l.body });
            await res.arrayBuffer();
            if (res.status === 200) acked.push(`${l.path}\t${l.body}`);
            else break;
          } catch {
            break;
          }
        }
      })();
      while (acked.length < 5) await new Promise((r) => setTimeout(r, 5));
      process.kill(svc.pid, signal);
      const started = Date.now();
      await svc.stop();
      stop = true;
      await sender;
      expect(Date.now() - started).toBeLessThan(10_000);
      const out = svc.output();
      expect(logLines(out, 50), out).toEqual([]);
      expect(out).not.toContain('CONNECTION_ENDED');
      const stored = new Set(
        (await db.sql<{ path: string; body: string }[]>`SELECT path, body FROM event_log`).map((r) => `${r.path}\t${r.body}`),
      );
      for (const a of acked) expect(stored.has(a)).toBe(true);
    }
  }, 300_000);
});

async function freePortHeld(): Promise<{ port: number; close(): Promise<void> }> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { port: (s.address() as { port: number }).port, close: () => new Promise((r) => s.close(() => r())) };
}

async function closedPort(): Promise<number> {
  const h = await freePortHeld();
  await h.close();
  return h.port;
}

describe('start-up', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [build.main, 'serve'], {
      env: { PATH: process.env.PATH ?? '', API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'info', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const oneLine = (stderr: string) => {
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
    return lines[0];
  };

  it('LOG_FORMAT=text (a terminal): one banner with the URLs, "ready" once, no JSON, no list of migrations', async () => {
    const fresh = await createTestDatabase();
    const child = spawn(process.execPath, [build.main, 'serve'], {
      env: { PATH: process.env.PATH ?? '', API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_FORMAT: 'text', DATABASE_URL: fresh.url },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    try {
      const deadline = Date.now() + 60_000;
      while (!out.includes('Ctrl-C stops it.') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(out, err).toContain('Ctrl-C stops it.');
      expect(out).toMatch(/^stacks-pulse \d+\.\d+\.\d+ ready \(observer \+ API, database: PostgreSQL\)$/m);
      const port = /API {8}http:\/\/127\.0\.0\.1:(\d+)\/extended/.exec(out)?.[1];
      expect(port, out).toBeDefined();
      expect(out).toContain(`dashboard  http://127.0.0.1:${port}/dashboard`);
      expect(out).toContain(`docs       http://127.0.0.1:${port}/docs`);
      expect(out).toMatch(/observer {3}http:\/\/127\.0\.0\.1:\d+ {2}\(a Stacks node POSTs its events here/);
      expect(out.match(/ready/g)).toHaveLength(1);
      expect(out).not.toContain('0001_init.sql');
      expect(out).not.toMatch(/^\{/m);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(out).toMatch(/^\d\d:\d\d:\d\d shutting down signal=SIGINT$/m);
      expect(out).toMatch(/^\d\d:\d\d:\d\d stopped\n$/m);
      expect(err).toBe('');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      await fresh.drop();
    }
  }, 300_000);

  it('not a terminal: JSON lines only, "ready" once with the URLs, migrations as a count (names at debug)', async () => {
    const fresh = await createTestDatabase();
    try {
      const svc = await spawnService(build.main, 'serve', { DATABASE_URL: fresh.url });
      await svc.stop();
      const lines = svc.output().trim().split('\n');
      for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow();
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const ready = parsed.filter((l) => l.msg === 'stacks-pulse ready');
      expect(ready).toHaveLength(1);
      expect(ready[0].dashboard).toBe(`${svc.api}/dashboard`);
      // the test database comes migrated; a migration line, if any, is a count
      for (const l of parsed.filter((p) => p.msg === 'migrations applied')) {
        expect(l.migrations).toBeGreaterThan(0);
        expect(l.applied).toBeUndefined();
      }
      expect(svc.output()).not.toContain('0001_init.sql');
    } finally {
      await fresh.drop();
    }
  }, 300_000);

  it('a port in use: one line naming the setting, exit 1', async () => {
    const held = await freePortHeld();
    try {
      const api = run({ DATABASE_URL: db.url, API_PORT: String(held.port) });
      expect(api.status).toBe(1);
      expect(oneLine(api.stderr)).toBe(
        `stacks-pulse serve: error: API_PORT=${held.port} is in use (or API_HOST=127.0.0.1 is not an address of this machine): set API_PORT to a free port`,
      );
      // the projector was stopped before the database closed: no error log, no stack before that line
      expect(logLines(api.stdout, 50), api.stdout).toEqual([]);
      expect(api.stdout).not.toContain('CONNECTION_ENDED');
      const obs = run({ DATABASE_URL: db.url, OBSERVER_PORT: String(held.port) });
      expect(obs.status).toBe(1);
      expect(obs.stdout).not.toContain('CONNECTION_ENDED');
      expect(oneLine(obs.stderr)).toMatch(new RegExp(`^stacks-pulse serve: error: OBSERVER_PORT=${held.port} is in use .*: set OBSERVER_PORT to a free port$`));
    } finally {
      await held.close();
    }
  }, 300_000);

  it('an unreachable database: one line naming DATABASE_URL (password hidden); the stack only at debug level', async () => {
    const url = `postgres://postgres:secret@127.0.0.1:${await closedPort()}/x`;
    const r = run({ DATABASE_URL: url });
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^stacks-pulse serve: error: DATABASE_URL=postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/x is unreachable \(ECONNREFUSED\): start PostgreSQL there or set DATABASE_URL to a reachable server$/);
    expect(r.stdout + r.stderr).not.toContain('secret');
    const debug = run({ DATABASE_URL: url, LOG_LEVEL: 'debug' });
    expect(debug.stdout).toContain('"stack"');
  }, 300_000);

  it('a data directory that cannot be written: one line naming DATA_DIR', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sp-ro-'));
    dirs.push(dir);
    const file = path.join(dir, 'file');
    mkdirSync(file);
    chmodSync(file, 0o500);
    // root ignores permissions: a path under a regular file is not writable for anyone
    const notADir = path.join(dir, 'plain');
    spawnSync('touch', [notADir]);
    const r = run({ DATA_DIR: path.join(notADir, 'data') });
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^stacks-pulse serve: error: DATA_DIR=.*\/plain\/data is not writable \(ENOTDIR\): set DATA_DIR to a writable directory/);
  }, 300_000);

  it('npm start on a fresh checkout says "building …" before compiling', async () => {
    const { REPO_ROOT } = await import('./helpers/build.js');
    const { symlinkSync, copyFileSync } = await import('node:fs');
    const root = mkdtempSync(path.join(tmpdir(), 'sp-fresh-'));
    dirs.push(root);
    for (const d of ['src', 'load', 'node_modules', 'sql']) symlinkSync(path.join(REPO_ROOT, d), path.join(root, d));
    copyFileSync(path.join(REPO_ROOT, 'tsconfig.json'), path.join(root, 'tsconfig.json'));
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/build-if-needed.mjs')], {
      env: { PATH: process.env.PATH ?? '', STACKS_PULSE_ROOT: root },
    });
    let err = '';
    const first = await new Promise<string>((resolve) => child.stderr.on('data', (d) => ((err += d), err.includes('\n') && resolve(err))));
    child.kill('SIGKILL');
    expect(first.split('\n')[0]).toMatch(/^building stacks-pulse: compiling the TypeScript sources into dist\/ \(first start; this takes a minute or two, once\) …$/);
  }, 300_000);
});

describe('Redis outages are logged once, then sparingly', () => {
  it('unit: first error at once, a reminder every 30 s with the count, one line on recovery', async () => {
    const { RedisOutageLog } = await import('../src/redis-outage.js');
    const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
    const log = {
      warn: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', msg, obj }),
      info: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'info', msg, obj }),
    };
    let t = 0;
    const o = new RedisOutageLog(log as never, { now: () => t });
    const a = {};
    const b = {};
    for (; t < 65_000; t += 250) {
      o.error(new Error('connect ECONNREFUSED'), a);
      o.error(new Error('connect ECONNREFUSED'), b);
    }
    expect(lines.map((l) => l.msg)).toEqual([
      'Redis unreachable: retrying in the background (logged again every 30 s while it lasts)',
      'Redis still unreachable',
      'Redis still unreachable',
    ]);
    expect(lines[1].obj).toMatchObject({ errors: 240, down_s: 30 });
    o.ready(a);
    expect(lines).toHaveLength(3); // b is still down
    o.ready(b);
    expect(lines[3]).toMatchObject({ level: 'info', msg: 'Redis reachable again', obj: { down_s: 65, errors: expect.any(Number) } });
    o.ready(a);
    expect(lines).toHaveLength(4);
  });

  it('a service with Redis down logs the outage a few times, not several times a second', async () => {
    const db = await createTestDatabase();
    try {
      const svc = await spawnService(build.main, 'serve', { DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
      await new Promise((r) => setTimeout(r, 5000));
      await svc.stop();
      const redisLines = logLines(svc.output(), 40).filter((l) => /redis/i.test(l.msg));
      expect(redisLines.length, redisLines.map((l) => l.msg).join('\n')).toBeLessThanOrEqual(4);
      expect(redisLines.filter((l) => l.msg.startsWith('Redis unreachable'))).toHaveLength(1);
    } finally {
      await db.drop();
    }
  }, 300_000);
});
