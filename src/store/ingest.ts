/**
 * Applies one logged observer message (src/store/event-log.ts) to the derived tables: every row derived from it,
 * including canonical flips on forks. The projector (src/observer/projector.ts) calls it inside its transaction, which
 * also moves its place in the log, so each message is applied exactly once.
 */
import type { Sql } from './sql.js';
import type { ChainUpdate, EventRow, MicroblockRow, TxRow } from '../chain/types.js';
import { poxEventRows } from '../chain/pox.js';
import { writeBnsAttachments } from './bns-write.js';
import { PulseError } from '../errors.js';

type Tx = Sql;

/** What one committed message changed; the push layer publishes from it. Empty for a duplicate. */
export interface IngestResult {
  /** false when the message had been ingested before (nothing written). */
  applied: boolean;
  /** event_log id of the message */
  eventId: number | null;
  kind: ChainUpdate['kind'];
  /** index_block_hash of the ingested block, when it became canonical */
  canonicalBlock?: string;
  /** blocks that stopped being canonical in a reorg */
  orphanedBlocks: string[];
  /** blocks that became canonical again in a reorg */
  restoredBlocks: string[];
  /** tx ids whose state changed (mined, returned to mempool, dropped, added) */
  txIds: string[];
  /** txs of unconfirmed microblocks orphaned by a microblock fork */
  unconfirmedOrphans: string[];
  /** mempool messages: the txs seen for the first time (txIds also holds revived ones) */
  newMempoolTxs?: string[];
  /** set when a valid message was logged but, as the reference does, not applied */
  ignoredReason?: string;
}

/** Lock serialising every change to mempool_txs (mempool messages run beside block messages). */
const MEMPOOL_LOCK = 7355609;

function json(rows: unknown): string {
  return JSON.stringify(rows);
}

