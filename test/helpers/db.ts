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
