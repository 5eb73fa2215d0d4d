/** The statements of the projector's background maintenance (src/projector/maintenance.ts). */
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