function insertRows(tx: Tx, table: 'txs' | 'events' | 'microblocks' | 'miner_rewards', rows: object[], seq?: number): Promise<unknown> {
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
function insertPoxEvents(tx: Tx, events: readonly EventRow[]): Promise<unknown> {
  const rows = poxEventRows(events);
  if (!rows.length) return Promise.resolve();
  return tx`
    INSERT INTO pox_events (value_md5, name, stacker, locked, balance, burnchain_unlock_height, pox_addr_raw)
    SELECT md5(r.value_hex), r.name, r.stacker, r.locked, r.balance, r.burnchain_unlock_height, r.pox_addr_raw
    FROM json_to_recordset(${json(rows)}::text::json) AS r(value_hex text, name text, stacker text, locked numeric,
      balance numeric, burnchain_unlock_height bigint, pox_addr_raw text)
    ON CONFLICT (value_md5) DO NOTHING`;
}

function emptyResult(update: ChainUpdate, eventId: number | null): IngestResult {
  return {
    applied: eventId !== null,
    eventId,
    kind: update.kind,
    orphanedBlocks: [],
    restoredBlocks: [],
    txIds: [],
    unconfirmedOrphans: [],
  };
}

/** A /new_block body with a reward set object (Nakamoto reward cycles). */
const REWARD_SET = /"reward_set"\s*:\s*\{/;

/** The change sequence value of a message's rows (their `seq` columns). */
async function nextSeq(tx: Tx): Promise<number> {
  const [r] = await tx<{ seq: string }[]>`SELECT nextval('change_seq')::text AS seq`;
  return Number(r.seq);
}

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
}

/**
 * Whether the projector may send a message's statements without waiting for the answers to the previous ones, and
 * send the next message's before this one's answer: applyMessage then sends all of its statements before it first
 * waits, and nothing it sends depends on an answer. PostgreSQL runs a connection's statements in the order they were
 * sent, so the writes are those of one-by-one application.
 * - Burn blocks, mempool and drop messages (one statement each) and attachments (two, sent together): always.
 * - A block: when it extends `tip` (the tip the statements sent before it leave) and carries no reward set, so the
 *   one-statement path (project_block_fast) is expected to take it: the tip is its parent, and no stream of
 *   unconfirmed microblocks can hang on the tip (a microblock message forgets the known tip) nor can the block be
 *   stored already (a stored block is never above the tip). It is sent with `expectFast`: should the function, which
 *   checks the database, decline it all the same, applyMessage throws FastPathMissed instead of running the general
 *   path, and the projector applies the batch again without sending ahead.
 * - Microblocks and every other block: no (the general path reads before it writes).
 */
export function sendsWithoutWaiting(m: Pick<LoggedUpdate, 'update' | 'body'>, tip: SentTip | undefined): boolean {
  const u = m.update;
  if (u.kind === 'burn_block' || u.kind === 'mempool' || u.kind === 'drop_mempool' || u.kind === 'raw') return true;
  if (u.kind !== 'block' || !tip) return false;
  const b = u.block;
  return b.block_height > 1 && b.parent_index_block_hash === tip.index_block_hash && b.block_height > tip.block_height && !REWARD_SET.test(m.body);
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

/**
 * Writes what one logged message derives, on `tx` (the projector's transaction). pushOutbox: record the result in
 * push_outbox too (a push publisher is attached); fastBlocks (default true): try the one-statement path for a block
 * first (projectBlockFast).
 */
export async function applyMessage(
  tx: Tx,
  m: LoggedUpdate,
  opts: { pushOutbox?: boolean; fastBlocks?: boolean; expectFast?: boolean } = {},
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
      return applyMempool(tx, id, update, outbox);
    case 'drop_mempool':
      return dropMempool(tx, id, update, outbox);
    default:
      break;
  }
  // PoX cycles and signer sets from a block's reward set (sql/0031_pox_cycles.sql), stored non-canonical first: the
  // derived-table hook makes them canonical with the block. The body is parsed again only when it carries one.
  if (update.kind === 'block' && REWARD_SET.test(m.body)) await tx`SELECT pox_cycles_from_block(${m.body}::text::json, false)`;
  if (update.kind === 'block' && opts.fastBlocks !== false) {
    // The common block (on the canonical tip, nothing to adopt or orphan) in one statement; null: the general path.
    const fast = await projectBlockFast(tx, id, update, outbox);
    if (fast) {
      blockPaths.fast++;
      return fast;
    }
    if (opts.expectFast) throw new FastPathMissed(id);
  }
  let result: IngestResult;
  if (update.kind === 'block') {
    blockPaths.general++;
    result = await ingestBlock(tx, id, update);
  } else {
    result = emptyResult(update, id);
    await ingestMicroblocks(tx, update, result, await nextSeq(tx));
  }
  // Crash safety of the push (sql/0009_push_outbox.sql): committed together with the change it describes.
  if (outbox) await tx`INSERT INTO push_outbox (event_id, result) VALUES (${id}, ${tx.json(result as never)})`;
  return result;
}

// ------------------------------------------------------------------------------------------------
// blocks

async function canonicalTip(tx: Tx): Promise<{ index_block_hash: string; block_height: number } | undefined> {
  const [tip] = await tx<{ index_block_hash: string; block_height: number }[]>`
    SELECT index_block_hash, block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
  return tip;
}

/** Sets `canonical` on a set of blocks and everything anchored in them. */
async function setCanonical(tx: Tx, blocks: string[], canonical: boolean) {
  if (!blocks.length) return;
  await tx`UPDATE blocks SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`;
  await tx`UPDATE txs SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`;
  await tx`UPDATE events SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`;
  await tx`UPDATE microblocks SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`;
  await tx`UPDATE miner_rewards SET canonical = ${canonical} WHERE index_block_hash = ANY(${blocks})`;
}

/** Adds (+1) or removes (-1) the STX totals of blocks that became / stopped being canonical (sql/0012_stx_totals.sql). */
function applyStxTotals(tx: Tx, blocks: string[], sign: 1 | -1): Promise<unknown> {
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
async function placeBlock(
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
  const txIdsOf = async (blocks: string[]) =>
    blocks.length ? (await tx<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs WHERE index_block_hash = ANY(${blocks})`).map((r) => r.tx_id) : [];
  const levels = [...new Set([...orphaned.map((o) => o.block_height), ...branch.map((b) => b.block_height)])].sort((a, b) => b - a);
  for (const h of levels) {
    const old = orphaned.filter((o) => o.block_height === h).map((o) => o.index_block_hash);
    if (old.length) {
      await setCanonical(tx, old, false);
      await mempoolRestore(tx, await txIdsOf(old), tip.block_height, seq, result);
    }
    const back = branch.filter((r) => r.block_height === h).map((r) => r.index_block_hash);
    if (back.length) {
      await setCanonical(tx, back, true);
      await mempoolPrune(tx, await txIdsOf(back));
    }
  }
  await applyStxTotals(tx, result.orphanedBlocks, -1);
  await applyStxTotals(tx, result.restoredBlocks, 1);
  return true;
}

