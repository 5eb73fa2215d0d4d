/**
 * The statements of the projector's background maintenance (src/projector/maintenance.ts), and the server settings a
 * long import checks (src/replay.ts).
 */
import type { Sql } from './sql.js';

/**
 * ANALYZE of every table. `target`: the statistics target of this run (rows sampled per table: 300 × target), for the
 * columns that have none of their own; without it, the database's `default_statistics_target`. `parallel` > 1: the
 * tables of the current schema (the largest first), that many at once, each ANALYZE on its own connection of the pool
 * (one ANALYZE uses one core of the server); the system catalogs are left to the next whole-database ANALYZE.
 */
export async function analyzeDatabase(sql: Sql, target?: number, parallel = 1): Promise<void> {
  const analyze = async (table?: string) => {
    const statement = table === undefined ? 'ANALYZE' : `ANALYZE ${table}`;
    if (target === undefined) {
      await sql.unsafe(statement);
      return;
    }
    await sql.begin(async (tx) => {
      await tx`SELECT set_config('default_statistics_target', ${String(target)}, true)`;
      await tx.unsafe(statement);
    });
  };
  if (parallel <= 1) {
    await analyze();
    return;
  }
  // regclass::text is the name quoted as it must be written
  const tables = await sql<{ name: string }[]>`
    SELECT c.oid::regclass::text AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm')
    ORDER BY c.relpages DESC, c.relname`;
  let next = 0;
  const worker = async () => {
    while (next < tables.length) await analyze(tables[next++].name);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, tables.length) }, worker));
}

/**
 * ANALYZE of every table of the current schema, but only of the columns an index of the table names (its key columns,
 * and those its expressions and predicate read); a table no index names a column of is analyzed whole. The planner's
 * choices for the projector's statements rest on those columns; the others (payloads: raw transactions, results, event
 * values, JSON) cost ANALYZE as much as the rest together and steer no plan of those statements. An import's growth
 * ANALYZEs use it (src/projector/maintenance.ts); its last ANALYZE is whole. The statistics each column gets are the
 * same as a whole ANALYZE's at the same target: same sample size, same rules.
 */
export async function analyzeIndexedColumns(sql: Sql): Promise<void> {
  const [r] = await sql<{ statement: string | null }[]>`
    SELECT 'ANALYZE ' || string_agg(t.spec, ', ' ORDER BY t.spec) AS statement
    FROM (
      SELECT c.oid::regclass::text || COALESCE(' (' || (
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
        FROM pg_attribute a
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND EXISTS (
          SELECT 1 FROM pg_index i
          WHERE i.indrelid = c.oid AND (
            a.attnum = ANY (i.indkey::int2[])
            -- columns an index's expressions or predicate read (recorded for indexes that back no constraint)
            OR EXISTS (
              SELECT 1 FROM pg_depend d
              WHERE d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
                AND d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid AND d.refobjsubid = a.attnum)))
      ) || ')', '') AS spec
      FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm')
    ) t`;
  if (r?.statement) await sql.unsafe(r.statement);
}

/** Whether autovacuum is off on this server. */
export async function autovacuumOff(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ off: boolean }[]>`SELECT current_setting('autovacuum') = 'off' AS off`;
  return r.off;
}

/**
 * VACUUM the tables the projector empties at every batch (mempool_pending, and the batch's deferred derived rows:
 * derived_deferred, nft_custody_deferred), and mempool_txs too when `all`. The deferred tables are not truncated at
 * the end of the VACUUM: their space is reused by the next batches, and the truncation would wait up to 5 s for the
 * projector's lock.
 */
export async function vacuumChurnedTables(sql: Sql, all = true): Promise<void> {
  if (all) await sql`VACUUM mempool_txs, mempool_pending`;
  else await sql`VACUUM mempool_pending`;
  await sql`VACUUM (TRUNCATE false) derived_deferred, nft_custody_deferred`;
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
