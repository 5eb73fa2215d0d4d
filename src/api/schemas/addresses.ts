/** Address answers (src/api/routes/addresses.ts). */
import { z } from 'zod';
import { Amount, ClarityValue, Height, PrincipalOrEmpty, SignedAmount, component } from './common.js';
import { MinedTx } from './txs.js';

export const StxBalanceResponse = component(
  'StxBalance',
  z.object({
    balance: SignedAmount.describe('micro-STX; negative only when the database lacks the history that funded the account'),
    estimated_balance: SignedAmount.optional().describe('balance plus pending mempool flows (absent with until_block)'),
    pending_balance_inbound: Amount.optional(),
    pending_balance_outbound: Amount.optional(),
    total_sent: Amount,
    total_received: Amount,
    total_fees_sent: Amount,
    total_miner_rewards_received: Amount,
    lock_tx_id: z.union([z.string().regex(/^0x[0-9a-f]{64}$/), z.literal('')]).describe("'' when nothing is locked"),
    locked: Amount,
    lock_height: Height,
    burnchain_lock_height: Height,
    burnchain_unlock_height: Height,
  }),
);

export const TxWithTransfersResponse = component(
  'TransactionWithTransfers',
  z.object({
    tx: MinedTx,
    stx_sent: Amount.describe('STX sent by the principal in this transaction, fee included'),
    stx_received: Amount,
    stx_transfers: z.array(z.object({ amount: Amount, sender: PrincipalOrEmpty, recipient: PrincipalOrEmpty })),
    ft_transfers: z.array(
      z.object({ asset_identifier: z.string(), amount: Amount, sender: PrincipalOrEmpty, recipient: PrincipalOrEmpty }),
    ),
    nft_transfers: z.array(
      z.object({ asset_identifier: z.string(), value: ClarityValue, sender: PrincipalOrEmpty, recipient: PrincipalOrEmpty }),
    ),
  }),
);

export type StxBalanceJson = z.infer<typeof StxBalanceResponse>;
export type TxWithTransfersJson = z.infer<typeof TxWithTransfersResponse>;
