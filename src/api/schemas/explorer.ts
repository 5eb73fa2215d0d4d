/** Explorer views (src/api/routes/extended/tx-lists.ts, microblocks.ts, supply.ts, search.ts, contracts.ts). */
import { z } from 'zod';
import { Count, Hash, HashOrEmpty, Hex, IsoTimeOrEmpty, TxId, component } from './common.js';
import { ContractResponse, MempoolTx, MinedTx } from './txs.js';
import { LegacyBlock } from './blocks.js';
import { StxBalanceResponse } from './addresses.js';

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

const StxDecimal = z.string().regex(/^-?\d+\.\d{6}$/).describe('STX, 6 decimals');
const StxFormatted = z.string().regex(/^-?\d{1,3}(,\d{3})*\.\d{6}$/).describe('STX, 6 decimals, comma thousands separators');
const Percent = z.string().regex(/^(\d+\.\d{2}|NaN)$/).describe('percentage with 2 decimals (`NaN` while the supply is 0)');

export const StxSupplyResponse = component(
  'StxSupply',
  z.object({
    unlocked_percent: Percent,
    total_stx: StxDecimal.describe('the circulating supply at the height (equals unlocked_stx)'),
    total_stx_year_2050: StxDecimal,
    unlocked_stx: StxDecimal.describe('STX minted or unlocked up to the height, less burns'),
    block_height: Count,
  }),
);

export const StxSupplyLegacyResponse = component(
  'StxSupplyLegacy',
  z.object({
    unlockedPercent: Percent,
    totalStacks: StxDecimal,
    totalStacksFormatted: StxFormatted,
    totalStacksYear2050: StxDecimal,
    totalStacksYear2050Formatted: StxFormatted,
    unlockedSupply: StxDecimal,
    unlockedSupplyFormatted: StxFormatted,
    blockHeight: z.string().regex(/^\d+$/),
  }),
);

export const NetworkBlockTimesResponse = component(
  'NetworkBlockTimes',
  z.object({
    mainnet: z.object({ target_block_time: Count }),
    testnet: z.object({ target_block_time: Count }),
  }),
);

export const NetworkBlockTimeResponse = component('NetworkBlockTime', z.object({ target_block_time: Count.describe('seconds') }));

const searchTxData = {
  canonical: z.boolean(),
  block_hash: z.string(),
  burn_block_time: z.int(),
  block_height: z.int(),
  tx_type: z.string(),
};

export const SearchResponse = component(
  'SearchResult',
  z.object({
    found: z.literal(true),
    result: z.union([
      z.object({ entity_id: TxId, entity_type: z.literal('tx_id'), tx_data: z.object(searchTxData), metadata: MinedTx.optional() }),
      z.object({
        entity_id: TxId,
        entity_type: z.literal('mempool_tx_id'),
        tx_data: z.object({ tx_type: z.string() }),
        metadata: MempoolTx.optional(),
      }),
      z.object({
        entity_id: Hash,
        entity_type: z.literal('block_hash'),
        block_data: z.object({ canonical: z.boolean(), hash: Hash, parent_block_hash: Hash, burn_block_time: z.int(), height: z.int() }),
        metadata: LegacyBlock.optional(),
      }),
      z.object({
        entity_id: z.string(),
        entity_type: z.literal('contract_address'),
        tx_data: z
          .object({ tx_type: z.string(), tx_id: TxId, ...z.object(searchTxData).omit({ tx_type: true }).partial().shape })
          .optional(),
        metadata: z.union([MinedTx, MempoolTx]).optional(),
      }),
      z.object({ entity_id: z.string(), entity_type: z.literal('standard_address'), metadata: StxBalanceResponse.optional() }),
    ]),
  }),
);

export const ContractListResponse = component(
  'ContractList',
  z.object({ limit: Count, offset: Count, results: z.array(ContractResponse) }),
);

export const ContractStatusResponse = component(
  'SmartContractStatusList',
  z
    .record(
      z.string(),
      z.union([
        z.object({
          found: z.literal(true),
          result: z.object({
            contract_id: z.string(),
            tx_id: TxId,
            status: z.string().describe('the deploy tx status (`pending` in the mempool)'),
            block_height: z.int().optional().describe('absent for a pending deploy'),
          }),
        }),
        z.object({ found: z.literal(false) }),
      ]),
    )
    .describe('Keyed by the requested contract ids'),
);
