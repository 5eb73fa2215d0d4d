// The reference's mempool steps (sql/0017_mempool_reference_rules.sql); the caller holds MEMPOOL_LOCK.
//
// Each step is also a statement not yet sent (…Query, undefined when there is nothing to do), for a caller that sends
// it in one round trip with the statements before it: postgres.js sends a transaction's statements in the order they
// are started, and a list given to one Promise.all starts in its order, where an async function's statement would be
// started when the function is called.
import type postgres from 'postgres';
import type { IngestResult } from './result.js';
import type { Tx } from './rows.js';

type Pending<T> = postgres.PendingQuery<postgres.Row[] & T[]>;

/** Mined txs leave the mempool with their payer+nonce group (pruned, status kept). */
export function mempoolPruneQuery(tx: Tx, ids: string[]): Pending<unknown> | undefined {
  return ids.length ? tx`SELECT mempool_prune(${ids}::text[])` : undefined;
}

/** Orphaned txs (and their payer+nonce group) return to the mempool; `ids`: the restored ones. */
export function mempoolRestoreQuery(tx: Tx, ids: string[], tipHeight: number, seq: number): Pending<{ ids: string[] }> | undefined {
  return ids.length ? tx<{ ids: string[] }[]>`SELECT mempool_restore(${ids}::text[], ${tipHeight}, ${seq}) AS ids` : undefined;
}

/** Garbage collection by age, what every stored block does to the mempool first; `ids`: the txs it dropped. */
export function mempoolGarbageQuery(tx: Tx, tip: { block_height: number; nakamoto: boolean } | undefined): Pending<{ ids: string[] }> {
  return tx<{ ids: string[] }[]>`SELECT mempool_garbage_collect(${tip?.block_height ?? 0}, ${tip?.nakamoto ?? false}) AS ids`;
}

/** Replace-by-fee over a stored block's txs, what every stored block does to the mempool last. */
export function mempoolBlockRbfQuery(tx: Tx, ids: string[]): Pending<unknown> | undefined {
  return ids.length ? tx`SELECT mempool_replace_by_fee(${ids}::text[], false)` : undefined;
}

/** mempoolPruneQuery, sent and answered. */
export async function mempoolPrune(tx: Tx, ids: string[]): Promise<void> {
  await mempoolPruneQuery(tx, ids);
}

/** mempoolRestoreQuery, sent and answered; the restored ids join the result. */
export async function mempoolRestore(tx: Tx, ids: string[], tipHeight: number, seq: number, result: IngestResult): Promise<void> {
  const q = mempoolRestoreQuery(tx, ids, tipHeight, seq);
  if (q) result.txIds.push(...(await q)[0].ids);
}
