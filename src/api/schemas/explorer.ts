/** Explorer views (src/api/routes/extended/tx-lists.ts, microblocks.ts, supply.ts, search.ts, contracts.ts). */
import { z } from 'zod';
import { Count, Hex, component } from './common.js';
import { MinedTx } from './txs.js';

export const TxListResponse = component(
  'TransactionList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(MinedTx) }),
);

export const RawTxResponse = component(
  'RawTransaction',
  z.object({ raw_tx: Hex.describe('the serialized transaction, 0x-prefixed hex') }),
);
