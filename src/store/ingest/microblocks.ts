/** Microblock messages: an unconfirmed stream on the canonical tip, and the reference's count of streamed microblocks. */
import type { ChainUpdate, MicroblockRow } from '../../chain/types.js';
import { mempoolPruneQuery, mempoolRestoreQuery } from './mempool-steps.js';
import type { IngestResult } from './result.js';
import { defined, insertPoxEvents, insertRows, MEMPOOL_LOCK, nextSeq, type Tx } from './rows.js';

/**
 * An unconfirmed microblock stream on the canonical tip. As the reference does, a stream whose parent is not the tip,
 * or that has a gap (its first microblock's parent is missing), is not stored (the message is still logged raw).
 */
export async function ingestMicroblocks(tx: Tx, u: Extract<ChainUpdate, { kind: 'microblocks' }>, result: IngestResult) {
  // One round trip for every read (statements are pipelined on the connection, and run in the order they are sent);
  // the change sequence value is taken whether or not the stream is stored.
  const [seq, [tip], [parent], existing] = await Promise.all([
    nextSeq(tx),
    tx<{ index_block_hash: string; block_height: number }[]>`
      SELECT index_block_hash, block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`,
    tx<{ block_height: number; block_hash: string }[]>`
      SELECT block_height, block_hash FROM blocks WHERE index_block_hash = ${u.parentIndexBlockHash}`,
    tx<MicroblockRow[]>`
      SELECT * FROM microblocks WHERE parent_index_block_hash = ${u.parentIndexBlockHash} AND index_block_hash = ''`,
  ]);
  if (!tip || tip.index_block_hash !== u.parentIndexBlockHash) {
    result.ignoredReason = 'microblock parent is not the canonical tip';
    return;
  }
  const known = new Set(existing.map((m) => m.microblock_hash));
  const incoming = u.microblocks.filter((m) => !known.has(m.microblock_hash));
  if (!incoming.length) {
    await countStreamed(tx, u.microblocks.length);
    return;
  }
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
  // Every write in one round trip, in the reference's order; a microblock fork waits for the txs it orphans, which
  // return to the mempool before the message's txs leave it.
  const writes: Promise<unknown>[] = [
    insertRows(tx, 'microblocks', microblocks, seq),
    insertRows(tx, 'txs', txs, seq),
    insertRows(tx, 'events', events),
    insertPoxEvents(tx, events),
  ];
  result.txIds.push(...txs.map((t) => t.tx_id));
  // Streamed microblocks that are not on the new stream's chain are orphaned (a microblock fork).
  const forked = existing.filter((m) => m.microblock_canonical && !onChain.has(m.microblock_hash)).map((m) => m.microblock_hash);
  if (forked.length) {
    const back = tx<{ tx_id: string }[]>`
      UPDATE txs SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})
      RETURNING tx_id`;
    await Promise.all([
      ...writes.splice(0),
      tx`UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})`,
      tx`UPDATE events SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(${forked})`,
      back,
    ]);
    result.unconfirmedOrphans.push(...(await back).map((r) => r.tx_id));
  }
  // as the reference: micro-orphaned txs return to the mempool, then the message's txs leave it
  const restore = mempoolRestoreQuery(tx, [...new Set(result.unconfirmedOrphans)], tip.block_height, seq);
  writes.push(
    tx`SELECT pg_advisory_xact_lock(${MEMPOOL_LOCK})`,
    ...defined<Promise<unknown>>(restore, mempoolPruneQuery(tx, [...new Set(u.txs.map((t) => t.tx_id))])),
    countStreamed(tx, u.microblocks.length),
  );
  await Promise.all(writes);
  if (restore) result.txIds.push(...(await restore)[0].ids);
}

/** The reference's microblock count: microblocks of every accepted stream message (sql/0022_microblock_count.sql). */
function countStreamed(tx: Tx, n: number): Promise<unknown> {
  return tx`UPDATE microblock_stream_count SET n = n + ${n}`;
}