/**
 * Block 1 adopts the boot block's transactions, as the reference does: newer nodes send the genesis txs in a
 * separate block 0, which is stored non-canonical; its txs and events are re-homed into block 1 with tx_index + 1,
 * so they line up with older nodes that send them inside block 1 after the coinbase. Like the reference, they keep
 * the boot block's own block_time (only the burn placement and the block identity move).
 */
function adoptBootBlockTxs(tx: Tx, b: Extract<ChainUpdate, { kind: 'block' }>['block'], bootHash: string, canonical: boolean) {
  return Promise.all([
    tx`
      UPDATE txs SET canonical = ${canonical}, block_height = ${b.block_height}, tx_index = tx_index + 1,
        block_hash = ${b.block_hash}, index_block_hash = ${b.index_block_hash}, burn_block_height = ${b.burn_block_height},
        burn_block_time = ${b.burn_block_time}, parent_block_hash = ${b.parent_block_hash}
      WHERE index_block_hash = ${bootHash}`,
    tx`
      UPDATE events SET canonical = ${canonical}, block_height = ${b.block_height}, tx_index = tx_index + 1,
        index_block_hash = ${b.index_block_hash}
      WHERE index_block_hash = ${bootHash}`,
  ]);
}

type MicroblockRef = { microblock_hash: string; microblock_sequence: number; microblock_parent_hash: string; tx_count: number };
type BlockUpdate = Extract<ChainUpdate, { kind: 'block' }>;

/** microblocks rows of the microblocks a block confirms that are not stored yet (burn data from the stream when known) */
function confirmedMicroblockRows(
  b: BlockUpdate['block'],
  confirmed: MicroblockRef[],
  streamedByHash: ReadonlyMap<string, MicroblockRow>,
  canonical: boolean,
): Omit<MicroblockRow, 'seq'>[] {
  return confirmed.map((m) => {
    const st = streamedByHash.get(m.microblock_hash);
    return {
      microblock_hash: m.microblock_hash,
      index_block_hash: b.index_block_hash,
      microblock_sequence: m.microblock_sequence,
      microblock_parent_hash: m.microblock_parent_hash,
      parent_index_block_hash: b.parent_index_block_hash,
      block_height: b.block_height,
      block_hash: b.block_hash,
      parent_burn_block_height: st?.parent_burn_block_height ?? b.parent_burn_block_height,
      parent_burn_block_hash: st?.parent_burn_block_hash ?? b.parent_burn_block_hash,
      parent_burn_block_time: st?.parent_burn_block_time ?? b.parent_burn_block_time,
      block_time: st?.block_time ?? b.block_time,
      tx_count: m.tx_count,
      microblock_canonical: true,
      canonical,
    };
  });
}

/**
 * The common block message in one statement (sql/0070_projector.sql project_block_fast, conditions in sql/0013): a new
 * block on the canonical tip whose parent has no streamed microblocks. Returns null, having written nothing, when the
 * block is anything else (a fork, the same block again, the first blocks, a microblock stream to settle): the caller
 * then runs the general path.
 */
