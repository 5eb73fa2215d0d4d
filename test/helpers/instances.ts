// Private PostgreSQL and Redis servers for fault tests: each has its own data directory and port, so stopping,
// crashing or restarting one disturbs nothing else on the machine (the shared servers on 5432/6379 stay untouched).
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import postgres from 'postgres';
import { connectDatabase } from '../../src/store/connect.js';
import { migrate } from '../../src/store/migrate.js';
import { copyTemplate } from './db.js';

const run = promisify(execFile);

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL server binary (initdb, pg_ctl, pg_dump …) of the newest version installed. */
export function pgBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error(`no PostgreSQL under ${root}`);
  return path.join(root, versions[0], 'bin', name);
}

/** initdb/pg_ctl refuse to run as root: run them as the `postgres` system user then. */
async function asPostgres(cmd: string, args: string[]): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  try {
    await run(file, argv, { maxBuffer: 8 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export interface PgInstance {
  port: number;
  /** superuser URL of database `name` (default: postgres) */
  url(name?: string): string;
  createDatabase(name: string): Promise<string>;
  /**
   * A database with every migration applied, as the service's first start leaves it: a copy (CREATE DATABASE …
   * TEMPLATE) of one database of this server migrated on first use, so a test making several pays for migrating once.
   */
  createMigratedDatabase(name: string): Promise<string>;
  /** `immediate` is a crash (no checkpoint, WAL recovery at the next start); `fast` a clean shutdown. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** stops the server and deletes its data directory */
  destroy(): Promise<void>;
}

export async function startPostgres(): Promise<PgInstance> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-pg-'));
  chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) {
    const ids = await run('id', ['-u', 'postgres']);
    const gid = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(ids.stdout.trim()), Number(gid.stdout.trim()));
  }
  const data = path.join(dir, 'data');
  await asPostgres(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const opts = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // the OS page cache survives a server crash: fsync only matters for a machine crash, which no test simulates
    '-c fsync=off',
    '-c max_connections=60',
    '-c shared_buffers=32MB',
  ].join(' ');
  let running = false;
  let migrated: Promise<void> | undefined;
  const inst: PgInstance = {
    port,
    url: (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`,
    async createDatabase(name) {
      const admin = postgres(inst.url(), { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return inst.url(name);
    },
    async createMigratedDatabase(name) {
      migrated ??= (async () => {
        const url = await inst.createDatabase('sp_migrated');
        const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 1 });
        try {
          await migrate(db.sql);
        } finally {
          await db.close(); // nobody may stay connected to a template that is copied
        }
      })().catch((err) => {
        migrated = undefined;
        throw err;
      });
      await migrated;
      const admin = postgres(inst.url(), { max: 1, onnotice: () => {} });
      try {
        await copyTemplate(admin, name, 'sp_migrated');
      } finally {
        await admin.end();
      }
      return inst.url(name);
    },
    async start() {
      await asPostgres(pgBin('pg_ctl'), ['-D', data, '-l', path.join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      await asPostgres(pgBin('pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await inst.stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await inst.start();
  return inst;
}

export interface RedisInstance {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SHUTDOWN NOSAVE: every connection drops at once */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startRedis(): Promise<RedisInstance> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-redis-'));
  const port = await freePort();
  let running = false;
  const cli = (...args: string[]) => run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  const inst: RedisInstance = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      await run('redis-server', [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--save', '',
        '--appendonly', 'no',
        '--daemonize', 'yes',
        '--dir', dir,
        '--pidfile', path.join(dir, 'redis.pid'),
        '--logfile', path.join(dir, 'redis.log'),
      ]);
      for (let i = 0; i < 100; i++) {
        try {
          const { stdout } = await cli('ping');
          if (stdout.trim() === 'PONG') {
            running = true;
            return;
          }
        } catch {
          /* not up yet */
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`redis-server on ${port} did not start`);
    },
    async stop() {
      await cli('shutdown', 'nosave').catch(() => undefined); // the connection drops as the server exits
      for (let i = 0; i < 100; i++) {
        try {
          await cli('ping');
        } catch {
          running = false;
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`redis-server on ${port} did not stop`);
    },
    async destroy() {
      if (running) await inst.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await inst.start();
  return inst;
}
