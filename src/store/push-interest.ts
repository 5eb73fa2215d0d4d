/**
 * The push_interest table: which rooms have subscribers in which process, until when (so a publisher in another
 * process builds only the rooms someone follows). src/push/interest.ts keeps the in-memory view and decides what to write.
 */
import type { Sql } from './sql.js';

/** Every entry still in force (`until` in epoch milliseconds). */
export async function interestRows(sql: Sql): Promise<{ room: string; owner: string; until: number }[]> {
  return sql<{ room: string; owner: string; until: number }[]>`
    SELECT room, owner, (extract(epoch FROM until) * 1000)::float8 AS until FROM push_interest WHERE until > now()`;
}

/**
 * Records `owner`'s interest in `rooms` until `untils` (epoch seconds, one per room) and sends each of `notices` on
 * the NOTIFY channel `channel`, in one transaction (the notices go out only if the rows are stored).
 */
export async function recordInterest(sql: Sql, owner: string, rooms: string[], untils: number[], channel: string, notices: string[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO push_interest (room, owner, until)
      SELECT r, ${owner}, to_timestamp(u) FROM unnest(${rooms}::text[], ${untils}::float8[]) AS x(r, u)
      ON CONFLICT (room, owner) DO UPDATE SET until = EXCLUDED.until`;
    for (const n of notices) await tx`SELECT pg_notify(${channel}, ${n})`;
  });
}

/** Deletes rows that expired long ago (the publisher calls it now and then). */
export async function pruneInterest(sql: Sql): Promise<void> {
  await sql`DELETE FROM push_interest WHERE until < now() - interval '1 hour'`;
}
