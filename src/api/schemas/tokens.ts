/** Token and balance answers (src/api/routes/extended/tokens.ts, balances.ts). */
import { z } from 'zod';
import { Amount, ClarityValue, Count, Height, Principal, SignedAmount, TxId, component } from './common.js';
import { MinedTx } from './txs.js';
import { StxBalanceResponse } from './addresses.js';

const page = <T extends z.ZodType>(item: T) => ({ limit: Count, offset: Count, total: Count, results: z.array(item) });

const holding = { asset_identifier: z.string(), value: ClarityValue, block_height: Height };
export const NftHolding = component(
  'NonFungibleTokenHolding',
  z
    .union([z.object({ ...holding, tx_id: TxId }), z.object({ ...holding, tx: MinedTx })])
    .describe('An NFT the principal holds, with the tx that gave it (its id, or the whole tx with `tx_metadata`)'),
);
export const NftHoldingsResponse = component('NonFungibleTokenHoldingsList', z.object(page(NftHolding)));

const historyEvent = {
  sender: Principal.nullable().describe('null for a mint'),
  recipient: Principal.nullable().describe('null for a burn'),
  event_index: Count,
  asset_event_type: z.enum(['transfer', 'mint', 'burn']),
};
export const NftHistoryEvent = component(
  'NonFungibleTokenHistoryEvent',
  z.union([z.object({ ...historyEvent, tx_id: TxId }), z.object({ ...historyEvent, tx: MinedTx })]),
);
export const NftHistoryResponse = component('NonFungibleTokenHistoryEventList', z.object(page(NftHistoryEvent)));

const mint = { recipient: Principal.nullable(), event_index: Count, value: ClarityValue };
export const NftMint = component(
  'NonFungibleTokenMint',
  z.union([z.object({ ...mint, tx_id: TxId }), z.object({ ...mint, tx: MinedTx })]),
);
export const NftMintsResponse = component('NonFungibleTokenMintList', z.object(page(NftMint)));

export const FtHoldersResponse = component(
  'FungibleTokenHolderList',
  z.object({
    total_supply: SignedAmount.describe('sum of every holder balance'),
    ...page(z.object({ address: Principal, balance: SignedAmount })),
  }),
);

export const AddressBalanceResponse = component(
  'AddressBalance',
  z.object({
    stx: StxBalanceResponse,
    fungible_tokens: z.record(
      z.string(),
      z.object({ balance: SignedAmount, total_sent: Amount, total_received: Amount }),
    ).describe('per asset identifier'),
    non_fungible_tokens: z.record(
      z.string(),
      z.object({ count: SignedAmount, total_sent: Amount, total_received: Amount }),
    ).describe('per asset identifier: NFTs held (received − sent)'),
  }),
);

export const PrincipalFtBalancesResponse = component(
  'PrincipalFtBalanceList',
  z.object(page(z.object({ token: z.string(), balance: Amount }))),
);

export const PrincipalFtBalanceResponse = component(
  'PrincipalFtBalance',
  z.object({ balance: SignedAmount.describe('`stx`: micro-STX (fees and miner rewards included)') }),
);
