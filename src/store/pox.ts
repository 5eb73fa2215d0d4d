/**
 * PoX synthetic events (sql/0008_pox.sql) placed by their events rows: the boot pox-2 / pox-3 / pox-4 print events
 * that decode, canonical (and microblock-canonical), newest first (block height, microblock sequence, tx index, event
 * index). The value is decoded at read time (src/views/pox.ts); pox_events filters by name and stacker.
 */
import type { Sql } from './sql.js';
import { BOOT_ADDRESS, cv } from '../chain/pox.js';

/** Where a PoX print event sits (its events row) and its value. */
export interface PoxEventPlacement {
  block_height: number | string;
  tx_id: string;
  tx_index: number;
  event_index: number;
  value_hex: string;
  contract_id: string;
}

export type PoxVersion = 'pox2' | 'pox3' | 'pox4';

const contractIds = (pox: PoxVersion): string[] => {
  const name = 'pox-' + pox.slice(3);
  return [`${BOOT_ADDRESS.mainnet}.${name}`, `${BOOT_ADDRESS.testnet}.${name}`];
};

interface Filter {
  stacker?: string;
  txId?: string;
}

function poxEventRows(sql: Sql, pox: PoxVersion, f: Filter, page?: { limit: number; offset: number }): Promise<PoxEventPlacement[]> {
  const [c1, c2] = contractIds(pox);
  return sql<PoxEventPlacement[]>`
    SELECT e.block_height, e.tx_id, e.tx_index, e.event_index, e.value_hex, e.contract_id
    FROM events e
    JOIN pox_events p ON p.value_md5 = md5(e.value_hex)
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (${c1}, ${c2})
      AND e.canonical AND e.microblock_canonical
      ${f.stacker !== undefined ? sql`AND p.stacker = ${f.stacker}` : sql``}
      ${f.txId !== undefined ? sql`AND e.tx_id = ${f.txId}` : sql``}
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    ${page ? sql`LIMIT ${page.limit} OFFSET ${page.offset}` : sql``}`;
}

export function poxEvents(sql: Sql, pox: PoxVersion, page: { limit: number; offset: number }) {
  return poxEventRows(sql, pox, {}, page);
}

export function poxEventsOfStacker(sql: Sql, pox: PoxVersion, stacker: string) {
  return poxEventRows(sql, pox, { stacker });
}

export function poxEventsOfTx(sql: Sql, pox: PoxVersion, txId: string) {
  return poxEventRows(sql, pox, { txId });
}

/**
 * The PoX print events of pox_event_cycles (sql/0032), as placements: `c` the cycle range, `e` the events row, `p` the
 * pox_events row, `t` the tx (for its microblock sequence). The caller adds its WHERE and ORDER BY.
 */
const placedCycleEvents = (sql: Sql) => sql`SELECT e.block_height, e.tx_id, e.tx_index, e.event_index, e.value_hex, e.contract_id
    FROM pox_event_cycles c
    JOIN events e ON md5(e.value_hex) = c.value_md5
      -- the predicate of the events_pox_print index (sql/0008), literally
      AND e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (
        'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
        'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
        'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
    JOIN pox_events p ON p.value_md5 = c.value_md5
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash`;

/**
 * Candidate delegation events of a pool, newest first: canonical delegate-stx / revoke-delegate-stx values whose
 * delegate has the pool's address (sql/0032 index), in blocks (afterHeight, maxHeight]. The caller keeps those whose
 * decoded delegate_to is exactly the pool (a contract pool shares its address with the others of that deployer).
 */
export function poolDelegationEvents(sql: Sql, pox: PoxVersion, pool: string, maxHeight: number, afterHeight: number) {
  const [c1, c2] = contractIds(pox);
  const address = cv.principal(pool).slice(4, 46); // 0x, the principal type byte, then version + hash160
  return sql<PoxEventPlacement[]>`
    ${placedCycleEvents(sql)}
    WHERE c.delegate_to = ${address} AND e.contract_id IN (${c1}, ${c2}) AND e.canonical AND e.microblock_canonical
      AND p.name IN ('delegate-stx', 'revoke-delegate-stx')
      AND e.block_height <= ${maxHeight} AND e.block_height > ${afterHeight}
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC`;
}

