/**
 * Indexes deferred during a bulk import (sql/0115_bulk_import_indexes.sql).
 *
 * Each txs, events and mempool_pending row pays for every index of its table. The indexes below serve API reads only:
 * nothing on the write path (the projector's statements, the mempool rules, reorg flips, the derived appliers and
 * their triggers) looks rows up through them; measured with pg_stat_user_indexes after importing a 10,000-block
 * generated chain with forks, microblock streams, a mempool and BNS (idx_scan 0 for each), and for the token and name
 * indexes after a 30,000-block one. Without the indexes on a balance or an owner, the appliers' rewrites of those
 * columns are heap-only updates. `import-events` into an empty database drops them before it appends anything and
 * creates them again when everything is applied; an index is only ever missing, never wrong, so an interrupted import
 * leaves a slower API, not a different one, until the next start-up creates what deferred_indexes still lists.
 *
 * Not deferred: unique indexes (they decide ON CONFLICT), and every index some write-path statement reads (by id,
 * block, sender/sponsor + nonce, microblock, contract call, recipient, the mempool's pending receipt time used by the
 * Nakamoto garbage collection), even where a given stream never exercises it.
 */
import type { Logger } from 'pino';
import type { Sql } from './sql.js';

export const DEFERRABLE_INDEXES: readonly string[] = [
  // recent-tx list orders and filters (/extended/v1/tx)
  'txs_list_height',
  'txs_list_burn_time',
  'txs_list_fee',
  'txs_list_type',
  'txs_list_sender',
  'txs_list_recipient',
  'txs_list_contract_call',
  'txs_list_function',
  'txs_list_nonce',
  // principal and contract lookups, the unconfirmed stream's overlay
  'txs_sender',
  'txs_sponsor',
  'txs_smart_contract',
  'txs_unanchored_sender',
  'txs_unanchored_sponsor',
  'txs_microblock_list',
  // event pages by principal, contract and asset
  'events_sender_height',
  'events_recipient_height',
  'events_locked_height',
  'events_contract_height',
  'events_stx_memo_recipient',
  'events_asset',
  'events_unanchored_recipient',
  'events_unanchored_asset',
  // mempool lists by principal and contract
  'mempool_sender',
  'mempool_sponsor',
  'mempool_recipient',
  'mempool_smart_contract',
  // an address's transaction page order
  'principal_txs_order',
  // token holdings by owner and holders by balance (every balance or owner change rewrote their entries)
  'nft_custody_owner',
  'nft_custody_owner_v3',
  'ft_balances_asset_balance',
  'ft_balances_principal_v3',
  'ft_balances_principal_name',
  // a name by the tx that registered it
  'bns_names_tx',
];

/** Serialises deferring and restoring between processes (a service starting while an import ends). */
const INDEX_LOCK = 7355610;

/**
 * Drops the deferrable indexes that exist, recording their definitions (one transaction: either all are recorded and
 * dropped or none). Returns how many were dropped now.
 */
export async function deferIndexes(sql: Sql, names: readonly string[] = DEFERRABLE_INDEXES): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${INDEX_LOCK})`; // exclusive: no index is being restored meanwhile
    const found = await tx<{ name: string; table_name: string; definition: string }[]>`
      SELECT i.indexname AS name, i.tablename AS table_name, i.indexdef AS definition
      FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.indexname = ANY(${names as string[]})
      ORDER BY i.indexname`;
    for (const f of found) {
      await tx`INSERT INTO deferred_indexes (name, table_name, definition) VALUES (${f.name}, ${f.table_name}, ${f.definition})
        ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition, table_name = EXCLUDED.table_name`;
      await tx.unsafe(`DROP INDEX ${quoteIdent(f.name)}`);
    }
    return found.length;
  }) as unknown as Promise<number>;
}

/** How many indexes deferred_indexes still lists. */
export async function deferredIndexCount(sql: Sql): Promise<number> {
  const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deferred_indexes`;
  return r.n;
}

/**
 * Creates every index deferred_indexes lists, one transaction each (the row goes with its index, so progress
 * survives a crash), reporting after each. `parallel` transactions build at once, each on its own connection of the
 * pool, the largest tables' indexes first (PostgreSQL builds indexes of one table side by side: each holds a SHARE lock
 * on it). Returns the names created.
 */
export async function restoreDeferredIndexes(
  sql: Sql,
  onProgress?: (done: number, total: number, name: string) => void,
  parallel = 1,
): Promise<string[]> {
  const total = await deferredIndexCount(sql);
  const done: string[] = [];
  const worker = async () => {
    for (;;) {
      const name = (await sql.begin(async (tx) => {
        // shared: builders run side by side; deferIndexes holds it exclusively
        await tx`SELECT pg_advisory_xact_lock_shared(${INDEX_LOCK})`;
        // a row another builder holds is skipped: nothing is built twice
        const [row] = await tx<{ name: string; definition: string }[]>`
          SELECT d.name, d.definition FROM deferred_indexes d
          LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(d.table_name))
          ORDER BY coalesce(c.relpages, 0) DESC, d.table_name, d.name
          LIMIT 1 FOR UPDATE OF d SKIP LOCKED`;
        if (!row) return null;
        // a large table's index builds faster with more sort memory (and the parallel workers PostgreSQL allows)
        await tx`SET LOCAL maintenance_work_mem = '256MB'`;
        await tx.unsafe(ifNotExists(row.definition));
        await tx`DELETE FROM deferred_indexes WHERE name = ${row.name}`;
        return row.name;
      })) as unknown as string | null;
      if (name === null) return;
      done.push(name);
      onProgress?.(done.length, Math.max(total, done.length), name);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
  return done;
}

/** Restores what an earlier import left deferred, logging it; a no-op (one query) otherwise. */
export async function restoreLeftoverIndexes(sql: Sql, log: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  const n = await deferredIndexCount(sql);
  if (!n) return;
  log.warn({ indexes: n }, 'creating the indexes an interrupted import left deferred (the API is slower without them)');
  const started = Date.now();
  const names = await restoreDeferredIndexes(sql);
  log.info({ indexes: names.length, ms: Date.now() - started }, 'deferred indexes created');
}

/** `CREATE [UNIQUE] INDEX name ON …` as pg_indexes prints it → the same with IF NOT EXISTS. */
export function ifNotExists(definition: string): string {
  const m = /^CREATE (UNIQUE )?INDEX (?!IF NOT EXISTS )/.exec(definition);
  if (!m) throw new Error(`unexpected index definition: ${definition.slice(0, 80)}`);
  return `CREATE ${m[1] ?? ''}INDEX IF NOT EXISTS ${definition.slice(m[0].length)}`;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
