/** Event reads: a page of events of a tx or of a principal, the print events of a contract. Rows only. */
import type { Sql } from './sql.js';

export type EventTypeName = 'smart_contract_log' | 'stx_lock' | 'stx_asset' | 'fungible_token_asset' | 'non_fungible_token_asset';

/** The stored event JSON of a page (the reference's shape, kept at ingest). */
export async function eventsPage(
  sql: Sql,
  who: { txId: string } | { address: string },
  q: { types?: EventTypeName[]; limit: number; offset: number },
): Promise<unknown[]> {
  const { limit, offset } = q;
  const typeCond = q.types ? sql`AND e.event_type IN ${sql(q.types)}` : sql``;
  const address = 'address' in who ? who.address : '';
  const whoCond =
    'txId' in who
      ? sql`e.tx_id = ${who.txId}`
      : sql`(e.sender = ${address} OR e.recipient = ${address} OR e.locked_address = ${address} OR e.contract_id = ${address})
          AND CASE e.event_type
            WHEN 'stx_lock' THEN e.locked_address = ${address}
            WHEN 'smart_contract_log' THEN e.contract_id = ${address}
            ELSE (e.sender = ${address} OR e.recipient = ${address})
          END`;
  // By address (sql/0010_growth.sql): the page lies at or above the height of the (offset + limit)-th newest matching
  // event, found from the per-column (principal, block_height DESC) indexes without reading the whole history; the
  // exact order (which needs the txs' microblock_sequence) is then applied to that slice only.
  const n = offset + limit;
  // (a separate round trip: with the height as a literal the planner sees how few rows the page reads)
  let floor = sql``;
  if ('address' in who) {
    const [cut] = await sql<{ h: number }[]>`
      SELECT c.block_height AS h FROM (
        (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
          WHERE e.sender = ${address} AND e.canonical AND e.microblock_canonical AND ${whoCond} ${typeCond}
          ORDER BY e.block_height DESC LIMIT ${n})
        UNION
        (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
          WHERE e.recipient = ${address} AND e.canonical AND e.microblock_canonical AND ${whoCond} ${typeCond}
          ORDER BY e.block_height DESC LIMIT ${n})
        UNION
        (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
          WHERE e.locked_address = ${address} AND e.canonical AND e.microblock_canonical AND ${whoCond} ${typeCond}
          ORDER BY e.block_height DESC LIMIT ${n})
        UNION
        (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
          WHERE e.contract_id = ${address} AND e.canonical AND e.microblock_canonical AND ${whoCond} ${typeCond}
          ORDER BY e.block_height DESC LIMIT ${n})
      ) c ORDER BY c.block_height DESC OFFSET ${n - 1} LIMIT 1`;
    if (cut) floor = sql`AND e.block_height >= ${cut.h}`;
  }
  const rows = await sql<{ api: unknown }[]>`
    SELECT e.api FROM events e
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE ${whoCond} ${typeCond} ${floor}
      AND e.canonical AND e.microblock_canonical AND t.canonical AND t.microblock_canonical
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    LIMIT ${limit} OFFSET ${offset}`;
  return rows.map((r) => r.api);
}

/** `smart_contract_log` events of a contract, newest first; unconfirmed microblock events only when `unanchored`. */
export async function contractLogEvents(
  sql: Sql,
  contractId: string,
  q: { limit: number; offset: number; unanchored: boolean },
): Promise<unknown[]> {
  const cap = q.unanchored ? sql`` : sql`AND e.index_block_hash <> ''`;
  const rows = await sql<{ api: unknown }[]>`
    SELECT e.api FROM events e
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.contract_id = ${contractId} AND e.event_type = 'smart_contract_log'
      AND e.canonical AND e.microblock_canonical ${cap}
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    LIMIT ${q.limit} OFFSET ${q.offset}`;
  return rows.map((r) => r.api);
}
