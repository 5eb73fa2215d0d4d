/**
 * Applies one logged observer message (src/store/event-log.ts) to the derived tables: every row derived from it,
 * including canonical flips on forks. The projector (src/projector/projector.ts) calls it inside its transaction, which
 * also moves its place in the log, so each message is applied exactly once.
 */
import type { ChainUpdate } from '../../chain/types.js';
import { writeBnsAttachments } from '../bns-write.js';
import { PulseError } from '../../errors.js';
import { blockReads, ingestBlock, projectBlockFast, type BlockReads } from './block.js';
import { applyBurnBlock } from './burn-block.js';
import { applyMempool, dropMempool } from './mempool.js';
import { ingestMicroblocks } from './microblocks.js';
import { emptyResult, type IngestResult } from './result.js';
import type { Tx } from './rows.js';

/** A /new_block body with a reward set object (Nakamoto reward cycles). */
const REWARD_SET = /"reward_set"\s*:\s*\{/;

/** A logged message, decoded. */
export interface LoggedUpdate {
  /** its event_log id */
  id: number;
  path: string;
  body: string;
  update: ChainUpdate;
}

/** The canonical tip as the statements sent so far leave it (the projector's pipelining). */
export interface SentTip {
  index_block_hash: string;
  block_height: number;
  /** the microblocks that messages sent since the tip's block stream on it (stored or not) */
  streamed?: readonly { microblock_hash: string; microblock_parent_hash: string }[];
}

/**
 * Whether the projector may send a message's statements without waiting for the answers to the previous ones, and
 * send the next message's before this one's answer: applyMessage then sends all of its statements before it first
 * waits, and nothing it sends depends on an answer. PostgreSQL runs a connection's statements in the order they were
 * sent, so the writes are those of one-by-one application.
 * - Burn blocks, mempool, drop and microblock messages (one statement each) and attachments (two, sent together):
 *   always.
 * - A block: when it extends `tip` (the tip the statements sent before it leave), carries no reward set, and adopts
 *   every microblock streamed on the tip since (tip.streamed: those its message names, and the chain that ends at its
 *   parent microblock), so the one-statement path (project_block_fast) is expected to take it: the tip is its parent,
 *   the block cannot be stored already (a stored block is never above the tip), and it orphans no streamed microblock
 *   (a microblock fork). It is sent with `expectFast`: should the function, which checks the database, decline it all
 *   the same, applyMessage throws FastPathMissed instead of running the general path, and the projector applies the
 *   batch again without sending ahead.
 * - Every other block: no (the general path reads before it writes).
 */
export function sendsWithoutWaiting(m: Pick<LoggedUpdate, 'update' | 'body'>, tip: SentTip | undefined): boolean {
  const u = m.update;
  if (u.kind !== 'block') return true;
  if (!tip) return false;
  const b = u.block;
  return (
    b.block_height > 1 &&
    b.parent_index_block_hash === tip.index_block_hash &&
    b.block_height > tip.block_height &&
    adoptsStream(u, tip.streamed) &&
    !REWARD_SET.test(m.body)
  );
}

/** Whether a block accepts every microblock of `streamed` (the microblocks it names, and the chain to its parent microblock). */
function adoptsStream(u: Extract<ChainUpdate, { kind: 'block' }>, streamed: SentTip['streamed']): boolean {
  if (!streamed?.length) return true;
  const parentOf = new Map(streamed.map((m) => [m.microblock_hash, m.microblock_parent_hash]));
  const accepted = new Set(u.confirmedMicroblocks.map((m) => m.microblock_hash));
  for (let h = u.block.parent_microblock_hash; h && parentOf.has(h) && !accepted.has(h); h = parentOf.get(h)!) accepted.add(h);
  return streamed.every((m) => accepted.has(m.microblock_hash));
}

/**
 * The tip the statements sent so far leave once a microblock message is sent: its microblocks join the tip's stream
 * when they hang on it (a message on another block is not stored).
 */
export function tipAfterMicroblocks(tip: SentTip | undefined, u: Extract<ChainUpdate, { kind: 'microblocks' }>): SentTip | undefined {
  if (!tip || u.parentIndexBlockHash !== tip.index_block_hash) return tip;
  return { ...tip, streamed: [...(tip.streamed ?? []), ...u.microblocks] };
}

/**
 * The txs of mempool message `i` of a batch that the batch's next block mines, when that block is sent ahead on the
 * one-statement path (sendsWithoutWaiting with `tip`, the tip the statements sent before message `i` leave) and only
 * burn blocks and raw messages (attachments) come between: the mempool rows that block prunes can be inserted pruned
 * (sql/functions/mempool.sql, mempool_insert_rows). Empty otherwise. Should the block not take that path after all, it
 * throws FastPathMissed and the transaction is applied again without sending ahead, so without this.
 */
export function minedByNextBlock(batch: readonly Pick<LoggedUpdate, 'update' | 'body'>[], i: number, tip: SentTip | undefined): string[] {
  const m = batch[i].update;
  if (m.kind !== 'mempool' || !tip || !m.txs.length) return [];
  for (let j = i + 1; j < batch.length; j++) {
    const u = batch[j].update;
    if (u.kind === 'burn_block' || u.kind === 'raw') continue;
    if (u.kind !== 'block' || !sendsWithoutWaiting(batch[j], tip)) return [];
    const mined = new Set(u.txs.map((t) => t.tx_id));
    return [...new Set(m.txs.map((t) => t.tx_id).filter((t) => mined.has(t)))];
  }
  return [];
}

/** A block sent with `expectFast` that the one-statement path declined: nothing after it may stand. */
export class FastPathMissed extends PulseError {
  constructor(readonly id: number) {
    // retryable: the projector applies the same batch again, each block waiting for the one before it
    super(`message ${id}: the block did not take the one-statement path the projector sent it ahead on`, { retryable: true });
  }
}

/** How many block messages (this process) went through the one-statement path and through the general transaction. */
export const blockPaths = { fast: 0, general: 0 };

/** How many mempool txs (this process) were sent as mined by the next block of their batch (minedByNextBlock). */
export const mempoolMinedNext = { txs: 0 };

/**
 * Writes what one logged message derives, on `tx` (the projector's transaction). pushOutbox: record the result in
 * push_outbox too (a push publisher is attached); fastBlocks (default true): try the one-statement path for a block
 * first (projectBlockFast).
 */
export async function applyMessage(
  tx: Tx,
  m: LoggedUpdate,
  opts: { pushOutbox?: boolean; fastBlocks?: boolean; expectFast?: boolean; minedNext?: readonly string[] } = {},
): Promise<IngestResult> {
  const { update, path, id } = m;
  const outbox = opts.pushOutbox ?? false;
  switch (update.kind) {
    case 'burn_block':
      return applyBurnBlock(tx, id, update);
    case 'raw':
      // BNS zonefiles and subdomains (sql/0050_bns.sql)
      if (path === '/attachments/new') await writeBnsAttachments(tx, m.body);
      return emptyResult(update, id);
    case 'mempool':
      mempoolMinedNext.txs += opts.minedNext?.length ?? 0;
      return applyMempool(tx, id, update, outbox, opts.minedNext);
    case 'drop_mempool':
      return dropMempool(tx, id, update, outbox);
    case 'microblocks':
      return ingestMicroblocks(tx, id, update, outbox);
    default:
      break;
  }
  // PoX cycles and signer sets from a block's reward set (sql/0031_pox_cycles.sql), stored non-canonical first: the
  // derived-table hook makes them canonical with the block. The body is parsed again only when it carries one.
  if (REWARD_SET.test(m.body)) await tx`SELECT pox_cycles_from_block(${m.body}::text::json, false)`;
  let reads: BlockReads | undefined;
  if (opts.fastBlocks !== false) {
    // The common block (on the canonical tip, no microblock to orphan) in one statement; null: the general path,
    // whose reads are sent right behind it (unless the block was sent ahead, when the general path is not taken)
    const attempt = projectBlockFast(tx, id, update, outbox);
    if (!opts.expectFast) {
      reads = blockReads(tx, update.block);
      reads.catch(() => undefined); // awaited by the general path; a rejection before then is not unhandled
    }
    const fast = await attempt;
    if (fast) {
      blockPaths.fast++;
      return fast;
    }
    if (opts.expectFast) throw new FastPathMissed(id);
  }
  blockPaths.general++;
  const result = await ingestBlock(tx, id, update, reads);
  // Crash safety of the push (sql/0009_push_outbox.sql): committed together with the change it describes.
  if (outbox) await tx`INSERT INTO push_outbox (event_id, result) VALUES (${id}, ${tx.json(result as never)})`;
  return result;
}
