// Item: one process owns an embedded (PGlite) data directory. Real processes on one DATA_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../helpers/service.js';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, spawnService, type Build } from '../helpers/build.js';
import { readFixture } from '../helpers/fixtures.js';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/store/data-lock.js';

let build: Build;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'sp-lock-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  build = await buildService(); // a full tsc build: minutes when the machine is busy
}, 900_000);
afterAll(() => {
  build?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [build.main, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 600_000, // a first start of the embedded database (initdb in WASM) takes minutes on a busy machine
  });
}

/**
 * The CLI run as a child process without blocking this process's event loop (spawnSync would freeze the HTTP client's
 * sockets and timers for as long as the child runs, which on a loaded machine is many seconds). Resolves with how it
 * ended; a child still running after `deadlineMs` is killed and reported with its signal.
 */
function cliAsync(args: string[], env: Record<string, string>, deadlineMs = 180_000): Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [build.main, ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stderr });
    });
  });
}

/**
 * POSTs one node message on a connection of its own (`agent: false`, `connection: close`), as a node's event emitter
 * does: no idle keep-alive connection is reused, so the server closing one it considers idle (while this process
 * was busy) can never cut a message off.
 */
function postOnce(base: string, l: { path: string; body: string }): Promise<number> {
  const url = new URL(l.path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close', 'content-length': Buffer.byteLength(l.body) } },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(l.body);
  });
}

async function post(base: string, l: { path: string; body: string }): Promise<number> {
  const status = await postOnce(base, l);
  if (status === 200) await settled(base, 300_000);
  return status;
}

describe('embedded data directory lock (real processes)', () => {
  it('a second process on the same DATA_DIR stops at once with a message; the first keeps every acknowledged message', async () => {
    const dataDir = tmp();
    const lines = readFixture('mocknet');
    // the embedded database's first start (initdb in WASM) is slow on a loaded machine: create it first
    const init = await cliAsync(['migrate'], { DATA_DIR: dataDir }, 600_000);
    expect(init.status, init.stderr).toBe(0);
    const first = await spawnService(build.main, 'serve', { DATA_DIR: dataDir, RATE_LIMIT_ANON_RPM: '0' }, { timeoutMs: 300_000 });
    try {
      const half = Math.floor(lines.length / 2);
      for (const l of lines.slice(0, half)) expect(await post(first.observer!, l)).toBe(200);

      for (const args of [['serve'], ['keys', 'create', '--name', 'x'], ['migrate'], ['import-events', '--file', '/dev/null'], ['export-events', '--file', path.join(dataDir, 'x.tsv')]]) {
        // "at once": it exits by itself (a process that waited for the lock would be killed at the deadline)
        const r = await cliAsync(args, { DATA_DIR: dataDir, API_PORT: '0', OBSERVER_PORT: '0' });
        expect(r.signal, `${args.join(' ')} did not stop by itself: ${r.stderr}`).toBeNull();
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).not.toBe(0);
        expect(r.stderr).toContain(`in use by another stacks-pulse process (pid ${first.pid}`);
        expect(r.stderr).toContain('stop that process first, or set DATABASE_URL');
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      for (const l of lines.slice(half)) expect(await post(first.observer!, l)).toBe(200);
    } finally {
      await first.stop();
    }
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    // every acknowledged message is in the database the first process kept
    const out = path.join(dataDir, 'out.tsv');
    const r = await cliAsync(['export-events', '--file', out], { DATA_DIR: dataDir }, 600_000);
    expect(r.status, r.stderr).toBe(0);
    const exported = readFileSync(out, 'utf8').trim().split('\n');
    const distinct = new Set(lines.map((l) => `${l.path}\t${l.body}`));
    expect(new Set(exported.map((l) => l.split('\t').slice(2).join('\t')))).toEqual(distinct);
  }, 1_800_000);

  it('a stale lock (its process is dead) is taken over', async () => {
    const dataDir = tmp();
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.once('exit', r));
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: dead.pid, command: 'stacks-pulse serve', started: 'x' }));
    const r = cli(['migrate'], { DATA_DIR: dataDir });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
  }, 700_000);

  it('a lock naming a live pid that now belongs to another process (pid reused), or our own pid, is stale', () => {
    const dataDir = tmp();
    // pid 1 is alive, but it is not the process that wrote this lock (its start time differs)
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: 1, command: 'stacks-pulse serve', started: 'x', identity: 'another-boot:1' }));
    acquireDataDirLock(dataDir, 'serve').release();
    // our own pid from an earlier life (a container restarted with the same pid)
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: process.pid, command: 'stacks-pulse serve', started: 'x' }));
    acquireDataDirLock(dataDir, 'serve').release();
    // a live process that did write it is respected
    const lock = acquireDataDirLock(dataDir, 'serve');
    const info = JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')) as { identity?: string };
    expect(info.identity).toMatch(/^[0-9a-f-]+:\d+$/);
    lock.release();
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: 1, command: 'stacks-pulse serve', started: 'x' }));
    expect(() => acquireDataDirLock(dataDir, 'serve')).toThrow(/pid 1, "stacks-pulse serve"/);
  });

  it('API_MODE=api or ingest without DATABASE_URL is refused at start-up', () => {
    for (const mode of ['api', 'ingest']) {
      const r = cli(['serve'], { API_MODE: mode, DATA_DIR: tmp(), API_PORT: '0', OBSERVER_PORT: '0' });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`API_MODE=${mode} needs DATABASE_URL`);
      const c = cli([mode], { DATA_DIR: tmp(), API_PORT: '0', OBSERVER_PORT: '0' });
      expect(c.status).not.toBe(0);
      expect(c.stderr).toContain(`API_MODE=${mode} needs DATABASE_URL`);
    }
  }, 600_000);

  it('in-process: the lock names its holder and is released', () => {
    const dataDir = tmp();
    const lock = acquireDataDirLock(dataDir, 'serve');
    expect(() => acquireDataDirLock(dataDir, 'migrate')).toThrow(DataDirLockedError);
    lock.release();
    acquireDataDirLock(dataDir, 'migrate').release();
  });
});
