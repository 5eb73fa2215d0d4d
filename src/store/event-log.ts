/**
 * The durable log of observer messages (event_log) and the projector's place in it (projector_state,
 * sql/0070_projector.sql). Appending a message is what the observer's 200 means; the projector applies the log to the
 * derived tables in id order (src/projector/projector.ts).
 */
import { createHash } from 'node:crypto';
import type { Sql } from './sql.js';

export function bodySha256(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

export interface AppendEntry {
  path: string;
  body: string;
  /** arrival time, ms since the epoch (a recorded stream keeps its own) */
  receivedAt: number;
}

/**
 * Appends messages in ONE statement (one implicit transaction), ids in the entries' order. Returns each entry's new id,
 * or null for a message logged before (same path and body: a re-delivery changes nothing), including a repeat within
 * the same call.
 */
export async function appendToLog(sql: Sql, entries: readonly AppendEntry[]): Promise<(number | null)[]> {
  if (!entries.length) return [];
  const rows = entries.map((e) => ({ path: e.path, sha: bodySha256(e.body), body: e.body, at: e.receivedAt / 1000 }));
  const inserted = await sql.unsafe<{ id: string; path: string; body_sha256: string }[]>(...appendStatement(rows));
  const idOf = new Map(inserted.map((r) => [r.path + '\n' + r.body_sha256, Number(r.id)]));
  return rows.map((r) => {
    const key = r.path + '\n' + r.sha;
    const id = idOf.get(key);
    if (id === undefined) return null;
    idOf.delete(key); // a repeat later in the same call is a duplicate
    return id;
  });
}

/** Rows per statement up to which each value is a parameter of its own (4 per row, under the protocol's 65,535). */
const VALUES_ROWS_MAX = 10_000;

/**
 * The append statement and its parameters. Each body is a parameter of its own (a VALUES row per message), so it
 * travels as it is: a text[] parameter would have postgres.js escape every quote of every JSON body and the server
 * unescape them again (measured on a 2,000-block generated chain appended 500 lines per statement: half the
 * process's CPU and half the database's for the append). Ids follow the rows' order either way.
 */
function appendStatement(rows: readonly { path: string; sha: string; body: string; at: number }[]): [string, never[], { prepare: boolean }] {
  const returning = 'ON CONFLICT (path, body_sha256) DO NOTHING RETURNING id::text AS id, path, body_sha256';
  if (rows.length > VALUES_ROWS_MAX) {
    return [
      `INSERT INTO event_log (received_at, path, body_sha256, body)
       SELECT to_timestamp(r.at), r.path, r.sha, r.body
       FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) WITH ORDINALITY AS r(path, sha, body, at, ord)
       ORDER BY r.ord ${returning}`,
      [rows.map((r) => r.path), rows.map((r) => r.sha), rows.map((r) => r.body), rows.map((r) => r.at)] as never[],
      { prepare: false },
    ];
  }
  const params: unknown[] = [];
  const values = rows.map((r, i) => {
    params.push(r.path, r.sha, r.body, r.at);
    const p = 4 * i;
    return `(to_timestamp($${p + 4}::float8), $${p + 1}, $${p + 2}, $${p + 3})`;
  });
  // one row (the observer's common case) is prepared once per connection; larger ones vary in size
  return [`INSERT INTO event_log (received_at, path, body_sha256, body) VALUES ${values.join(', ')} ${returning}`, params as never[], { prepare: rows.length === 1 }];
}

/** Records a message that failed validation; nothing else is written. */
export async function recordDeadLetter(sql: Sql, path: string, body: string, reason: string): Promise<void> {
  await sql`INSERT INTO dead_letters (path, reason, body) VALUES (${path}, ${reason}, ${body})`;
}

export interface PendingMessage {
  id: number;
  path: string;
  /** ms since the epoch */
  receivedAt: number;
  /** body length in characters (batches are bounded by size) */
  size: number;
}

/** The next logged messages after `afterId`, oldest first, without their bodies. */
export async function pendingMessages(sql: Sql, afterId: number, limit: number): Promise<PendingMessage[]> {
  const rows = await sql<{ id: string; path: string; at: number; size: number }[]>`
    SELECT id::text AS id, path, extract(epoch FROM received_at)::float8 * 1000 AS at, octet_length(body) AS size
    FROM event_log WHERE event_log.id > ${afterId} ORDER BY event_log.id LIMIT ${limit}`;
  return rows.map((r) => ({ id: Number(r.id), path: r.path, receivedAt: Number(r.at), size: Number(r.size) }));
}

/** Bodies of logged messages by id. */
export async function logBodies(sql: Sql, ids: readonly number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await sql<{ id: string; body: string }[]>`
    SELECT id::text AS id, body FROM event_log WHERE id = ANY(${ids.map(String)}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.id), r.body]));
}

export interface ProjectorRow {
  applied_id: number;
  applied_at: Date | null;
  failed_id: number | null;
  failed_reason: string | null;
  failed_at: Date | null;
  /** newest logged id (0 on an empty log) */
  logged_id: number;
  /** arrival time of the oldest message not applied yet */
  oldest_pending_at: Date | null;
  pending: number;
}

/** Pending messages are counted exactly up to this many (see projectorRow). */
export const PENDING_COUNT_CAP = 100_000;

/** Where the projector stands in the log (any process can read it: the status route of an api process does). */
export async function projectorRow(sql: Sql): Promise<ProjectorRow> {
  const [r] = await sql<
    {
      applied_id: string;
      applied_at: Date | null;
      failed_id: string | null;
      failed_reason: string | null;
      failed_at: Date | null;
      logged_id: string;
      oldest_pending_at: Date | null;
      pending: string;
    }[]
  >`
    WITH p AS (
      -- applied: the batch is committed and its derived tables are written (projector_derived lags projector_state
      -- while the flush behind catches up)
      SELECT CASE WHEN d.applied_id < s.applied_id THEN d.applied_id ELSE s.applied_id END AS applied_id,
        CASE WHEN d.applied_id < s.applied_id THEN d.applied_at ELSE s.applied_at END AS applied_at,
        s.failed_id, s.failed_reason, s.failed_at
      -- (LIMIT 1: one row, which the planner cannot know of a table it has no statistics for; with its default guess
      -- of 1,700 rows it costed the pending count high enough to JIT-compile it, 200 ms a call)
      FROM projector_state s LEFT JOIN LATERAL (SELECT applied_id, applied_at FROM projector_derived LIMIT 1) d ON true
    )
    SELECT p.applied_id::text AS applied_id, p.applied_at, p.failed_id::text AS failed_id, p.failed_reason, p.failed_at,
      l.logged::text AS logged_id,
      (SELECT received_at FROM event_log WHERE id > p.applied_id ORDER BY id LIMIT 1) AS oldest_pending_at,
      -- counted exactly up to PENDING_COUNT_CAP (an index range, however long the backlog); above it, the span of ids
      -- (an estimate from above: a duplicate's append uses an id too)
      (SELECT CASE WHEN n.c <= ${PENDING_COUNT_CAP} THEN n.c ELSE l.logged - p.applied_id END
       FROM (SELECT count(*) AS c FROM (SELECT 1 FROM event_log WHERE id > p.applied_id ORDER BY id
         LIMIT ${PENDING_COUNT_CAP + 1}) AS x) AS n)::text AS pending
    FROM p CROSS JOIN (SELECT COALESCE(max(id), 0) AS logged FROM event_log) AS l`;
  if (!r) {
    return { applied_id: 0, applied_at: null, failed_id: null, failed_reason: null, failed_at: null, logged_id: 0, oldest_pending_at: null, pending: 0 };
  }
  return {
    ...r,
    applied_id: Number(r.applied_id),
    failed_id: r.failed_id === null ? null : Number(r.failed_id),
    logged_id: Number(r.logged_id),
    pending: Number(r.pending),
  };
}

/** The id of the last applied message, and of the newest logged one. */
export async function logPosition(sql: Sql): Promise<{ applied: number; logged: number }> {
  const [r] = await sql<{ applied: string | null; logged: string }[]>`
    SELECT (SELECT applied_id FROM projector_state)::text AS applied, COALESCE((SELECT max(id) FROM event_log), 0)::text AS logged`;
  return { applied: Number(r?.applied ?? 0), logged: Number(r?.logged ?? 0) };
}

/**
 * Inside the projector's transaction: takes the projector's row lock (one projector at a time per database) and
 * returns the applied id as committed, so a second projector (another process) never applies a message twice. With
 * `deferDerived`, the same statement sets stacks_pulse.defer_derived for this transaction: the derived-table hook then
 * records the blocks' flips instead of applying them, until flushDerived (sql/0100_derived_batches.sql).
 */
export async function lockProjector(tx: Sql, deferDerived = false): Promise<number> {
  const [r] = await tx<{ applied_id: string }[]>`
    INSERT INTO projector_state (id)
    SELECT 1 FROM (SELECT set_config('stacks_pulse.defer_derived', ${deferDerived ? 'on' : 'off'}, true)) AS settings
    ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
    RETURNING applied_id::text AS applied_id`;
  return Number(r.applied_id);
}

/** Applies the net effect of the flips recorded in this transaction (lockProjector with deferDerived). */
export function flushDerived(tx: Sql) {
  return tx`SELECT derived_flush()`;
}

/**
 * Outside the projector's transaction, on a connection of its own: applies the derived-table flips that committed
 * batches deferred (derived_flush over every deferred row committed so far) and records how far that reaches
 * (projector_derived); when it applied something, it then bumps the cache version so other processes' HTTP caches
 * drop answers read before the flush. REPEATABLE READ: the flush reads the base tables and the
 * deferred rows of one snapshot, i.e. of the same committed batches, whatever the projector commits meanwhile; that
 * equals one larger batch, which gives the same tables (test/projector). A concurrent change to a row it rewrites
 * (a block flipped again by a batch that committed meanwhile) is a serialization failure: the caller retries.
 */
export async function flushDeferredDerived(sql: Sql): Promise<void> {
  const owed = await sql.begin('isolation level repeatable read', async (tx) => {
    const [r] = await tx<{ owed: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM derived_deferred) OR EXISTS (SELECT 1 FROM nft_custody_deferred) AS owed`;
    if (r.owed) await tx`SELECT derived_flush()`;
    // the batches of this snapshot are applied: the status routes report them
    await tx`
      INSERT INTO projector_derived AS d (id, applied_id, applied_at)
      SELECT 1, COALESCE((SELECT applied_id FROM projector_state), 0), now()
      ON CONFLICT (id) DO UPDATE SET applied_id = EXCLUDED.applied_id, applied_at = EXCLUDED.applied_at`;
    return r.owed;
  });
  if (owed) await sql`UPDATE cache_version SET version = version + 1 WHERE id = 1`;
}

