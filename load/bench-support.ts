/** Plumbing shared by the load scripts: a throw-away PostgreSQL database and free local ports. */
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export const DEFAULT_ADMIN_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty database next to `adminUrl`'s (e.g. sp_bench_<time>_<rand>); drop() removes it. */
export async function createBenchDatabase(adminUrl = DEFAULT_ADMIN_URL, prefix = 'sp_bench'): Promise<BenchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = '/' + name;
  return {
    name,
    url: u.toString(),
    async drop() {
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Reads `--flag value` command lines one flag at a time:
 *   const args = new ArgReader(argv); for (let a = args.next(); a !== undefined; a = args.next()) switch (a) { … args.number() … }
 */
export class ArgReader {
  private i = -1;
  private flag = '';
  constructor(private readonly argv: readonly string[]) {}
  /** the next flag, or undefined at the end */
  next(): string | undefined {
    this.i++;
    this.flag = this.argv[this.i];
    return this.flag;
  }
  /** the current flag's value */
  value(): string {
    const v = this.argv[++this.i];
    if (v === undefined) throw new Error(`${this.flag} needs a value`);
    return v;
  }
  /** the current flag's value as a non-negative number */
  number(): number {
    const n = Number(this.value());
    if (!Number.isFinite(n) || n < 0) throw new Error(`${this.flag} needs a number`);
    return n;
  }
  /** the current flag's value as a non-negative integer */
  integer(): number {
    const n = Number(this.value());
    if (!Number.isInteger(n) || n < 0) throw new Error(`${this.flag} needs a non-negative integer`);
    return n;
  }
}
