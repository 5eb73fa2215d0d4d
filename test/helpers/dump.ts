import type { Sql } from '../../src/store/sql.js';

/**
 * Every table's rows ordered by key, without values that legitimately differ between two ingests of the same stream:
 * arrival times (event_log.received_at, mempool receipt_time, the arrival time a streamed microblock and its txs keep as
 * block_time, even after an anchor block confirms them) and
 * surrogate ids consumed by rejected duplicate inserts.
 */
export async function dumpDatabase(sql: Sql): Promise<Record<string, readonly unknown[]>> {
  return {
    event_log: await sql`SELECT path, body_sha256 FROM event_log ORDER BY id`,
    dead_letters: await sql`SELECT path, reason, body FROM dead_letters ORDER BY id`,
    chain_state: await sql`SELECT * FROM chain_state`,
    burn_blocks: await sql`SELECT * FROM burn_blocks ORDER BY burn_block_hash`,
    blocks: await sql`SELECT * FROM blocks ORDER BY index_block_hash`,
    microblocks: await sql`
      SELECT *, 0 AS block_time
      FROM microblocks ORDER BY microblock_hash, index_block_hash`,
    txs: await sql`
      SELECT *, CASE WHEN microblock_hash = '' THEN block_time ELSE 0 END AS block_time
      FROM txs ORDER BY tx_id, index_block_hash, microblock_hash`,
    events: await sql`SELECT * FROM events ORDER BY tx_id, index_block_hash, microblock_hash, event_index`,
    miner_rewards: await sql`SELECT * FROM miner_rewards ORDER BY index_block_hash, from_index_block_hash, recipient, reward_index`,
    mempool_txs: await sql`
      SELECT tx_id, raw_tx, status, pruned,
        mempool_replaced_by(rbf_lazy, sender_address, nonce, replaced_by_tx_id) AS replaced_by_tx_id, receipt_block_height, seq
      FROM mempool_txs ORDER BY tx_id`,
    // the pending rows of mempool_txs (kept by its triggers), receipt time left out as there
    mempool_pending: await sql`
      SELECT tx_id, receipt_block_height, sender_address, sponsor_address, token_transfer_recipient,
        contract_call_contract_id, smart_contract_contract_id
      FROM mempool_pending ORDER BY tx_id`,
    // copies its deploys' txs.seq (storage order, sql/0113): ranked with the others by rankSeq
    contract_deploys: await sql`SELECT * FROM contract_deploys ORDER BY tx_id, index_block_hash, microblock_hash`,
  };
}

/** Tables of configuration and bookkeeping, not derived from the chain (or with their own arrival-time rows). */
const NOT_DERIVED = new Set([
  'schema_migrations',
  'schema_functions',
  'api_keys',
  'cache_version',
  'derived_appliers',
  'push_interest',
  'push_messages',
  'push_outbox',
  'projector_state',
  'projector_derived',
  'chain_network',
  'bns_imports',
  'bns_v2_contracts',
  // hooks: registrations and the deliveries' journal, consumed by the hook evaluator as it goes
  'hooks',
  'hook_chain',
  'hook_cursor',
  'hook_deliveries',
  'hook_attempts',
]);
/** Arrival and bookkeeping times: they differ between two ingests of the same stream. */
const VOLATILE_COLUMNS = ['received_at', 'created_at', 'recorded_at', 'imported_at', 'applied_at', 'failed_at'];

/**
 * dumpDatabase, plus every other table derived from the chain (balances, custody, principal indexes, names, PoX
 * cycles, …), whole rows sorted, without arrival times: two databases fed the same stream must be equal here.
 */
export async function dumpEverything(sql: Sql): Promise<Record<string, readonly unknown[]>> {
  const base = await dumpDatabase(sql);
  const tables = await sql<{ t: string }[]>`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`;
  const out: Record<string, readonly unknown[]> = { ...base };
  for (const { t } of tables) {
    if (t in base || NOT_DERIVED.has(t)) continue;
    const rows = await sql.unsafe<{ r: string }[]>(`SELECT (to_jsonb(x) - $1::text[])::text AS r FROM "${t}" x`, [VOLATILE_COLUMNS]);
    out[t] = rows.map((r) => r.r).sort();
  }
  // the log positions: where the projector resumes, and how far the derived tables are applied (equal once it is done)
  const [p] = await sql<{ applied_id: string; derived_id: string | null }[]>`
    SELECT applied_id::text, (SELECT applied_id::text FROM projector_derived) AS derived_id FROM projector_state`;
  out.projector_state = [p?.applied_id ?? null, p?.derived_id ?? null];
  return out;
}

/**
 * change_seq values are ordering keys: a transaction rolled back (a crash, a failed projection attempt) consumes values,
 * and PostgreSQL's crash recovery skips ahead in a sequence, so only their relative order is compared (each value
 * replaced by its rank).
 */
export function rankSeq(dump: Record<string, readonly unknown[]>): Record<string, unknown[]> {
  const seqs = new Set<number>();
  for (const rows of Object.values(dump))
    for (const r of rows as Record<string, unknown>[]) if (r && typeof r === 'object' && r.seq !== undefined && r.seq !== null) seqs.add(Number(r.seq));
  const rank = new Map([...seqs].sort((a, b) => a - b).map((s, i) => [s, i]));
  const out: Record<string, unknown[]> = {};
  for (const [table, rows] of Object.entries(dump)) {
    out[table] = (rows as Record<string, unknown>[]).map((r) =>
      r && typeof r === 'object' ? (r.seq !== undefined && r.seq !== null ? { ...r, seq: rank.get(Number(r.seq)) } : { ...r }) : r,
    );
  }
  return out;
}

/**
 * Surrogate ids (bigserial) of the derived tables are ordering keys too, and crash recovery skips ahead in their
 * sequences as in change_seq's: each `id` is replaced by its rank in its table.
 */
export function rankSurrogateIds(dump: Record<string, readonly unknown[]>): Record<string, readonly unknown[]> {
  const out: Record<string, readonly unknown[]> = {};
  for (const [table, rows] of Object.entries(dump)) {
    if (!rows.length || typeof rows[0] !== 'string' || !(rows[0] as string).includes('"id": ')) {
      out[table] = rows;
      continue;
    }
    const parsed = rows.map((r) => JSON.parse(r as string) as Record<string, unknown>);
    const rank = new Map([...new Set(parsed.map((r) => Number(r.id)))].sort((a, b) => a - b).map((v, i) => [v, i]));
    out[table] = parsed.map((r) => JSON.stringify({ ...r, id: rank.get(Number(r.id)) })).sort();
  }
  return out;
}
