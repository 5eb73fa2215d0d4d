/**
 * The statements of the projector's background maintenance (src/projector/maintenance.ts), and the server settings a
 * long import checks (src/replay.ts).
 */
import type { Sql } from './sql.js';

/**
 * ANALYZE of every table. `target`: the statistics target of this run (rows sampled per table: 300 × target), for the
 * columns that have none of their own; without it, the database's `default_statistics_target`.
 */
export async function analyzeDatabase(sql: Sql, target?: number): Promise<void> {
  if (target === undefined) {
    await sql`ANALYZE`;
    return;
  }
  await sql.begin(async (tx) => {
    await tx`SELECT set_config('default_statistics_target', ${String(target)}, true)`;
    await tx`ANALYZE`;
  });
}

/** Whether autovacuum is off on this server. */
export async function autovacuumOff(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ off: boolean }[]>`SELECT current_setting('autovacuum') = 'off' AS off`;
  return r.off;
}

/** VACUUM mempool_pending, and mempool_txs too when `all`. */
export async function vacuumMempool(sql: Sql, all = true): Promise<void> {
  if (all) await sql`VACUUM mempool_txs, mempool_pending`;
  else await sql`VACUUM mempool_pending`;
}

/** The server settings that decide how fast a long sync writes (each in bytes, or seconds for the timeout). */
export interface WriteSettings {
  sharedBuffers: number;
  maxWalSize: number;
  checkpointTimeout: number;
}

/** shared_buffers, max_wal_size and checkpoint_timeout as the server runs with them, converted by the server itself. */
export async function writeSettings(sql: Sql): Promise<WriteSettings> {
  const [r] = await sql<{ sb: string; wal: string; ckpt: string }[]>`
    SELECT pg_size_bytes(current_setting('shared_buffers'))::text AS sb,
           pg_size_bytes(current_setting('max_wal_size'))::text AS wal,
           extract(epoch FROM current_setting('checkpoint_timeout')::interval)::text AS ckpt`;
  return { sharedBuffers: Number(r.sb), maxWalSize: Number(r.wal), checkpointTimeout: Number(r.ckpt) };
}
