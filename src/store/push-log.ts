/** The push_messages table (sql/0005_push.sql): append in publication order, read back for resume. */
import type { Sql } from './sql.js';

/** One message for one room. The Socket.IO event name is `event` (the room name, or `reorg`). */
export interface PushMessage {
  room: string;
  event: string;
  args: unknown[];
  /** block messages: where the cursor sits on the chain */
  meta?: { height: number; index_block_hash: string };
}

/** A message with its resume cursor. */
export interface PublishedMessage extends PushMessage {
  seq: string;
  /**
   * The primary's WAL position after the COMMIT that stored this message (and, before it, the chain data it tells
   * about): an api process reading a replica delivers it once the replica has replayed that far. Carried on the
   * push channel only, never sent to clients.
   */
  lsn?: string;
}

/**
 * Appends the messages of one observer message (event_log id `eventId`) in order. Idempotent: a second call for
 * the same event id writes and returns nothing, so a re-publication after a retry is not delivered twice. Removes the
 * message's push_outbox row in the same statement (sql/0009_push_outbox.sql).
 */
export async function appendMessages(
  sql: Sql,
  eventId: number,
  msgs: PushMessage[],
  /** ordOffset: ord of the first message (a change published in parts); final: false keeps the outbox row */
  opts: { ordOffset?: number; final?: boolean } = {},
): Promise<PublishedMessage[]> {
  const final = opts.final ?? true;
  const offset = opts.ordOffset ?? 0;
  if (!msgs.length) {
    if (final) await sql`DELETE FROM push_outbox WHERE event_id = ${eventId}`;
    return [];
  }
  const rows = msgs.map((m, i) => ({ ord: offset + i, room: m.room, event: m.event, args: m.args, meta: m.meta ?? null }));
  const inserted = await sql.unsafe<{ seq: string; ord: number }[]>(
    `WITH done AS (DELETE FROM push_outbox WHERE event_id = $1 AND $3)
     INSERT INTO push_messages (event_id, ord, room, event, args, meta)
     SELECT $1, r.ord, r.room, r.event, r.args, r.meta
     FROM json_to_recordset($2::text::json) AS r(ord integer, room text, event text, args json, meta json)
     ORDER BY r.ord
     ON CONFLICT (event_id, ord) DO NOTHING
     RETURNING seq::text AS seq, ord`,
    [eventId, JSON.stringify(rows), final],
    { prepare: true },
  );
  const seqByOrd = new Map(inserted.map((r) => [r.ord, r.seq]));
  return msgs.flatMap((m, i) => (seqByOrd.has(offset + i) ? [{ ...m, seq: seqByOrd.get(offset + i)! }] : []));
}

/** Messages of `roomNames` after `cursor`, oldest first (at most `limit`). */
export async function messagesAfter(sql: Sql, cursor: string, roomNames: string[], limit = 10_000): Promise<PublishedMessage[]> {
  if (!roomNames.length) return [];
  const rows = await sql<{ seq: string; room: string; event: string; args: unknown[]; meta: PushMessage['meta'] | null }[]>`
    SELECT seq::text AS seq, room, event, args, meta FROM push_messages
    WHERE seq > ${cursor}::bigint AND room = ANY(${roomNames})
    ORDER BY push_messages.seq ASC LIMIT ${limit}`;
  return rows.map((r) => ({ seq: r.seq, room: r.room, event: r.event, args: r.args, ...(r.meta ? { meta: r.meta } : {}) }));
}

/** The newest sequence (0 on an empty log). */
export async function lastSeq(sql: Sql): Promise<string> {
  const [r] = await sql<{ seq: string }[]>`SELECT COALESCE(max(seq), 0)::text AS seq FROM push_messages`;
  return r.seq;
}

/** The last stored arguments of each of `roomNames` (rooms with no message are left out). */
export async function lastRoomArgs(sql: Sql, roomNames: string[]): Promise<{ room: string; args: unknown[] }[]> {
  return sql<{ room: string; args: unknown[] }[]>`
    SELECT DISTINCT ON (room) room, args FROM push_messages WHERE room = ANY(${roomNames}) ORDER BY room, seq DESC`;
}

/** The changes committed but not yet published (push_outbox, sql/0009_push_outbox.sql), with their log entry, oldest first. */
export async function unpublishedChanges<R>(sql: Sql): Promise<{ event_id: string; result: R; path: string; body: string }[]> {
  return sql<{ event_id: string; result: R; path: string; body: string }[]>`
    SELECT o.event_id::text AS event_id, o.result, l.path, l.body
    FROM push_outbox o JOIN event_log l ON l.id = o.event_id ORDER BY o.event_id`;
}

/** Forgets an unpublished change (one that can no longer be published). */
export async function dropUnpublished(sql: Sql, eventId: string | number): Promise<void> {
  await sql`DELETE FROM push_outbox WHERE event_id = ${eventId}`;
}

/** Takes a transaction's snapshot now (a repeatable-read snapshot is taken at its first statement). */
export async function takeSnapshot(tx: Sql): Promise<void> {
  await tx`SELECT 1`;
}