async function projectBlockFast(tx: Tx, id: number, u: BlockUpdate, pushOutbox: boolean): Promise<IngestResult | null> {
  const b = u.block;
  if (b.block_height <= 1) return null;
  const canonical = (r: object) => ({ ...r, canonical: true });
  const microblocks = confirmedMicroblockRows(b, u.confirmedMicroblocks, new Map(), true);
  const [row] = await tx.unsafe<{ r: { id: number; tx_ids: string[] } | null }[]>(
    `SELECT project_block_fast($1, $2::text::json, $3::text::json, $4::text::json, $5::text::json, $6::text::json,
       $7::text::json, $8::text[], $9, $10, $11, $12) AS r`,
    [
      id,
      json(canonical(b)),
      json(u.txs.map(canonical)),
      json(u.events.map(canonical)),
      json(poxEventRows(u.events)),
      json(u.minerRewards.map(canonical)),
      json(microblocks),
      [...new Set(u.txs.map((t) => t.tx_id))],
      u.pox.pox_v1_unlock_height,
      u.pox.pox_v2_unlock_height,
      u.pox.pox_v3_unlock_height,
      pushOutbox,
    ] as never[],
    { prepare: true },
  );
  if (!row?.r) return null;
  const result = emptyResult(u, id);
  result.canonicalBlock = b.index_block_hash;
  result.txIds.push(...row.r.tx_ids);
  return result;
}

