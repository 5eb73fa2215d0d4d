/** Mempool messages: new pending transactions and dropped ones, each in one statement (sql/0070_projector.sql). */
import type { ChainUpdate } from '../../chain/types.js';
import { emptyResult, type IngestResult } from './result.js';
import { json, type Tx } from './rows.js';

/**
 * Calls one of sql/0070_projector.sql's mempool functions (the mempool lock, then the writes). Its answer: the txs
 * it changed (and, for /new_mempool_tx, those seen for the first time).
 */
async function mempoolFunction(tx: Tx, id: number, u: ChainUpdate, call: string, params: unknown[]): Promise<IngestResult> {
  const [row] = await tx.unsafe<{ r: { tx_ids: string[]; new_tx_ids?: string[] } }[]>(`SELECT ${call} AS r`, [id, ...params] as never[], {
    prepare: true,
  });
  const result = emptyResult(u, id);
  result.txIds.push(...(row?.r.tx_ids ?? []));
  if (row?.r.new_tx_ids) result.newMempoolTxs = row.r.new_tx_ids;
  return result;
}

/**
 * The new pending txs (one already mined on the canonical chain does not return) and the push_outbox row. minedNext:
 * those of them the block applied next in the same transaction mines on the canonical tip (see mempool_insert_rows).
 */
export function applyMempool(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'mempool' }>, pushOutbox: boolean, minedNext: readonly string[] = []) {
  return mempoolFunction(tx, id, u, 'project_mempool($1, $2::text::json, $3, $4::text[])', [json(u.txs), pushOutbox, minedNext]);
}

const DROP_STATUS: Record<string, string> = {
  ReplaceByFee: 'dropped_replace_by_fee',
  ReplaceAcrossFork: 'dropped_replace_across_fork',
  TooExpensive: 'dropped_too_expensive',
  StaleGarbageCollect: 'dropped_stale_garbage_collect',
  Problematic: 'dropped_problematic',
};

export function dropStatus(reason: string): string {
  return DROP_STATUS[reason] ?? 'dropped_' + reason.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The dropped txs (status from the reason, replaced_by when the node names one) and the push_outbox row. */
export function dropMempool(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'drop_mempool' }>, pushOutbox: boolean) {
  return mempoolFunction(tx, id, u, 'project_drop_mempool($1, $2::text[], $3, $4, $5)', [
    u.txIds,
    dropStatus(u.reason),
    u.newTxId,
    pushOutbox,
  ]);
}
