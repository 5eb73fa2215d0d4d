/**
 * Blocks that become or stop being canonical: the canonical flags of a block and everything anchored in it, the STX
 * totals, and the reorg itself (orphaning the replaced branch, restoring the new one, level by level).
 */
import { mempoolPrune, mempoolRestore } from './mempool-steps.js';
import type { IngestResult } from './result.js';
import { MEMPOOL_LOCK, type Tx } from './rows.js';

/** Sets `canonical` on a set of blocks and everything anchored in them (five statements, sent together). */
export function setCanonical(tx: Tx, blocks: string[], canonical: boolean): Promise<unknown> {
  if (!blocks.length) return Promise.resolve();
  return Promise.all([
    tx`UPDATE blocks SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`,
    tx`UPDATE txs SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`,
    tx`UPDATE events SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`,
    // `<> ''`: what lets the plan use microblocks_anchored (sql/0151), which leaves the unconfirmed rows out
    tx`UPDATE microblocks SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks}) AND index_block_hash <> ''`,
    tx`UPDATE miner_rewards SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`,
  ]);
}

/** Adds (+1) or removes (-1) the STX totals of blocks that became / stopped being canonical (sql/0012_stx_totals.sql). */
export function applyStxTotals(tx: Tx, blocks: string[], sign: 1 | -1): Promise<unknown> {
  if (!blocks.length) return Promise.resolve();
  return tx`SELECT stx_totals_apply(${blocks}::text[], ${sign}::integer)`;
}

/**
 * Decides whether the new block is canonical, as the reference does: a block is canonical when it is higher than the
 * canonical tip (so the boot block at height 0 never is, and a second block at the tip height is not). When its parent
 * is not canonical, the branch down to the fork point is restored and the blocks it replaces are orphaned, level by
 * level from the top as the reference's restoreOrphanedChain does, with its mempool steps at each level: the orphaned
 * block's txs return to the mempool (mempool_restore), then the restored block's txs leave it (mempool_prune).
 */
export async function placeBlock(
  tx: Tx,
  block: { index_block_hash: string; parent_index_block_hash: string; block_height: number },
  tip: { index_block_hash: string; block_height: number } | undefined,
  result: IngestResult,
  seq: number,
): Promise<boolean> {
  if (block.block_height <= (tip?.block_height ?? 0)) return false;
  if (!tip || tip.index_block_hash === block.parent_index_block_hash) return true;
  // Walk back from the parent through stored non-canonical blocks to the fork point.
  const branch: { index_block_hash: string; block_height: number }[] = [];
  let cursor = block.parent_index_block_hash;
  let forkHeight = block.block_height - 1;
  for (;;) {
    const [p] = await tx<{ index_block_hash: string; parent_index_block_hash: string; block_height: number; canonical: boolean }[]>`
      SELECT index_block_hash, parent_index_block_hash, block_height, canonical FROM blocks WHERE index_block_hash = ${cursor}`;
    if (!p) break; // unknown ancestor: the branch starts here
    forkHeight = p.block_height;
    if (p.canonical || p.block_height === 0) break;
    branch.push({ index_block_hash: p.index_block_hash, block_height: p.block_height });
    cursor = p.parent_index_block_hash;
    forkHeight = p.block_height - 1;
  }
  const orphaned = await tx<{ index_block_hash: string; block_height: number }[]>`
    SELECT index_block_hash, block_height FROM blocks WHERE canonical AND block_height > ${forkHeight} ORDER BY block_height`;
  result.orphanedBlocks = orphaned.map((r) => r.index_block_hash);
  result.restoredBlocks = branch.map((r) => r.index_block_hash);
  if (orphaned.length || branch.length) await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  // the txs of blocks whose flags change, read in the round trip that changes them (the read does not depend on them)
  const flip = async (blocks: string[], canonical: boolean) => {
    const [, rows] = await Promise.all([
      setCanonical(tx, blocks, canonical),
      tx<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs WHERE index_block_hash = ANY(${blocks})`,
    ]);
    return rows.map((r) => r.tx_id);
  };
  const levels = [...new Set([...orphaned.map((o) => o.block_height), ...branch.map((b) => b.block_height)])].sort((a, b) => b - a);
  for (const h of levels) {
    const old = orphaned.filter((o) => o.block_height === h).map((o) => o.index_block_hash);
    if (old.length) await mempoolRestore(tx, await flip(old, false), tip.block_height, seq, result);
    const back = branch.filter((r) => r.block_height === h).map((r) => r.index_block_hash);
    if (back.length) await mempoolPrune(tx, await flip(back, true));
  }
  await Promise.all([applyStxTotals(tx, result.orphanedBlocks, -1), applyStxTotals(tx, result.restoredBlocks, 1)]);
  return true;
}
