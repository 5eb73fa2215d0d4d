/**
 * PoX synthetic events (sql/0008_pox.sql) placed by their events rows: the boot pox-2 / pox-3 / pox-4 print events
 * that decode, canonical (and microblock-canonical), newest first (block height, microblock sequence, tx index, event
 * index). The value is decoded at read time (src/api/serialize-pox.ts); pox_events filters by name and stacker.
 */
import type { Sql } from './connect.js';
import { BOOT_ADDRESS, cv } from '../chain/pox.js';
import type { PoxEventPlacement } from '../api/serialize-pox.js';

export type PoxVersion = 'pox2' | 'pox3' | 'pox4';

const contractIds = (pox: PoxVersion): string[] => {
  const name = 'pox-' + pox.slice(3);
  return [`${BOOT_ADDRESS.mainnet}.${name}`, `${BOOT_ADDRESS.testnet}.${name}`];
};

interface Filter {
  stacker?: string;
  txId?: string;
  /** delegate-stx / revoke-delegate-stx events whose value mentions this principal, in (afterHeight, maxHeight] */
  delegations?: { principal: string; maxHeight: number; afterHeight: number };
}

function poxEventRows(sql: Sql, pox: PoxVersion, f: Filter, page?: { limit: number; offset: number }): Promise<PoxEventPlacement[]> {
  const [c1, c2] = contractIds(pox);
  const principalHex = f.delegations ? cv.principal(f.delegations.principal).slice(2) : '';
  return sql<PoxEventPlacement[]>`
    SELECT e.block_height, e.tx_id, e.tx_index, e.event_index, e.value_hex, e.contract_id
    FROM events e
    JOIN pox_events p ON p.value_md5 = md5(e.value_hex)
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (${c1}, ${c2})
      AND e.canonical AND e.microblock_canonical
      ${f.stacker !== undefined ? sql`AND p.stacker = ${f.stacker}` : sql``}
      ${f.txId !== undefined ? sql`AND e.tx_id = ${f.txId}` : sql``}
      ${
        f.delegations
          ? sql`AND p.name IN ('delegate-stx', 'revoke-delegate-stx') AND e.block_height <= ${f.delegations.maxHeight}
              AND e.block_height > ${f.delegations.afterHeight} AND strpos(lower(e.value_hex), ${principalHex}) > 0`
          : sql``
      }
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

/** Candidate delegation events of a pool (the caller keeps those whose delegate_to is the pool). */
export function poolDelegationEvents(sql: Sql, pox: PoxVersion, pool: string, maxHeight: number, afterHeight: number) {
  return poxEventRows(sql, pox, { delegations: { principal: pool, maxHeight, afterHeight } });
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
