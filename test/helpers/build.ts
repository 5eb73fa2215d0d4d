// Compiles src/ with tsc into a private folder directly under the repository root (so the compiled code finds
// sql/, package.json and node_modules exactly as dist/ does) for tests that spawn real service processes.
// One folder per vitest run, shared by its test files (they only read it); see buildService.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { inject } from 'vitest';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Build {
  dir: string;
  /** The compiled CLI entry (`node <main> serve|api|keys ...`). */
  main: string;
  remove(): void;
}

/**
 * The compiled service for the calling test file. Within one vitest run every file shares one build (a full tsc
 * build costs tens of seconds, minutes on a busy machine): the first caller in any worker compiles it into the
 * run's folder (vitest's global setup names it and removes it when the run ends), the others wait for it. The
 * compiled code is only read, so sharing it changes nothing for the tests. `remove()` is then a no-op. Without the
 * global setup (a script importing this helper), each call compiles a private folder that `remove()` deletes.
 */
export async function buildService(): Promise<Build> {
  const dir = sharedBuildDir();
  if (dir === undefined) {
    const own = path.join(REPO_ROOT, `.test-build-${process.pid}-${randomBytes(3).toString('hex')}`);
    await compileInto(own);
    return { dir: own, main: path.join(own, 'src/main.js'), remove: () => rmSync(own, { recursive: true, force: true }) };
  }
  shared ??= sharedBuild(dir).catch((err) => {
    shared = undefined;
    throw err;
  });
  await shared;
  return { dir, main: path.join(dir, 'src/main.js'), remove: () => undefined };
}

let shared: Promise<void> | undefined;

function sharedBuildDir(): string | undefined {
  try {
    return inject('sharedBuildDir');
  } catch {
    return undefined; // not inside a vitest worker
  }
}

/** Marker files beside the shared folder: who builds it, that it is complete, or why it failed. */
export function sharedBuildMarkers(dir: string): { lock: string; done: string; failed: string } {
  return { lock: `${dir}.lock`, done: `${dir}.done`, failed: `${dir}.failed` };
}

async function sharedBuild(dir: string): Promise<void> {
  const m = sharedBuildMarkers(dir);
  let mine = false;
  try {
    mkdirSync(m.lock); // atomic: exactly one worker of the run wins
    mine = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (mine) {
    try {
      await compileInto(dir);
      writeFileSync(m.done, '');
    } catch (err) {
      writeFileSync(m.failed, (err as Error).message);
      throw err;
    }
    return;
  }
  // Another worker compiles: wait for the outcome, however long a busy machine makes it (the hooks' own timeouts bound this).
  for (;;) {
    if (existsSync(m.done)) return;
    if (existsSync(m.failed)) throw new Error(`the shared test build failed: ${readFileSync(m.failed, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function compileInto(dir: string): Promise<void> {
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      compilerOptions: { outDir: '.', rootDir: '..', sourceMap: false, incremental: false },
      include: ['../src'],
    }),
  );
  try {
    await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`tsc failed: ${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
}

export interface ChildService {
  pid: number;
  api: string;
  /** The event observer's URL (modes with an observer: serve, ingest). */
  observer?: string;
  /** All stdout/stderr so far (JSON log lines). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Spawns `node <main> <command>` and resolves once it logs 'API listening' (the port comes from that line); for
 * `ingest` (no API) once it logs 'event observer listening'. `api` is then the observer's URL too.
 */
export async function spawnService(
  main: string,
  command: string,
  env: Record<string, string>,
  /** how long to wait for the listening line (default 30 s; the embedded database's first start takes longer) */
  opts: { timeoutMs?: number } = {},
): Promise<ChildService> {
  const child = spawn(process.execPath, [main, command], {
    env: { PATH: process.env.PATH ?? '', API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let observerPort: number | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${out}`)), opts.timeoutMs ?? 30_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (line.includes('event observer listening')) {
          try {
            observerPort = (JSON.parse(line) as { port: number }).port;
          } catch {
            /* partial line */
          }
          if (command === 'ingest' && observerPort !== undefined) {
            clearTimeout(timer);
            resolve(observerPort);
            return;
          }
        }
        if (!line.includes('API listening')) continue;
        try {
          const port = (JSON.parse(line) as { port: number }).port;
          clearTimeout(timer);
          resolve(port);
          return;
        } catch {
          /* partial line */
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${out}`));
    });
  });
  return {
    pid: child.pid!,
    api: `http://127.0.0.1:${port}`,
    observer: observerPort === undefined ? undefined : `http://127.0.0.1:${observerPort}`,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}
