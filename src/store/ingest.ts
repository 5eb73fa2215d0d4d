/**
 * Writes one observer message in ONE transaction: the raw request (deduplicated by content) and every row derived
 * from it, including canonical flips on forks. A re-delivered message (same path and body) changes nothing.
 */
import { createHash } from 'node:crypto';
import type { Sql } from './connect.js';
import type { ChainUpdate, EventRow, MicroblockRow, TxRow } from '../chain/types.js';

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
}

export function bodySha256(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Lock serialising every change to mempool_txs (mempool messages run beside block messages). */
const MEMPOOL_LOCK = 7355609;

function json(rows: unknown): string {
  return JSON.stringify(rows);
}

async function insertRows(tx: Tx, table: 'txs' | 'events' | 'microblocks' | 'miner_rewards', rows: object[], seq?: number) {
  if (!rows.length) return;
  const withSeq = seq === undefined ? rows : rows.map((r) => ({ ...r, seq }));
  // one parameter, any number of rows: no bind-parameter limit on genesis-sized blocks
  await tx.unsafe(
    `INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json) ON CONFLICT DO NOTHING`,
    [json(withSeq)],
  );
}

async function nextSeq(tx: Tx): Promise<number> {
  const [r] = await tx<{ seq: number }[]>`SELECT nextval('change_seq')::bigint AS seq`;
  return r.seq;
}

export async function ingestMessage(
  sql: Sql,
  path: string,
  body: string,
  update: ChainUpdate,
): Promise<IngestResult> {
  return (await sql.begin(async (tx) => {
    const t = tx as unknown as Tx;
    const logged = await t<{ id: number }[]>`
      INSERT INTO event_log (path, body_sha256, body) VALUES (${path}, ${bodySha256(body)}, ${body})
      ON CONFLICT (path, body_sha256) DO NOTHING RETURNING id`;
    const result: IngestResult = {
      applied: logged.length > 0,
      eventId: logged[0]?.id ?? null,
      kind: update.kind,
      orphanedBlocks: [],
      restoredBlocks: [],
      txIds: [],
    };
    if (!result.applied) return result;
    switch (update.kind) {
      case 'block':
        await ingestBlock(t, update, result);
        break;
      case 'microblocks':
        await ingestMicroblocks(t, update, result);
        break;
      case 'burn_block':
        await ingestBurnBlock(t, update);
        break;
      case 'mempool':
        await ingestMempool(t, update, result);
        break;
      case 'drop_mempool':
        await dropMempool(t, update, result);
        break;
      case 'raw':
        break;
    }
    return result;
  })) as IngestResult;
}

/** Records a message that failed validation; nothing else is written. */
export async function recordDeadLetter(sql: Sql, path: string, body: string, reason: string): Promise<void> {
  await sql`INSERT INTO dead_letters (path, reason, body) VALUES (${path}, ${reason}, ${body})`;
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

/**
 * Decides whether the new block is canonical. A block extending the tip is; a block on another branch becomes canonical
 * (with its branch) when it is higher than the tip, orphaning the blocks above the fork point.
 */
async function placeBlock(
  tx: Tx,
  block: { index_block_hash: string; parent_index_block_hash: string; block_height: number },
  result: IngestResult,
): Promise<boolean> {
  if (block.block_height === 0) return false; // the boot block is stored non-canonical, as the reference does
  const tip = await canonicalTip(tx);
  if (!tip || tip.index_block_hash === block.parent_index_block_hash) return true;
  if (block.block_height <= tip.block_height) return false;
  // Walk back from the parent through stored non-canonical blocks to the fork point.
  const branch: string[] = [];
  let cursor = block.parent_index_block_hash;
  let forkHeight = block.block_height - 1;
  for (;;) {
    const [p] = await tx<{ index_block_hash: string; parent_index_block_hash: string; block_height: number; canonical: boolean }[]>`
      SELECT index_block_hash, parent_index_block_hash, block_height, canonical FROM blocks WHERE index_block_hash = ${cursor}`;
    if (!p) break; // unknown ancestor: the branch starts here
    forkHeight = p.block_height;
    if (p.canonical) break;
    if (p.block_height === 0) break;
    branch.push(p.index_block_hash);
    cursor = p.parent_index_block_hash;
    forkHeight = p.block_height - 1;
  }
  const orphaned = await tx<{ index_block_hash: string }[]>`
    SELECT index_block_hash FROM blocks WHERE canonical AND block_height > ${forkHeight}`;
  result.orphanedBlocks = orphaned.map((r) => r.index_block_hash);
  result.restoredBlocks = branch;
  await setCanonical(tx, result.orphanedBlocks, false);
  await setCanonical(tx, branch, true);
  return true;
}

async function ingestBlock(tx: Tx, u: Extract<ChainUpdate, { kind: 'block' }>, result: IngestResult) {
  const b = u.block;
  const [exists] = await tx`SELECT 1 FROM blocks WHERE index_block_hash = ${b.index_block_hash}`;
  if (exists) return; // the same block in another encoding: already stored
  const seq = await nextSeq(tx);
  const canonical = await placeBlock(tx, b, result);
  await tx.unsafe(
    `INSERT INTO blocks SELECT * FROM json_populate_record(NULL::blocks, $1::text::json)`,
    [json({ ...b, canonical, seq })],
  );
  if (canonical) result.canonicalBlock = b.index_block_hash;

  const txs: TxRow[] = u.txs.map((t) => ({ ...t, canonical }));
  const events: EventRow[] = u.events.map((e) => ({ ...e, canonical }));
  await insertRows(tx, 'txs', txs, seq);
  await insertRows(tx, 'events', events);
  await insertRows(tx, 'miner_rewards', u.minerRewards.map((r) => ({ ...r, canonical })));

  // Microblocks of the parent's stream that this block confirms.
  const [parent] = await tx<{ block_height: number; block_hash: string; burn_block_time: number; burn_block_hash: string; burn_block_height: number }[]>`
    SELECT block_height, block_hash, burn_block_time, burn_block_hash, burn_block_height FROM blocks
    WHERE index_block_hash = ${b.parent_index_block_hash}`;
  const accepted = new Map(u.confirmedMicroblocks.map((m) => [m.microblock_hash, m]));
  const streamed = await tx<MicroblockRow[]>`
    SELECT * FROM microblocks WHERE parent_index_block_hash = ${b.parent_index_block_hash} AND index_block_hash = ''`;
  // Follow the parent_microblock chain through streamed microblocks (they may carry no tx in this block's list).
  if (b.parent_microblock_hash) {
    const byHash = new Map(streamed.map((m) => [m.microblock_hash, m]));
    let h: string | undefined = b.parent_microblock_hash;
    while (h && byHash.has(h) && !accepted.has(h)) {
      const m: MicroblockRow = byHash.get(h)!;
      accepted.set(h, { microblock_hash: h, microblock_sequence: m.microblock_sequence, microblock_parent_hash: m.microblock_parent_hash, tx_count: m.tx_count });
      h = m.microblock_parent_hash;
    }
  }
  const streamedByHash = new Map(streamed.map((m) => [m.microblock_hash, m]));
  const anchoredMicroblocks: MicroblockRow[] = [...accepted.values()].map((m) => {
    const s = streamedByHash.get(m.microblock_hash);
    return {
      microblock_hash: m.microblock_hash,
      index_block_hash: b.index_block_hash,
      microblock_sequence: m.microblock_sequence,
      microblock_parent_hash: m.microblock_parent_hash,
      parent_index_block_hash: b.parent_index_block_hash,
      block_height: b.block_height,
      block_hash: b.block_hash,
      parent_burn_block_height: s?.parent_burn_block_height ?? parent?.burn_block_height ?? b.parent_burn_block_height,
      parent_burn_block_hash: s?.parent_burn_block_hash ?? parent?.burn_block_hash ?? b.parent_burn_block_hash,
      parent_burn_block_time: s?.parent_burn_block_time ?? parent?.burn_block_time ?? b.parent_burn_block_time,
      block_time: s?.block_time ?? b.block_time,
      tx_count: m.tx_count,
      microblock_canonical: true,
      canonical,
    };
  });
  await insertRows(tx, 'microblocks', anchoredMicroblocks, seq);
  if (canonical && streamed.length) {
    const acceptedHashes = [...accepted.keys()];
    const rejected = streamed.filter((m) => !accepted.has(m.microblock_hash)).map((m) => m.microblock_hash);
    // Unconfirmed copies of confirmed microblocks are superseded by the anchored rows.
    await tx`DELETE FROM events WHERE index_block_hash = '' AND microblock_hash = ANY(${acceptedHashes})`;
    await tx`DELETE FROM txs WHERE index_block_hash = '' AND microblock_hash = ANY(${acceptedHashes})`;
    await tx`DELETE FROM microblocks WHERE index_block_hash = '' AND microblock_hash = ANY(${acceptedHashes})`;
    if (rejected.length) {
      await tx`UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})`;
      const back = await tx<{ tx_id: string }[]>`
        UPDATE txs SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})
        RETURNING tx_id`;
      await tx`UPDATE events SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${rejected})`;
      result.txIds.push(...back.map((r) => r.tx_id));
    }
  }

  if (canonical) {
    const p = u.pox;
    await tx`INSERT INTO chain_state (id, pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height)
      VALUES (1, ${p.pox_v1_unlock_height}, ${p.pox_v2_unlock_height}, ${p.pox_v3_unlock_height})
      ON CONFLICT (id) DO UPDATE SET pox_v1_unlock_height = EXCLUDED.pox_v1_unlock_height,
        pox_v2_unlock_height = EXCLUDED.pox_v2_unlock_height, pox_v3_unlock_height = EXCLUDED.pox_v3_unlock_height`;
  }

  await reconcileMempool(tx, txs.map((t) => t.tx_id), result);
}

/**
 * Brings mempool_txs in line with the canonical chain for the given tx ids plus everything a reorg moved:
 * mined txs leave the mempool (and prune other pending txs of the same sender and nonce); txs of orphaned blocks
 * that are not mined on the new branch return to it.
 */
async function reconcileMempool(tx: Tx, minedCandidates: string[], result: IngestResult) {
  await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  let ids = minedCandidates;
  if (result.orphanedBlocks.length || result.restoredBlocks.length) {
    const moved = await tx<{ tx_id: string }[]>`
      SELECT DISTINCT tx_id FROM txs WHERE index_block_hash = ANY(${[...result.orphanedBlocks, ...result.restoredBlocks]})`;
    ids = [...new Set([...ids, ...moved.map((r) => r.tx_id)])];
  }
  if (!ids.length) return;
  const mined = await tx<{ tx_id: string }[]>`
    UPDATE mempool_txs m SET pruned = true, status = 'mined'
    WHERE m.tx_id = ANY(${ids}) AND NOT m.pruned
      AND EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> '')
    RETURNING tx_id`;
  const back = await tx<{ tx_id: string }[]>`
    UPDATE mempool_txs m SET pruned = false, status = 'pending'
    WHERE m.tx_id = ANY(${ids}) AND m.status = 'mined'
      AND NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> '')
    RETURNING tx_id`;
  // Other pending txs with the same sender and nonce as a mined one can never be mined now.
  const replaced = await tx<{ tx_id: string }[]>`
    UPDATE mempool_txs m SET pruned = true, status = 'dropped_replace_across_fork'
    FROM txs t
    WHERE t.tx_id = ANY(${ids}) AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> ''
      AND m.sender_address = t.sender_address AND m.nonce = t.nonce AND m.tx_id <> t.tx_id AND NOT m.pruned
    RETURNING m.tx_id`;
  result.txIds.push(...mined.map((r) => r.tx_id), ...back.map((r) => r.tx_id), ...replaced.map((r) => r.tx_id));
}

// ------------------------------------------------------------------------------------------------
// microblocks

async function ingestMicroblocks(tx: Tx, u: Extract<ChainUpdate, { kind: 'microblocks' }>, result: IngestResult) {
  const seq = await nextSeq(tx);
  const [parent] = await tx<{ block_height: number; block_hash: string; canonical: boolean }[]>`
    SELECT block_height, block_hash, canonical FROM blocks WHERE index_block_hash = ${u.parentIndexBlockHash}`;
  // Microblocks already confirmed by a stored anchor block are not unconfirmed any more.
  const known = await tx<{ microblock_hash: string }[]>`
    SELECT microblock_hash FROM microblocks WHERE microblock_hash = ANY(${u.microblocks.map((m) => m.microblock_hash)})`;
  const skip = new Set(known.map((r) => r.microblock_hash));
  const height = parent ? parent.block_height + 1 : -1;
  const canonical = parent ? parent.canonical : false;
  const now = Math.floor(Date.now() / 1000);
  const microblocks: MicroblockRow[] = u.microblocks
    .filter((m) => !skip.has(m.microblock_hash))
    .map((m) => ({
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
      canonical,
    }));
  const txs = u.txs
    .filter((t) => !skip.has(t.microblock_hash))
    .map((t) => ({ ...t, block_height: height, block_time: now, parent_block_hash: parent?.block_hash ?? '', canonical }));
  const events = u.events
    .filter((e) => !skip.has(e.microblock_hash))
    .map((e) => ({ ...e, block_height: height, canonical }));
  await insertRows(tx, 'microblocks', microblocks, seq);
  await insertRows(tx, 'txs', txs, seq);
  await insertRows(tx, 'events', events);
  result.txIds.push(...txs.map((t) => t.tx_id));
}

// ------------------------------------------------------------------------------------------------
// burn blocks

async function ingestBurnBlock(tx: Tx, u: Extract<ChainUpdate, { kind: 'burn_block' }>) {
  const seq = await nextSeq(tx);
  await tx.unsafe(
    `INSERT INTO burn_blocks SELECT * FROM json_populate_record(NULL::burn_blocks, $1::text::json) ON CONFLICT DO NOTHING`,
    [json({ ...u.burnBlock, canonical: true, seq })],
  );
}

// ------------------------------------------------------------------------------------------------
// mempool

async function ingestMempool(tx: Tx, u: Extract<ChainUpdate, { kind: 'mempool' }>, result: IngestResult) {
  if (!u.txs.length) return;
  await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  const seq = await nextSeq(tx);
  const tip = await canonicalTip(tx);
  const rows = u.txs.map((t) => ({
    ...t,
    receipt_block_height: tip?.block_height ?? 0,
    status: 'pending',
    pruned: false,
    replaced_by_tx_id: null,
    seq,
  }));
  // A tx already mined on the canonical chain does not return to the mempool.
  const added = await tx.unsafe<{ tx_id: string }[]>(
    `INSERT INTO mempool_txs
     SELECT r.* FROM json_populate_recordset(NULL::mempool_txs, $1::text::json) r
     WHERE NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = r.tx_id AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> '')
     ON CONFLICT (tx_id) DO NOTHING
     RETURNING tx_id`,
    [json(rows)],
  );
  result.txIds.push(...added.map((r) => r.tx_id));
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

async function dropMempool(tx: Tx, u: Extract<ChainUpdate, { kind: 'drop_mempool' }>, result: IngestResult) {
  if (!u.txIds.length) return;
  await tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`;
  const dropped = await tx<{ tx_id: string }[]>`
    UPDATE mempool_txs SET pruned = true, status = ${dropStatus(u.reason)}, replaced_by_tx_id = ${u.newTxId}
    WHERE tx_id = ANY(${u.txIds}) AND NOT pruned
    RETURNING tx_id`;
  result.txIds.push(...dropped.map((r) => r.tx_id));
}
