/**
 * What a message's writes share: the rows inserted in bulk from JSON, the PoX print values, the change sequence and
 * the mempool lock.
 */
import type { Sql } from '../sql.js';
import type { EventRow } from '../../chain/types.js';
import { poxEventRows } from '../../chain/pox.js';

export type Tx = Sql;

/** Lock serialising every change to mempool_txs (mempool messages run beside block messages). */
export const MEMPOOL_LOCK = 7355609;

export function json(rows: unknown): string {
  return JSON.stringify(rows);
}

export function insertRows(tx: Tx, table: 'txs' | 'events' | 'microblocks' | 'miner_rewards', rows: object[], seq?: number): Promise<unknown> {
  if (!rows.length) return Promise.resolve();
  const withSeq = seq === undefined ? rows : rows.map((r) => ({ ...r, seq }));
  // one parameter, any number of rows: no bind-parameter limit on genesis-sized blocks
  return tx.unsafe(
    `INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json) ON CONFLICT DO NOTHING`,
    [json(withSeq)],
    { prepare: true },
  );
}

/** Decoded PoX print values of these events (sql/0008_pox.sql); placement and canonical state stay on the events rows. */
export function insertPoxEvents(tx: Tx, events: readonly EventRow[]): Promise<unknown> {
  const rows = poxEventRows(events);
  if (!rows.length) return Promise.resolve();
  return tx`
    INSERT INTO pox_events (value_md5, name, stacker, locked, balance, burnchain_unlock_height, pox_addr_raw)
    SELECT md5(r.value_hex), r.name, r.stacker, r.locked, r.balance, r.burnchain_unlock_height, r.pox_addr_raw
    FROM json_to_recordset(${json(rows)}::text::json) AS r(value_hex text, name text, stacker text, locked numeric,
      balance numeric, burnchain_unlock_height bigint, pox_addr_raw text)
    ON CONFLICT (value_md5) DO NOTHING`;
}

/** The statements of a list that are there (a step with nothing to do has none). */
export function defined<T>(...items: (T | undefined)[]): T[] {
  return items.filter((x): x is T => x !== undefined);
}

/** The change sequence value of a message's rows (their `seq` columns). */
export async function nextSeq(tx: Tx): Promise<number> {
  const [r] = await tx<{ seq: string }[]>`SELECT nextval('change_seq')::text AS seq`;
  return Number(r.seq);
}