async function ingestBlock(tx: Tx, id: number, u: BlockUpdate): Promise<IngestResult> {
  const b = u.block;
  // One round trip: every read the block needs (statements are pipelined on the connection).
  const [exists, tipRows, streamed, boot] = await Promise.all([
    tx`SELECT 1 FROM blocks WHERE index_block_hash = ${b.index_block_hash}`,
    tx<{ index_block_hash: string; block_height: number; nakamoto: boolean }[]>`
      SELECT index_block_hash, block_height, signer_bitvec IS NOT NULL AS nakamoto
      FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`,
    tx<MicroblockRow[]>`
      SELECT * FROM microblocks WHERE parent_index_block_hash = ${b.parent_index_block_hash} AND index_block_hash = ''`,
    b.block_height === 1
      ? tx<{ index_block_hash: string }[]>`
          SELECT index_block_hash FROM blocks WHERE block_height = 0 AND index_block_hash = ${b.parent_index_block_hash}`
      : Promise.resolve([] as { index_block_hash: string }[]),
  ]);
  const result = emptyResult(u, id);
  if (exists.length) return result; // the same block in another encoding
  const seq = await nextSeq(tx);
  const canonical = await placeBlock(tx, b, tipRows[0], result, seq);
  if (canonical) result.canonicalBlock = b.index_block_hash;

  // Microblocks of the parent's stream that this block confirms: those its tx list names, plus the chain of
  // streamed (unconfirmed) microblocks that ends at its parent_microblock.
  const accepted = new Map<string, MicroblockRef>(u.confirmedMicroblocks.map((m) => [m.microblock_hash, m]));
  const streamedByHash = new Map(streamed.map((m) => [m.microblock_hash, m]));
  if (b.parent_microblock_hash) {
    let h: string | undefined = b.parent_microblock_hash;
    while (h && streamedByHash.has(h)) {
      const m: MicroblockRow = streamedByHash.get(h)!;
      if (!accepted.has(h)) accepted.set(h, m);
      h = m.microblock_parent_hash;
    }
  }
  // A canonical block takes over the streamed rows of what it accepts; everything else comes from its message.
  const adopt = canonical ? [...accepted.keys()].filter((h) => streamedByHash.has(h)) : [];
  const adopted = new Set(adopt);
  const txs: TxRow[] = u.txs.filter((t) => !adopted.has(t.microblock_hash)).map((t) => ({ ...t, canonical }));
  const events: EventRow[] = u.events.filter((e) => !adopted.has(e.microblock_hash)).map((e) => ({ ...e, canonical }));
  const fromMessage = confirmedMicroblockRows(b, [...accepted.values()].filter((m) => !adopted.has(m.microblock_hash)), streamedByHash, canonical);
  // Streamed microblocks of the parent that a canonical block does not accept are orphaned (a microblock fork).
  const rejected = canonical ? streamed.filter((m) => !accepted.has(m.microblock_hash)).map((m) => m.microblock_hash) : [];

  // One round trip for every write.
  const writes: Promise<unknown>[] = [];
  if (boot.length) writes.push(adoptBootBlockTxs(tx, b, boot[0].index_block_hash, canonical));
  writes.push(
    tx.unsafe(`INSERT INTO blocks SELECT * FROM json_populate_record(NULL::blocks, $1::text::json)`, [
      json({ ...b, canonical, seq }),
    ], { prepare: true }),
  );
  if (adopt.length) {
    writes.push(
      tx`
        UPDATE txs SET index_block_hash = ${b.index_block_hash}, block_hash = ${b.block_hash},
          burn_block_time = ${b.burn_block_time}, burn_block_height = ${b.burn_block_height},
          canonical = true, microblock_canonical = true
        WHERE index_block_hash = '' AND microblock_hash = ANY(${adopt})`,
      tx`
        UPDATE events SET index_block_hash = ${b.index_block_hash}, canonical = true, microblock_canonical = true
        WHERE index_block_hash = '' AND microblock_hash = ANY(${adopt})`,
      tx`
        UPDATE microblocks SET index_block_hash = ${b.index_block_hash}, block_hash = ${b.block_hash},
          canonical = true, microblock_canonical = true
        WHERE index_block_hash = '' AND microblock_hash = ANY(${adopt})`,
    );
  }
  writes.push(
    insertRows(tx, 'txs', txs, seq),
    insertRows(tx, 'events', events),
    insertPoxEvents(tx, u.events),
    insertRows(tx, 'miner_rewards', u.minerRewards.map((r) => ({ ...r, canonical }))),
    insertRows(tx, 'microblocks', fromMessage, seq),
  );
  // after every write of the block (statements run in the order they are started)
  if (canonical) writes.push(applyStxTotals(tx, [b.index_block_hash], 1));
  let orphanedUnconfirmed: Promise<{ tx_id: string }[]> | undefined;
  if (rejected.length) {
    writes.push(
      tx`UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})`,
      tx`UPDATE events SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})`,
    );
    orphanedUnconfirmed = tx<{ tx_id: string }[]>`
      UPDATE txs SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})
      RETURNING tx_id`;
    writes.push(orphanedUnconfirmed);
  }
  if (canonical) {
    const p = u.pox;
    writes.push(tx`
      INSERT INTO chain_state (id, pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height)
      VALUES (1, ${p.pox_v1_unlock_height}, ${p.pox_v2_unlock_height}, ${p.pox_v3_unlock_height})
      ON CONFLICT (id) DO UPDATE SET pox_v1_unlock_height = EXCLUDED.pox_v1_unlock_height,
        pox_v2_unlock_height = EXCLUDED.pox_v2_unlock_height, pox_v3_unlock_height = EXCLUDED.pox_v3_unlock_height
      WHERE (chain_state.pox_v1_unlock_height, chain_state.pox_v2_unlock_height, chain_state.pox_v3_unlock_height)
        IS DISTINCT FROM (EXCLUDED.pox_v1_unlock_height, EXCLUDED.pox_v2_unlock_height, EXCLUDED.pox_v3_unlock_height)`);
  }
  if (canonical) writes.push(tx`SELECT tip_burn_height_set(${b.burn_block_height})`);
  await Promise.all(writes);
  if (orphanedUnconfirmed) result.unconfirmedOrphans.push(...(await orphanedUnconfirmed).map((r) => r.tx_id));
  // The mempool, in the reference's order: a canonical block's txs leave it (with their payer+nonce group), the txs of
  // microblocks it orphans and does not include return to it; then, for every stored block, garbage collection and
  // replace-by-fee over its txs.
  await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  const messageIds = [...new Set(u.txs.map((t) => t.tx_id))];
  if (canonical) {
    await mempoolPrune(tx, messageIds);
    const inBlock = new Set(messageIds);
    const back = [...new Set(result.unconfirmedOrphans)].filter((id) => !inBlock.has(id));
    await mempoolRestore(tx, back, tipRows[0]?.block_height ?? 0, seq, result);
  }
  await mempoolAfterBlock(tx, messageIds, tipRows[0], result);
  return result;
}