/**
 * Inside the projector's transaction, with its last statements: the new place in the log, failure cleared; with
 * `derived` (the batch wrote its derived tables itself), the derived tables' place too (flushDeferredDerived moves it
 * otherwise).
 */
export function markApplied(tx: Sql, id: number, derived: boolean) {
  return tx`
    WITH d AS (
      INSERT INTO projector_derived AS d (id, applied_id, applied_at) SELECT 1, ${id}, now() WHERE ${derived}
      ON CONFLICT (id) DO UPDATE SET applied_id = EXCLUDED.applied_id, applied_at = EXCLUDED.applied_at
    )
    UPDATE projector_state SET applied_id = ${id}, applied_at = now(), failed_id = NULL, failed_reason = NULL, failed_at = NULL`;
}

/** The message the projector could not apply (the log keeps growing behind it). */
export async function recordProjectorFailure(sql: Sql, id: number, reason: string): Promise<void> {
  await sql`UPDATE projector_state SET failed_id = ${id}, failed_reason = ${reason}, failed_at = now()`;
}

/** The log entries after `afterId`, in arrival order (at most `limit`): what export-events writes. */
export async function logEntriesAfter(sql: Sql, afterId: number, limit: number): Promise<{ id: number; received_at: Date; path: string; body: string }[]> {
  return sql<{ id: number; received_at: Date; path: string; body: string }[]>`
    SELECT id, received_at, path, body FROM event_log WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`;
}

/** True when no block is stored and the projector has applied nothing (a database an import fills from scratch). */
export async function nothingProjected(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ empty: boolean }[]>`
    SELECT NOT EXISTS (SELECT 1 FROM blocks) AND COALESCE((SELECT applied_id FROM projector_state), 0) = 0 AS empty`;
  return r.empty;
}
