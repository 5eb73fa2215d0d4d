/**
 * Block messages: the common block in one statement (projectBlockFast) and the general path (ingestBlock) for
 * everything else (forks, the boot block's adoption, microblock forks).
 */
import type { ChainUpdate, EventRow, MicroblockRow, TxRow } from '../../chain/types.js';
import { poxEventRows } from '../../chain/pox.js';
import { mempoolBlockRbfQuery, mempoolGarbageQuery, mempoolPruneQuery, mempoolRestoreQuery } from './mempool-steps.js';
import { applyStxTotals, placeBlock } from './reorg.js';
import { emptyResult, type IngestResult } from './result.js';
import { defined, insertPoxEvents, insertRows, json, MEMPOOL_LOCK, type Tx } from './rows.js';

/**
 * Block 1 adopts the boot block's transactions, as the reference does: newer nodes send the genesis txs in a
 * separate block 0, which is stored non-canonical; its txs and events are re-homed into block 1 with tx_index + 1,
 * so they line up with older nodes that send them inside block 1 after the coinbase. Like the reference, they keep
 * the boot block's own block_time (only the burn placement and the block identity move).
 */
export function adoptBootBlockTxs(tx: Tx, b: Extract<ChainUpdate, { kind: 'block' }>['block'], bootHash: string, canonical: boolean) {
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
export type BlockUpdate = Extract<ChainUpdate, { kind: 'block' }>;

/** microblocks rows of the microblocks a block confirms that are not stored yet (burn data from the stream when known) */
export function confirmedMicroblockRows(
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
 * The common block message in one statement (sql/functions/projector.sql project_block_fast): a new block on the
 * canonical tip that orphans none of its parent's streamed microblocks (it adopts them all, as ingestBlock does).
 * Returns null, having written nothing, when the block is anything else (a fork, the same block again, the first
 * blocks, a microblock fork): the caller then runs the general path.
 */
export async function projectBlockFast(tx: Tx, id: number, u: BlockUpdate, pushOutbox: boolean): Promise<IngestResult | null> {
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

/** What the general path reads before it writes, started (sent) by blockReads. */
export type BlockReads = Promise<
  [{ seq: string | null }[], { index_block_hash: string; block_height: number; nakamoto: boolean }[], MicroblockRow[], { index_block_hash: string }[]]
>;

/**
 * Starts every read the general path needs, in one round trip: the block's change sequence value unless it is stored
 * already (then null, and no value is taken), the canonical tip, the parent's streamed microblocks and the boot block
 * block 1 adopts. Sent right behind a one-statement attempt (projectBlockFast), they read what it left: a block it
 * stored is stored, so they take no value, and their answer is not used.
 */
export function blockReads(tx: Tx, b: BlockUpdate['block']): BlockReads {
  return Promise.all([
    tx<{ seq: string | null }[]>`
      SELECT CASE WHEN EXISTS (SELECT 1 FROM blocks WHERE index_block_hash = ${b.index_block_hash}) THEN NULL
        ELSE nextval('change_seq')::text END AS seq`,
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
}

/**
 * The general path: a fork, a reorg, the boot block's adoption, a microblock fork. Round trips: the reads
 * (`reads`, when the caller started them), the reorg's levels if any, then every write with the mempool steps; a
 * block that orphans streamed microblocks waits for their txs before the mempool steps.
 */
export async function ingestBlock(tx: Tx, id: number, u: BlockUpdate, reads: BlockReads = blockReads(tx, u.block)): Promise<IngestResult> {
  const b = u.block;
  const [[{ seq: seqText }], tipRows, streamed, boot] = await reads;
  const result = emptyResult(u, id);
  if (seqText === null) return result; // the same block in another encoding
  const seq = Number(seqText);
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
    writes.push(tx`
      SELECT microblocks_adopt(${b.index_block_hash}, ${b.block_hash}, ${b.burn_block_time}, ${b.burn_block_height}, ${adopt}::text[])`);
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
  // The mempool, in the reference's order: a canonical block's txs leave it (with their payer+nonce group), the txs of
  // microblocks it orphans and does not include return to it; then, for every stored block, garbage collection and
  // replace-by-fee over its txs. Sent with the writes unless the returning txs are needed first.
  if (orphanedUnconfirmed) {
    await Promise.all(writes.splice(0));
    result.unconfirmedOrphans.push(...(await orphanedUnconfirmed).map((r) => r.tx_id));
  }
  const messageIds = [...new Set(u.txs.map((t) => t.tx_id))];
  const inBlock = new Set(messageIds);
  const back = canonical ? [...new Set(result.unconfirmedOrphans)].filter((t) => !inBlock.has(t)) : [];
  const restore = canonical ? mempoolRestoreQuery(tx, back, tipRows[0]?.block_height ?? 0, seq) : undefined;
  const gc = mempoolGarbageQuery(tx, tipRows[0]);
  writes.push(
    tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`,
    ...defined<Promise<unknown>>(canonical ? mempoolPruneQuery(tx, messageIds) : undefined, restore),
    gc,
    ...defined(mempoolBlockRbfQuery(tx, messageIds)),
  );
  await Promise.all(writes);
  if (restore) result.txIds.push(...(await restore)[0].ids);
  result.txIds.push(...(await gc)[0].ids);
  return result;
}
