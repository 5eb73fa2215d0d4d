/** The chain version the HTTP cache tags answers with (sql/0007_cache.sql: bumped in every observer message's COMMIT). */
import type { Sql } from './connect.js';

export async function chainVersion(sql: Sql): Promise<{ token: string; version: number }> {
  const [row] = await sql<{ token: string; version: number }[]>`SELECT token, version FROM cache_version WHERE id = 1`;
  if (!row) throw new Error('cache_version row missing (migration 0007_cache.sql not applied?)');
  return { token: row.token, version: Number(row.version) };
}
