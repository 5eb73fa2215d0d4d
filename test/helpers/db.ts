import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { connectDatabase, type Database } from '../../src/store/connect.js';
import { migrate } from '../../src/store/migrate.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** closes the connections and drops the database */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

/** A fresh, migrated database on the test server; drop() removes it. */
export async function createTestDatabase(prefix = 'sp_test'): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(TEST_DATABASE_URL, name);
  const db = await connectDatabase({ databaseUrl: url, dataDir: '/nonexistent', max: 4 });
  await migrate(db.sql);
  return {
    ...db,
    url,
    name,
    async drop() {
      await db.close();
      const a = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
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
 * migrations' bookkeeping and configuration (schema_migrations, cache_version, api_keys, the derived-table registry,
 * the BNS-V2 contract list) and restores the singleton rows the migrations seed (the unfiltered tx total, the
 * microblock count and the projector's place in the log). The recorded network (chain_network) goes too: the next fixture may be of the other network.
 */
export async function emptyChainTables(sql: import('../../src/store/connect.js').Sql): Promise<void> {
  const tables = await sql<{ t: string }[]>`
    SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'
      AND tablename NOT IN ('schema_migrations', 'cache_version', 'api_keys', 'derived_appliers', 'bns_v2_contracts')`;
  await sql.unsafe(`TRUNCATE ${tables.map((r) => `"${r.t}"`).join(', ')}`);
  await sql`INSERT INTO tx_list_total (id, n) VALUES (true, 0)`;
  await sql`INSERT INTO microblock_stream_count (id, n) VALUES (true, 0)`;
  await sql`INSERT INTO projector_state (id, applied_id) VALUES (1, 0)`;
}
