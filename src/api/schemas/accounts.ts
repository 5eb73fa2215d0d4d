/** Wallet account answers (src/api/routes/extended/accounts.ts, fees.ts). */
import { z } from 'zod';
import { Amount, ClarityValue, Count, Height, Hex, PrincipalOrEmpty, SignedAmount, TxId, component } from './common.js';
import { MinedTx, TxEvent } from './txs.js';
import { TxWithTransfersResponse } from './addresses.js';

const page = <T extends z.ZodType>(item: T) =>
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(item) });

export const AddressTxListResponse = component('AddressTransactionList', page(MinedTx));
export const AddressTxWithTransfersListResponse = component('AddressTransactionWithTransfersList', page(TxWithTransfersResponse));
export const AddressAssetsResponse = component('AddressAssetList', page(TxEvent));

export const InboundStxTransfer = component(
  'InboundStxTransfer',
  z.object({
    sender: PrincipalOrEmpty,
    amount: Amount,
    memo: Hex.describe('memo of the transfer (bulk sends: the print value after the transfer)'),
    block_height: Height,
    tx_id: TxId,
    transfer_type: z.enum(['bulk-send', 'stx-transfer', 'stx-transfer-memo']),
    tx_index: Count,
  }),
);
export const StxInboundListResponse = component('AddressStxInboundList', page(InboundStxTransfer));

export const NoncesResponse = component(
  'AddressNonces',
  z.object({
    last_mempool_tx_nonce: Count.nullable(),
    last_executed_tx_nonce: Count.nullable(),
    possible_next_nonce: Count,
    detected_missing_nonces: z.array(Count),
    detected_mempool_nonces: z.array(Count),
  }),
);

const kinds = z.object({ transfer: Count, mint: Count, burn: Count });
export const AddressTransaction = component(
  'AddressTransaction',
  z.object({
    tx: MinedTx,
    stx_sent: Amount.describe('STX sent by the principal (fee included when it paid it)'),
    stx_received: Amount,
    events: z.object({ stx: kinds, ft: kinds, nft: kinds }).describe("counts of the principal's asset events in the tx"),
  }),
);
export const AddressTransactionListResponse = component('AddressTransactionV2List', page(AddressTransaction));

const eventKind = z.enum(['transfer', 'mint', 'burn']);
export const AddressTransactionEvent = component(
  'AddressTransactionEvent',
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('stx'),
      event_index: Count,
      data: z.object({ type: eventKind, amount: Amount, sender: PrincipalOrEmpty.optional(), recipient: PrincipalOrEmpty.optional() }),
    }),
    z.object({
      type: z.literal('ft'),
      event_index: Count,
      data: z.object({
        type: eventKind,
        amount: Amount,
        asset_identifier: z.string(),
        sender: PrincipalOrEmpty.optional(),
        recipient: PrincipalOrEmpty.optional(),
      }),
    }),
    z.object({
      type: z.literal('nft'),
      event_index: Count,
      data: z.object({
        type: eventKind,
        asset_identifier: z.string(),
        value: ClarityValue,
        sender: PrincipalOrEmpty.optional(),
        recipient: PrincipalOrEmpty.optional(),
      }),
    }),
  ]),
);
export const AddressTransactionEventListResponse = component('AddressTransactionEventList', page(AddressTransactionEvent));

export const StxBalanceV2Response = component(
  'StxBalanceV2',
  z.object({
    balance: SignedAmount,
    total_miner_rewards_received: Amount,
    lock_tx_id: z.union([z.string().regex(/^0x[0-9a-f]{64}$/), z.literal('')]),
    locked: Amount,
    lock_height: Height,
    burnchain_lock_height: Height,
    burnchain_unlock_height: Height,
    estimated_balance: SignedAmount.optional().describe('with include_mempool'),
    pending_balance_inbound: Amount.optional(),
    pending_balance_outbound: Amount.optional(),
  }),
);

export const FeeRateResponse = component('FeeRate', z.object({ fee_rate: z.int() }));

const priorities = z.object({ no_priority: z.number(), low_priority: z.number(), medium_priority: z.number(), high_priority: z.number() });
export const MempoolFeePrioritiesResponse = component(
  'MempoolFeePriorities',
  z.object({
    all: priorities,
    token_transfer: priorities.optional(),
    contract_call: priorities.optional(),
    smart_contract: priorities.optional(),
  }),
);
