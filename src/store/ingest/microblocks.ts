/** Microblock messages: an unconfirmed stream on the canonical tip, and the reference's count of streamed microblocks. */
import type { ChainUpdate, EventRow } from '../../chain/types.js';
import { poxEventRows } from '../../chain/pox.js';
import { emptyResult, type IngestResult } from './result.js';
import { json, type Tx } from './rows.js';

export type MicroblocksUpdate = Extract<ChainUpdate, { kind: 'microblocks' }>;

/**
 * An unconfirmed microblock stream on the canonical tip, in one statement (sql/functions/projector.sql
 * project_microblocks: the rules, a microblock fork, the mempool). As the reference does, a stream whose parent is not
 * the tip, or that has a gap (its newest microblock does not lead back to sequence 0), is not stored (the message is
 * still logged). The statement depends on no answer, so the projector sends it without waiting (sendsWithoutWaiting).
 * pushOutbox: the function records the result in push_outbox too.
 */
export async function ingestMicroblocks(tx: Tx, id: number, u: MicroblocksUpdate, pushOutbox: boolean): Promise<IngestResult> {
  // the fields that depend on the tip are the function's (its base records fill the keys a row lacks)
  const txs = u.txs.map(({ block_height: _h, block_time: _t, parent_block_hash: _p, canonical: _c, ...t }) => t);
  const events = u.events.map(({ block_height: _h, canonical: _c, ...e }) => e);
  const [row] = await tx.unsafe<{ r: { tx_ids: string[]; orphans: string[]; ignored: string | null } }[]>(
    `SELECT project_microblocks($1, $2, $3, $4, $5, $6::text::json, $7::text::json, $8::text::json, $9::text::json,
       $10::text[], $11, $12) AS r`,
    [
      id,
      u.parentIndexBlockHash,
      u.burnBlockHash,
      u.burnBlockHeight,
      u.burnBlockTime,
      json(u.microblocks),
      json(txs),
      json(events),
      json(poxRowsByMicroblock(u.events)),
      [...new Set(u.txs.map((t) => t.tx_id))],
      Math.floor(Date.now() / 1000),
      pushOutbox,
    ] as never[],
    { prepare: true },
  );
  const result = emptyResult(u, id);
  result.txIds.push(...row.r.tx_ids);
  result.unconfirmedOrphans.push(...row.r.orphans);
  if (row.r.ignored !== null) result.ignoredReason = row.r.ignored;
  return result;
}

/** The PoX print values of a message's events, each with the microblock its event is in (the function keeps those it stores). */
function poxRowsByMicroblock(events: readonly EventRow[]): object[] {
  const byMicroblock = new Map<string, EventRow[]>();
  for (const e of events) {
    const list = byMicroblock.get(e.microblock_hash);
    if (list) list.push(e);
    else byMicroblock.set(e.microblock_hash, [e]);
  }
  return [...byMicroblock].flatMap(([microblock_hash, list]) => poxEventRows(list).map((r) => ({ ...r, microblock_hash })));
}
