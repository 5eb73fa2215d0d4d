/**
 * Block rows → the reference API's block JSON (v2 "Nakamoto" form and v1 legacy form). Pure functions, no I/O.
 */
import { isoTime } from './txs.js';
import type { BlockDbRow } from '../store/block-columns.js';
import type { MicroblockMetaRow } from '../store/blocks.js';

/** What the v1 legacy block carries beyond the block row. */
export interface BlockV1Metadata {
  txs: string[];
  microblocks_accepted: string[];
  microblocks_streamed: string[];
  microblock_tx_count: Record<string, number>;
}

function head(b: BlockDbRow) {
  return {
    canonical: b.canonical,
    height: b.block_height,
    hash: b.block_hash,
    block_time: b.block_time,
    block_time_iso: isoTime(b.block_time),
    // as the reference: no tenure height in the payload means its own tenure for an epoch 2.x block (no signer
    // bitvec), and -1 (unknown) for a Nakamoto block from a node that did not send it
    tenure_height: b.tenure_height ?? (b.signer_bitvec ? -1 : b.block_height),
    index_block_hash: b.index_block_hash,
    parent_block_hash: b.parent_block_hash,
  };
}

function burnAndCost(b: BlockDbRow) {
  return {
    burn_block_time: b.burn_block_time,
    burn_block_time_iso: isoTime(b.burn_block_time),
    burn_block_hash: b.burn_block_hash,
    burn_block_height: b.burn_block_height,
    miner_txid: b.miner_txid,
  };
}

function costs(b: BlockDbRow) {
  return {
    execution_cost_read_count: b.execution_cost_read_count,
    execution_cost_read_length: b.execution_cost_read_length,
    execution_cost_runtime: b.execution_cost_runtime,
    execution_cost_write_count: b.execution_cost_write_count,
    execution_cost_write_length: b.execution_cost_write_length,
  };
}

/** `/extended/v2/blocks*` block. */
export function blockV2Json(b: BlockDbRow): Record<string, unknown> {
  return {
    ...head(b),
    parent_index_block_hash: b.parent_index_block_hash,
    ...burnAndCost(b),
    tx_count: b.tx_count,
    ...costs(b),
  };
}

/** `/extended/v1/block*` legacy block. */
export function blockV1Json(b: BlockDbRow, meta: BlockV1Metadata): Record<string, unknown> {
  // the legacy form falls back to the burn block's time when the block has none
  const blockTime = b.block_time > 0 ? b.block_time : b.burn_block_time;
  return {
    ...head(b),
    block_time: blockTime,
    block_time_iso: isoTime(blockTime),
    ...burnAndCost(b),
    ...costs(b),
    txs: meta.txs,
    parent_microblock_hash: b.parent_microblock_hash,
    parent_microblock_sequence: b.parent_microblock_sequence,
    microblocks_accepted: meta.microblocks_accepted,
    microblocks_streamed: meta.microblocks_streamed,
    microblock_tx_count: meta.microblock_tx_count,
  };
}

function uniqueHashes(rows: MicroblockMetaRow[]): string[] {
  return [...new Set(rows.map((m) => m.microblock_hash))];
}

const bySeqAsc = (a: MicroblockMetaRow, b: MicroblockMetaRow) => a.microblock_sequence - b.microblock_sequence;
const bySeqDesc = (a: MicroblockMetaRow, b: MicroblockMetaRow) => b.microblock_sequence - a.microblock_sequence;

/**
 * Microblock metadata of a single-block lookup: accepted = the canonical stream built on the parent (sequence ascending),
 * streamed = the canonical stream built on this block. `microblocks` = canonical microblocks whose parent is the block
 * or its parent; `txCounts` = canonical tx count per microblock hash.
 */
export function singleBlockMicroblocks(
  b: BlockDbRow,
  microblocks: MicroblockMetaRow[],
  txCounts: Map<string, number>,
): Omit<BlockV1Metadata, 'txs'> {
  const accepted = uniqueHashes(microblocks.filter((m) => m.parent_index_block_hash === b.parent_index_block_hash).sort(bySeqAsc));
  const streamed = uniqueHashes(microblocks.filter((m) => m.parent_index_block_hash === b.index_block_hash).sort(bySeqAsc));
  return { microblocks_accepted: accepted, microblocks_streamed: streamed, microblock_tx_count: countsOf(accepted, txCounts) };
}

/**
 * Microblock metadata of a block in the v1 list, reproducing the reference: accepted in sequence descending order, and
 * "streamed" = the microblocks (among those fetched for the page, i.e. whose parent is a block of the page or a parent of
 * one) confirmed by this block's parent, sequence descending.
 */
export function listBlockMicroblocks(
  b: BlockDbRow,
  pageMicroblocks: MicroblockMetaRow[],
  txCounts: Map<string, number>,
): Omit<BlockV1Metadata, 'txs'> {
  const accepted = uniqueHashes(pageMicroblocks.filter((m) => m.parent_index_block_hash === b.parent_index_block_hash).sort(bySeqDesc));
  const streamed = uniqueHashes(pageMicroblocks.filter((m) => m.index_block_hash === b.parent_index_block_hash).sort(bySeqDesc));
  return { microblocks_accepted: accepted, microblocks_streamed: streamed, microblock_tx_count: countsOf(accepted, txCounts) };
}

function countsOf(hashes: string[], txCounts: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const h of hashes) out[h] = txCounts.get(h) ?? 0;
  return out;
}

/** A legacy block from its row and the extras read with it (store/blocks.ts v1BlockExtras). */
export function v1BlockJson(
  b: BlockDbRow,
  extras: { txs: Map<string, string[]>; microblocks: MicroblockMetaRow[]; counts: Map<string, number> },
  single: boolean,
): Record<string, unknown> {
  const mbs = single
    ? singleBlockMicroblocks(b, extras.microblocks, extras.counts)
    : listBlockMicroblocks(b, extras.microblocks, extras.counts);
  return blockV1Json(b, { txs: extras.txs.get(b.index_block_hash) ?? [], ...mbs });
}
