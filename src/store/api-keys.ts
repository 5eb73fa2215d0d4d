/** The api_keys table (sql/0006_auth.sql): keys stored by their SHA-256, looked up by it; src/auth decides the rest. */
import type { Sql } from './sql.js';

export interface ApiKeyRow {
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  rpm: number | null;
  revoked_at: Date | null;
}

/** Stores a key by its hash; false when the name is taken (names stay taken after revocation). */
export async function insertKey(sql: Sql, name: string, keyHash: string, rpm: number | null): Promise<boolean> {
  const rows = await sql`
    INSERT INTO api_keys (name, key_hash, rpm) VALUES (${name}, ${keyHash}, ${rpm})
    ON CONFLICT (name) DO NOTHING RETURNING name`;
  return rows.length > 0;
}

export async function listKeys(sql: Sql): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
    SELECT name, created_at, last_used_at, rpm, revoked_at FROM api_keys ORDER BY created_at, id`;
}

/** Revokes the key named `name`; false when there is no such key or it was already revoked. */
export async function revokeKey(sql: Sql, name: string): Promise<boolean> {
  const rows = await sql`UPDATE api_keys SET revoked_at = now() WHERE name = ${name} AND revoked_at IS NULL RETURNING name`;
  return rows.length > 0;
}

/** The key stored under `keyHash`, revoked or not; undefined when there is none. */
export async function keyByHash(sql: Sql, keyHash: string): Promise<{ name: string; rpm: number | null; revoked: boolean } | undefined> {
  const [row] = await sql<{ name: string; rpm: number | null; revoked: boolean }[]>`
    SELECT name, rpm, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE key_hash = ${keyHash}`;
  return row;
}

/** Records that the key stored under `keyHash` was just used. */
export async function touchKey(sql: Sql, keyHash: string): Promise<void> {
  await sql`UPDATE api_keys SET last_used_at = now() WHERE key_hash = ${keyHash}`;
}
