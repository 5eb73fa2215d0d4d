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

export async function vacuumMempool(sql: Sql): Promise<void> {
  await sql`VACUUM mempool_txs`;
}

/** The server settings that decide how fast a long sync writes (each in bytes, or seconds for the timeout). */
export interface WriteSettings {
  sharedBuffers: number;
  maxWalSize: number;
  checkpointTimeout: number;
}

const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1024, '8kB': 8192, MB: 1024 ** 2, GB: 1024 ** 3 };

/** shared_buffers, max_wal_size and checkpoint_timeout as the server runs with them. */
export async function writeSettings(sql: Sql): Promise<WriteSettings> {
  const rows = await sql<{ name: string; setting: string; unit: string | null }[]>`
    SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout')`;
  const value = (name: string) => {
    const r = rows.find((x) => x.name === name);
    if (!r) return NaN;
    if (r.unit === 's' || r.unit === null) return Number(r.setting);
    return Number(r.setting) * (UNIT_BYTES[r.unit] ?? NaN);
  };
  return { sharedBuffers: value('shared_buffers'), maxWalSize: value('max_wal_size'), checkpointTimeout: value('checkpoint_timeout') };
}
