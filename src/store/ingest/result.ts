/** The result of applying one message, as the projector hands it to its listeners (the push publisher). */
import type { ChainUpdate } from '../../chain/types.js';

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

export function emptyResult(update: ChainUpdate, eventId: number | null): IngestResult {
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