// The reference's mempool steps (sql/0017_mempool_reference_rules.sql); the caller holds MEMPOOL_LOCK.

/** Mined txs leave the mempool with their payer+nonce group (pruned, status kept). */
async function mempoolPrune(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`SELECT mempool_prune(${ids}::text[])`;
}

/** Orphaned txs (and their payer+nonce group) return to the mempool; the restored ids join the result. */
async function mempoolRestore(tx: Tx, ids: string[], tipHeight: number, seq: number, result: IngestResult): Promise<void> {
  if (!ids.length) return;
  const [r] = await tx<{ ids: string[] }[]>`SELECT mempool_restore(${ids}::text[], ${tipHeight}, ${seq}) AS ids`;
  result.txIds.push(...r.ids);
}

/** What every stored block does to the mempool last: garbage collection by age, then replace-by-fee over its txs. */
async function mempoolAfterBlock(tx: Tx, ids: string[], tip: { block_height: number; nakamoto: boolean } | undefined, result: IngestResult) {
  const [gc] = await tx<{ ids: string[] }[]>`
    SELECT mempool_garbage_collect(${tip?.block_height ?? 0}, ${tip?.nakamoto ?? false}) AS ids`;
  result.txIds.push(...gc.ids);
  if (ids.length) await tx`SELECT mempool_replace_by_fee(${ids}::text[], false)`;
}

// ------------------------------------------------------------------------------------------------
// microblocks

/**
 * An unconfirmed microblock stream on the canonical tip. As the reference does, a stream whose parent is not the tip,
 * or that has a gap (its first microblock's parent is missing), is not stored (the message is still logged raw).
 */
async function ingestMicroblocks(tx: Tx, u: Extract<ChainUpdate, { kind: 'microblocks' }>, result: IngestResult, seq: number) {
  const tip = await canonicalTip(tx);
  if (!tip || tip.index_block_hash !== u.parentIndexBlockHash) {
    result.ignoredReason = 'microblock parent is not the canonical tip';
    return;
  }
  const [parent] = await tx<{ block_height: number; block_hash: string }[]>`
    SELECT block_height, block_hash FROM blocks WHERE index_block_hash = ${u.parentIndexBlockHash}`;
  const existing = await tx<MicroblockRow[]>`
    SELECT * FROM microblocks WHERE parent_index_block_hash = ${u.parentIndexBlockHash} AND index_block_hash = ''`;
  const known = new Set(existing.map((m) => m.microblock_hash));
  const incoming = u.microblocks.filter((m) => !known.has(m.microblock_hash));
  if (!incoming.length) return countStreamed(tx, u.microblocks.length);
  // Gap check: walk from the newest microblock back to sequence 0.
  const chain = new Map<string, { microblock_parent_hash: string; microblock_sequence: number }>(
    [...existing.filter((m) => m.microblock_canonical), ...incoming].map((m) => [m.microblock_hash, m]),
  );
  const newest = incoming.reduce((a, m) => (m.microblock_sequence > a.microblock_sequence ? m : a));
  const onChain = new Set<string>();
  let cur: string | undefined = newest.microblock_hash;
  let seqAtEnd = -1;
  while (cur && chain.has(cur)) {
    onChain.add(cur);
    const m: { microblock_parent_hash: string; microblock_sequence: number } = chain.get(cur)!;
    seqAtEnd = m.microblock_sequence;
    cur = m.microblock_parent_hash;
  }
  if (seqAtEnd !== 0) {
    result.ignoredReason = 'microblock stream has a gap';
    return;
  }
  const height = parent.block_height + 1;
  const now = Math.floor(Date.now() / 1000);
  const keep = new Set(incoming.map((m) => m.microblock_hash));
  const microblocks: MicroblockRow[] = incoming.map((m) => ({
    ...m,
    index_block_hash: '',
    parent_index_block_hash: u.parentIndexBlockHash,
    block_height: height,
    block_hash: '',
    parent_burn_block_height: u.burnBlockHeight,
    parent_burn_block_hash: u.burnBlockHash,
    parent_burn_block_time: u.burnBlockTime,
    block_time: now,
    microblock_canonical: true,
    canonical: true,
  }));
  const txs = u.txs
    .filter((t) => keep.has(t.microblock_hash))
    .map((t) => ({ ...t, block_height: height, block_time: now, parent_block_hash: parent.block_hash, canonical: true }));
  const events = u.events.filter((e) => keep.has(e.microblock_hash)).map((e) => ({ ...e, block_height: height, canonical: true }));
  await insertRows(tx, 'microblocks', microblocks, seq);
  await insertRows(tx, 'txs', txs, seq);
  await Promise.all([insertRows(tx, 'events', events), insertPoxEvents(tx, events)]);
  // Streamed microblocks that are not on the new stream's chain are orphaned (a microblock fork).
  const forked = existing.filter((m) => m.microblock_canonical && !onChain.has(m.microblock_hash)).map((m) => m.microblock_hash);
  if (forked.length) {
    await tx`UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})`;
    await tx`UPDATE events SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})`;
    const back = await tx<{ tx_id: string }[]>`
      UPDATE txs SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})
      RETURNING tx_id`;
    result.unconfirmedOrphans.push(...back.map((r) => r.tx_id));
  }
  result.txIds.push(...txs.map((t) => t.tx_id));
  // as the reference: micro-orphaned txs return to the mempool, then the message's txs leave it
  await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  await mempoolRestore(tx, [...new Set(result.unconfirmedOrphans)], tip.block_height, seq, result);
  await mempoolPrune(tx, [...new Set(u.txs.map((t) => t.tx_id))]);
  await countStreamed(tx, u.microblocks.length);
}

