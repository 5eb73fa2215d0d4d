/** Explorer views (src/api/routes/extended/tx-lists.ts, microblocks.ts, supply.ts, search.ts, contracts.ts). */
import { z } from 'zod';
import { Count, Hash, HashOrEmpty, Hex, IsoTimeOrEmpty, TxId, component } from './common.js';
import { MinedTx } from './txs.js';

export const TxListResponse = component(
  'TransactionList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(MinedTx) }),
);

export const RawTxResponse = component(
  'RawTransaction',
  z.object({ raw_tx: Hex.describe('the serialized transaction, 0x-prefixed hex') }),
);

export const Microblock = component(
  'Microblock',
  z.object({
    canonical: z.boolean(),
    microblock_canonical: z.boolean(),
    microblock_hash: Hash,
    microblock_sequence: Count,
    microblock_parent_hash: Hash,
    block_height: Count.describe('height of the anchor block that confirms it (or will)'),
    parent_block_height: Count,
    parent_block_hash: Hash,
    parent_burn_block_hash: Hash,
    parent_burn_block_time: z.int(),
    parent_burn_block_time_iso: IsoTimeOrEmpty,
    parent_burn_block_height: z.int(),
    block_hash: HashOrEmpty.describe("the confirming anchor block's hash, `0x` while unconfirmed"),
    txs: z.array(TxId).describe('canonical tx ids, last first'),
  }),
);

export const MicroblockListResponse = component(
  'MicroblockList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(Microblock) }),
);

export const UnanchoredTxsResponse = component(
  'UnanchoredTransactions',
  z.object({ total: Count, results: z.array(MinedTx) }),
);