/** Whether a mined tx with this id is stored (any block). */
export async function txExists(sql: Sql, txId: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM txs WHERE tx_id = ${txId} LIMIT 1`;
  return rows.length > 0;
}

/** The burn height of the canonical block at a height, or undefined. */
export async function canonicalBlockBurnHeight(sql: Sql, height: number): Promise<number | undefined> {
  const [b] = await sql<{ burn_block_height: string }[]>`
    SELECT burn_block_height FROM blocks WHERE canonical AND block_height = ${height} LIMIT 1`;
  return b === undefined ? undefined : Number(b.burn_block_height);
}

// ---- PoX cycles and signer sets (sql/0031_pox_cycles.sql) ----------------------------------------------------------

export interface PoxCycleRow {
  cycle_number: string;
  block_height: string;
  index_block_hash: string;
  total_weight: string;
  total_stacked_amount: string;
  total_signers: number;
}

export async function poxCycles(sql: Sql, page: { limit: number; offset: number }) {
  const rows = await sql<(PoxCycleRow & { total: number })[]>`
    SELECT cycle_number::text, block_height::text, index_block_hash, total_weight::text, total_stacked_amount::text,
      total_signers, (count(*) OVER ())::integer AS total
    FROM pox_cycles WHERE canonical
    ORDER BY cycle_number DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { rows, total: rows[0]?.total ?? 0 };
}

export async function poxCycle(sql: Sql, cycle: number): Promise<PoxCycleRow | undefined> {
  const [row] = await sql<PoxCycleRow[]>`
    SELECT cycle_number::text, block_height::text, index_block_hash, total_weight::text, total_stacked_amount::text,
      total_signers
    FROM pox_cycles WHERE canonical AND cycle_number = ${cycle}
    LIMIT 1`;
  return row;
}

/** Whether any row (canonical or not: the reference's check) names this cycle. */
export async function poxCycleKnown(sql: Sql, cycle: number): Promise<boolean> {
  return (await sql`SELECT 1 FROM pox_cycles WHERE cycle_number = ${cycle} LIMIT 1`).length > 0;
}

/** Whether any signer row (canonical or not: the reference's check) of this cycle has this key. */
export async function poxSignerKnown(sql: Sql, cycle: number, signingKey: string): Promise<boolean> {
  return (await sql`SELECT 1 FROM pox_sets WHERE cycle_number = ${cycle} AND signing_key = ${signingKey} LIMIT 1`).length > 0;
}

export interface PoxSignerRow {
  signing_key: string;
  weight: string;
  stacked_amount: string;
  total_weight: string;
  total_stacked_amount: string;
}

/** The canonical signers of a cycle, by weight, stacked amount, key; one key filter optional. */
export async function poxSigners(sql: Sql, cycle: number, q: { signingKey?: string; limit: number; offset: number }) {
  const rows = await sql<(PoxSignerRow & { total: number })[]>`
    SELECT signing_key, weight::text, stacked_amount::text, total_weight::text, total_stacked_amount::text,
      (count(*) OVER ())::integer AS total
    FROM pox_sets
    WHERE canonical AND cycle_number = ${cycle}
      ${q.signingKey !== undefined ? sql`AND signing_key = ${q.signingKey}` : sql``}
    ORDER BY weight DESC, stacked_amount DESC, signing_key
    LIMIT ${q.limit} OFFSET ${q.offset}`;
  return { rows, total: rows[0]?.total ?? 0 };
}

/**
 * The canonical pox-4 events that decide who stacks with which signer in a cycle (stack-stx / stack-extend solo,
 * delegate-stack-* pooled, stack-aggregation-commit[-indexed] for the pool operators' signer keys), newest first.
 */
export function poxSignerEvents(sql: Sql, cycle: number): Promise<PoxEventPlacement[]> {
  const [c1, c2] = contractIds('pox4');
  // only the values whose cycle range can concern the cycle (sql/0032): covering it, or committed for exactly it
  return sql<PoxEventPlacement[]>`
    ${placedCycleEvents(sql)}
    WHERE e.contract_id IN (${c1}, ${c2})
      AND e.canonical AND e.microblock_canonical
      AND p.name IN ('stack-stx', 'stack-extend', 'delegate-stack-stx', 'delegate-stack-increase', 'delegate-stack-extend',
        'stack-aggregation-commit', 'stack-aggregation-commit-indexed')
      AND c.start_cycle_id <= ${cycle} AND c.end_cycle_id > ${cycle}
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC`;
}
