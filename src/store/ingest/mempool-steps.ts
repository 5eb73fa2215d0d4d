// The reference's mempool steps (sql/0017_mempool_reference_rules.sql); the caller holds MEMPOOL_LOCK.
import type { IngestResult } from './result.js';
import type { Tx } from './rows.js';

/** Mined txs leave the mempool with their payer+nonce group (pruned, status kept). */
export async function mempoolPrune(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`SELECT mempool_prune(${ids}::text[])`;
}

/** Orphaned txs (and their payer+nonce group) return to the mempool; the restored ids join the result. */
export async function mempoolRestore(tx: Tx, ids: string[], tipHeight: number, seq: number, result: IngestResult): Promise<void> {
  if (!ids.length) return;
  const [r] = await tx<{ ids: string[] }[]>`SELECT mempool_restore(${ids}::text[], ${tipHeight}, ${seq}) AS ids`;
  result.txIds.push(...r.ids);
}

/** What every stored block does to the mempool last: garbage collection by age, then replace-by-fee over its txs. */
export async function mempoolAfterBlock(tx: Tx, ids: string[], tip: { block_height: number; nakamoto: boolean } | undefined, result: IngestResult) {
  const [gc] = await tx<{ ids: string[] }[]>`
    SELECT mempool_garbage_collect(${tip?.block_height ?? 0}, ${tip?.nakamoto ?? false}) AS ids`;
  result.txIds.push(...gc.ids);
  if (ids.length) await tx`SELECT mempool_replace_by_fee(${ids}::text[], false)`;
}