/** The reference's microblock count: microblocks of every accepted stream message (sql/0022_microblock_count.sql). */
async function countStreamed(tx: Tx, n: number): Promise<void> {
  await tx`UPDATE microblock_stream_count SET n = n + ${n}`;
}

// ------------------------------------------------------------------------------------------------
// burn blocks

/** The burn block, in one statement. */
async function applyBurnBlock(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'burn_block' }>): Promise<IngestResult> {
  await tx.unsafe(
    `WITH ins AS (
       INSERT INTO burn_blocks (burn_block_hash, burn_block_height, parent_burn_block_hash, consensus_hash, burn_amount,
         reward_recipients, reward_slot_holders, canonical, seq)
       SELECT r.burn_block_hash, r.burn_block_height, r.parent_burn_block_hash, r.consensus_hash, r.burn_amount,
         r.reward_recipients, r.reward_slot_holders, true, nextval('change_seq')
       FROM json_populate_record(NULL::burn_blocks, $1::text::json) r
       ON CONFLICT DO NOTHING
     )
     -- the reference's chain_tip.burn_block_height: raised by every higher burn block (sql/0017)
     INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, ($1::text::json->>'burn_block_height')::bigint)
     ON CONFLICT (id) DO UPDATE
       SET tip_burn_block_height = GREATEST(chain_state.tip_burn_block_height, EXCLUDED.tip_burn_block_height)`,
    [json(u.burnBlock)],
    { prepare: true },
  );
  return emptyResult(u, id);
}

// ------------------------------------------------------------------------------------------------
// mempool

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

/** The new pending txs (one already mined on the canonical chain does not return) and the push_outbox row. */
function applyMempool(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'mempool' }>, pushOutbox: boolean) {
  return mempoolFunction(tx, id, u, 'project_mempool($1, $2::text::json, $3)', [json(u.txs), pushOutbox]);
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
function dropMempool(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'drop_mempool' }>, pushOutbox: boolean) {
  return mempoolFunction(tx, id, u, 'project_drop_mempool($1, $2::text[], $3, $4, $5)', [
    u.txIds,
    dropStatus(u.reason),
    u.newTxId,
    pushOutbox,
  ]);
}
