/**
 * A private PostgreSQL primary and a streaming hot standby (pg_basebackup -R), each in a temporary directory on a free
 * port: the read-replica deployment for the load script (load/replica.ts) and the topology test. The standby's apply
 * can be delayed (recovery_min_apply_delay) so that replication lag is real. Needs the PostgreSQL server binaries
 * (initdb, pg_ctl, pg_basebackup: PG_BIN, or the newest /usr/lib/postgresql/<version>/bin); run as root, they are
 * run as the `postgres` system user.
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { freePort } from './bench-support.js';

const run = promisify(execFile);

function pgBin(name: string): string {
  if (process.env.PG_BIN) return path.join(process.env.PG_BIN, name);
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  return path.join(root, versions[0], 'bin', name);
}

/** initdb, pg_ctl and pg_basebackup refuse to run as root: run them as the `postgres` system user then. */
async function asPostgres(cmd: string, args: string[]): Promise<string> {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  try {
    const { stdout } = await run(file, argv, { maxBuffer: 8 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export interface PgServer {
  port: number;
  url(db?: string): string;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** `settings`: extra `-c name=value` options for this start (e.g. another recovery_min_apply_delay) */
  start(settings?: string[]): Promise<void>;
}

export interface ReplicatedPostgres {
  primary: PgServer;
  standby: PgServer;
  /** Resolves once the standby has replayed everything the primary has written so far (or throws after `ms`). */
  caughtUp(ms?: number): Promise<void>;
  /** stops both servers and deletes their directories */
  destroy(): Promise<void>;
}

export async function startReplicatedPostgres(opts: { database: string; applyDelayMs: number }): Promise<ReplicatedPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-repl-'));
  chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const running = new Set<string>();
  const server = (name: string, port: number, settings: string[]): PgServer => {
    const data = path.join(dir, name);
    const base = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c shared_buffers=32MB', ...settings];
    const srv: PgServer = {
      port,
      url: (db = opts.database) => `postgres://postgres@127.0.0.1:${port}/${db}`,
      async start(extra: string[] = []) {
        const options = [...base, ...extra.map((x) => `-c ${x}`)].join(' ');
        await asPostgres(pgBin('pg_ctl'), ['-D', data, '-l', path.join(dir, `${name}.log`), '-o', options, '-w', '-t', '120', 'start']);
        running.add(name);
      },
      async stop(mode = 'fast') {
        await asPostgres(pgBin('pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '120', 'stop']);
        running.delete(name);
      },
    };
    return srv;
  };
  const stopAll = async () => {
    for (const name of [...running]) {
      await asPostgres(pgBin('pg_ctl'), ['-D', path.join(dir, name), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    running.clear();
  };
  try {
    await asPostgres(pgBin('initdb'), ['-D', path.join(dir, 'primary'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const primary = server('primary', await freePort(), [
      '-c wal_level=replica',
      '-c max_wal_senders=5',
      '-c wal_keep_size=512MB',
      '-c max_connections=120',
    ]);
    await primary.start();
    const admin = postgres(primary.url('postgres'), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE DATABASE ${opts.database}`);
    } finally {
      await admin.end();
    }
    // --checkpoint=fast: the default spread checkpoint paces its writes over checkpoint_timeout, and after CREATE
    // DATABASE has dirtied a few hundred buffers that is a minute and a half of a copy that otherwise takes a second.
    await asPostgres(pgBin('pg_basebackup'), [
      '-D', path.join(dir, 'standby'), '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast',
    ]);
    const standby = server('standby', await freePort(), [
      '-c hot_standby=on',
      '-c hot_standby_feedback=on',
      '-c max_standby_streaming_delay=30s',
      `-c recovery_min_apply_delay=${opts.applyDelayMs}ms`,
      '-c max_connections=120',
    ]);
    await standby.start();
    return {
      primary,
      standby,
      async caughtUp(ms = 60_000) {
        const p = postgres(primary.url(), { max: 1, onnotice: () => {} });
        const s = postgres(standby.url(), { max: 1, onnotice: () => {} });
        try {
          const [{ lsn }] = await p<{ lsn: string }[]>`SELECT pg_current_wal_flush_lsn()::text AS lsn`;
          const deadline = Date.now() + ms;
          for (;;) {
            const [{ done }] = await s<{ done: boolean }[]>`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS done`;
            if (done) return;
            if (Date.now() > deadline) throw new Error(`standby did not replay ${lsn} within ${ms} ms`);
            await new Promise((r) => setTimeout(r, 50));
          }
        } finally {
          await p.end();
          await s.end();
        }
      },
      async destroy() {
        await stopAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
