import postgres from 'postgres';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connectDatabase, type Database } from '../../src/store/connect.js';
import { functionFiles, migrate, migrationFiles, sqlDir } from '../../src/store/migrate.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** closes the connections and drops the database */
  drop(): Promise<void>;
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

function admin(url = TEST_DATABASE_URL) {
  return postgres(url, { max: 1, onnotice: () => {} });
}

/**
 * The name of the migrated template database for the migrations as they are now: it carries a hash of every
 * migration file, of every functions file (sql/functions) and of the code that applies them, so a changed or added
 * migration or function gets a template of its own (never a stale one), and two suites running at once on the same
 * tree share one.
 */
export function templateName(): string {
  const h = createHash('sha256');
  const dir = sqlDir();
  for (const f of migrationFiles(dir)) h.update(f).update('\0').update(readFileSync(path.join(dir, f))).update('\0');
  for (const f of functionFiles(dir)) {
    h.update(`functions/${f}`).update('\0').update(readFileSync(path.join(dir, 'functions', f))).update('\0');
  }
  const store = path.resolve(dir, '../src/store');
  for (const f of ['migrate.ts', 'bulk-indexes.ts']) h.update(f).update('\0').update(readFileSync(path.join(store, f))).update('\0');
  return `sp_tpl_${h.digest('hex').slice(0, 16)}`;
}

// Any constant distinct from the service's own advisory locks: serialises template builders across processes.
const TEMPLATE_LOCK = 735_560_801;

let ensured: Promise<string> | undefined;

/**
 * Makes sure the migrated template database exists and returns its name. Migrating a fresh database costs seconds
 * (tens of migrations, each its own transaction); copying a migrated template (CREATE DATABASE … TEMPLATE) costs a
 * fraction of that, and most test files create several databases. Built once per migration set, under an advisory
 * lock (vitest's global setup and every worker may ask at once), into a scratch name renamed when complete, so a
 * template that exists is always fully migrated and nobody is connected to it.
 */
export function ensureTemplate(): Promise<string> {
  ensured ??= buildTemplate().catch((err) => {
    ensured = undefined;
    throw err;
  });
  return ensured;
}

async function buildTemplate(): Promise<string> {
  const name = templateName();
  const a = admin();
  try {
    const exists = async () => (await a`SELECT 1 FROM pg_database WHERE datname = ${name}`).length > 0;
    if (await exists()) return name;
    await a`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`;
    try {
      if (await exists()) return name;
      const scratch = `${name}_build_${randomBytes(3).toString('hex')}`;
      await a.unsafe(`CREATE DATABASE ${scratch}`);
      try {
        const db = await connectDatabase({ databaseUrl: withDatabase(TEST_DATABASE_URL, scratch), dataDir: '/nonexistent', max: 1 });
        try {
          await migrate(db.sql);
        } finally {
          await db.close();
        }
        await a.unsafe(`ALTER DATABASE ${scratch} RENAME TO ${name}`);
      } catch (err) {
        await a.unsafe(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
        throw err;
      }
      return name;
    } finally {
      await a`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`;
    }
  } finally {
    await a.end();
  }
}

/**
 * CREATE DATABASE … TEMPLATE refuses while another session is connected to the template ("source database … is being
 * accessed by other users"); nothing stays connected to ours, but a monitoring session may pass by: ask again a few times.
 */
export async function copyTemplate(a: postgres.Sql, name: string, template: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await a.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      return;
    } catch (err) {
      if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * A fresh, migrated database on the test server (a copy of the migrated template, or of `opts.template`: an imported
 * fixture, test/helpers/fixture-db.ts); drop() removes it.
 */
export async function createTestDatabase(prefix = 'sp_test', opts: { template?: string } = {}): Promise<TestDatabase> {
  const db = await createDatabase(prefix, opts.template ?? (await ensureTemplate()));
  // Nothing left to apply on a copy of a template; still run, so a database made here is exactly what migrate() makes.
  await migrate(db.sql);
  return db;
}

/** A fresh database on the test server with nothing migrated (the server's default template); drop() removes it. */
export function createEmptyTestDatabase(prefix = 'sp_empty'): Promise<TestDatabase> {
  return createDatabase(prefix, undefined);
}

async function createDatabase(prefix: string, template: string | undefined): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const a = admin();
  try {
    if (template) await copyTemplate(a, name, template);
    else await a.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await a.end();
  }
  const url = withDatabase(TEST_DATABASE_URL, name);
  const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 4 });
  return {
    ...db,
    url,
    name,
    async drop() {
      await db.close();
      const a = admin();
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
/**
 * Empties every chain-data table of a migrated database, so one database can take fixture after fixture: keeps the
 * migrations' bookkeeping and configuration (schema_migrations, schema_functions, cache_version, api_keys, the derived-table registry,
 * the BNS-V2 contract list) and restores the singleton rows the migrations seed (the unfiltered tx total, the
 * microblock count and the projector's places in the log). The recorded network (chain_network) goes too: the next fixture may be of the other network.
 */
export async function emptyChainTables(sql: import('../../src/store/sql.js').Sql): Promise<void> {
  const tables = await sql<{ t: string }[]>`
    SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'
      AND tablename NOT IN ('schema_migrations', 'schema_functions', 'cache_version', 'api_keys', 'derived_appliers', 'bns_v2_contracts')`;
  await sql.unsafe(`TRUNCATE ${tables.map((r) => `"${r.t}"`).join(', ')}`);
  await sql`INSERT INTO tx_list_total (id, n) VALUES (true, 0)`;
  await sql`INSERT INTO microblock_stream_count (id, n) VALUES (true, 0)`;
  await sql`INSERT INTO projector_state (id, applied_id) VALUES (1, 0)`;
  await sql`INSERT INTO projector_derived (id, applied_id) VALUES (1, 0)`;
}
