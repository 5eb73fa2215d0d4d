/** The chain version the HTTP cache tags answers with (sql/0007_cache.sql: bumped in every observer message's COMMIT). */
import type { Sql } from './sql.js';

export async function chainVersion(sql: Sql): Promise<{ token: string; version: number }> {
  const [row] = await sql<{ token: string; version: number }[]>`SELECT token, version FROM cache_version WHERE id = 1`;
  if (!row) {
    // The migrations seed this row and nothing deletes it, and the service does not start without them: an empty
    // answer here is one postgres.js resolved for a query whose connection was killed under it (seen with
    // pg_terminate_backend mid-read). Treated as the database being unreachable (a 503), never as a 500.
    throw Object.assign(new Error('cache_version row not read: the database connection was lost mid-query'), { code: '08006' });
  }
  return { token: row.token, version: Number(row.version) };
}
