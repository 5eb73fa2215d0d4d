import postgres from 'postgres';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { acquireDataDirLock } from './data-lock.js';
import { StartupError, codeOf, dataDirStartupError, redactUrl } from '../startup-error.js';
import { isUnavailable } from './faults.js';
import { renewablePool } from './renewable-pool.js';

import type { Sql } from './sql.js';


export interface Database {
  /** Connection used for writes (ingest) and, without a read replica, for reads. */
  sql: Sql;
  /** Connection used by the REST API for reads (DATABASE_READ_URL, or the same as `sql`). */
  read: Sql;
  /** 'postgres' for a real server, 'pglite' for the embedded default. */
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface ConnectOptions {
  databaseUrl?: string;
  readUrl?: string;
  dataDir: string;
  max?: number;
  /** What this process is (`serve`, `keys create`, …): written into the embedded data directory's lock. */
  command?: string;
}

/** Statements in flight on one connection at most (see `common`). */
export const MAX_PIPELINE = 1000;

const common: postgres.Options<Record<string, postgres.PostgresType>> = {
  onnotice: () => {},
  // bigint columns come back as JS numbers (heights, times, costs all fit in 2^53); numeric stays a string.
  types: {
    bigint: {
      to: 20,
      from: [20],
      serialize: (x: number | bigint) => x.toString(),
      parse: (x: string) => Number(x),
    },
  },
  connection: { application_name: 'stacks-pulse' },
  connect_timeout: 5,
  // Statements sent on a connection before its first answer comes back, at most (postgres.js's default is 100; more
  // wait in the driver until answers free their places). The projector pipelines a batch's messages on one connection
  // (src/projector/projector.ts): with 100, the first 12,000 lines of the 10,000-block generated chain imported in
  // 23.2-23.6 s, with 1,000 in 21.4-22.2 s (four runs each, alternating; 10,000 gave the same as 1,000). Other work
  // sends a few statements at a time and is not affected. (An option of the driver its types do not list; a test checks
  // that it is in effect.)
  ...({ max_pipeline: MAX_PIPELINE } as object),
};

/** Connects to PostgreSQL, or starts embedded PGlite in `dataDir` and connects to it through its socket server. */
export async function connectDatabase(opts: ConnectOptions): Promise<Database> {
  if (opts.databaseUrl) {
    // renewable: replaced by a fresh pool if the driver leaves a dead connection unusable (src/store/faults.ts)
    const max = opts.max ?? 10;
    const sql = renewablePool('primary', max, () => postgres(opts.databaseUrl!, { ...common, max }) as unknown as Sql);
    const read = opts.readUrl ? renewablePool('replica', max, () => postgres(opts.readUrl!, { ...common, max }) as unknown as Sql) : sql;
    return {
      sql,
      read,
      kind: 'postgres',
      async close() {
        await sql.end({ timeout: 5 });
        if (read !== sql) await read.end({ timeout: 5 });
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = path.resolve(opts.dataDir, 'pglite');
  let lock: ReturnType<typeof acquireDataDirLock>;
  try {
    mkdirSync(dir, { recursive: true });
    // PGlite is single-process: this process owns the directory until close() (or exit); a second one stops here.
    lock = acquireDataDirLock(opts.dataDir, opts.command);
  } catch (err) {
    throw dataDirStartupError(err, opts.dataDir);
  }
  let db: InstanceType<typeof PGlite> | undefined;
  let server: InstanceType<typeof PGLiteSocketServer> | undefined;
  let port: number;
  try {
    db = await PGlite.create(dir);
    server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1' });
    await server.start();
    port = pgliteServerPort(server);
  } catch (err) {
    await server?.stop().catch(() => {});
    await db?.close().catch(() => {});
    lock.release();
    throw dataDirStartupError(err, opts.dataDir);
  }
  // PGlite is single-connection: one postgres.js connection, queries queue behind each other.
  const sql = postgres({
    ...common,
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    max: 1,
  }) as unknown as Sql;
  return {
    sql,
    read: sql,
    kind: 'pglite',
    async close() {
      try {
        await sql.end({ timeout: 5 });
        await server!.stop();
        await db!.close();
      } finally {
        lock.release();
      }
    },
  };
}

function pgliteServerPort(server: unknown): number {
  const s = server as { server?: { address(): { port: number } | string | null } };
  const addr = s.server?.address();
  if (addr && typeof addr === 'object') return addr.port;
  throw new Error('embedded PGlite socket server did not report its port');
}

/**
 * Runs a query as an unnamed statement, planned with its parameter values at every execution. Prepared (named)
 * statements are what postgres.js uses by default; after five executions PostgreSQL may switch one to a generic plan,
 * built without the values. That is wrong for a page of one principal's history: the generic plan assumes an average
 * principal (about a hundred rows), bitmap-scans and sorts them, and for a principal with 75,000 rows takes 0.8–1 s
 * where the ordered index scan takes 0.3 ms. (postgres.js has no per-query switch for this in its types; `options` is
 * what its own `simple()` sets.)
 */
export function unprepared<T extends postgres.PendingQuery<any>>(q: T): T {
  (q as unknown as { options: { prepare?: boolean } }).options.prepare = false;
  return q;
}

/** A database error at start-up as a StartupError naming DATABASE_URL; anything else unchanged. */
export function databaseStartupError(err: unknown, databaseUrl: string | undefined): unknown {
  if (err instanceof StartupError || !databaseUrl) return err;
  const code = codeOf(err);
  const setting = `DATABASE_URL=${redactUrl(databaseUrl)}`;
  if (isUnavailable(err)) {
    return new StartupError(`${setting} is unreachable (${code}): start PostgreSQL there or set DATABASE_URL to a reachable server`, { cause: err });
  }
  if (code === '28P01' || code === '28000') {
    return new StartupError(`${setting}: authentication failed (${(err as Error).message}): fix the user or password in DATABASE_URL`, { cause: err });
  }
  if (code === '3D000') {
    return new StartupError(`${setting}: ${(err as Error).message}: create the database or set DATABASE_URL to an existing one`, { cause: err });
  }
  return err;
}
