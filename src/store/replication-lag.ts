/** How far a streaming replica is behind its primary, as PostgreSQL reports it on the replica (0 on a primary). */
import type { Sql } from './sql.js';

/** Seconds since the last replayed transaction and WAL bytes received but not replayed yet (null: unknown). */
export async function replicationLag(sql: Sql): Promise<{ seconds: number | null; bytes: number | null }> {
  const [r] = await sql<{ seconds: number | null; bytes: number | null }[]>`
    SELECT CASE WHEN pg_is_in_recovery() THEN COALESCE(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) ELSE 0 END::float8 AS seconds,
           CASE WHEN pg_is_in_recovery() THEN COALESCE(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0) ELSE 0 END::float8 AS bytes`;
  return r;
}
