/** Nakamoto views and burn blocks as the REST API prints them (src/views/nakamoto.ts). */
import { z } from 'zod';
import { Count, Hash, Height, Hex, IsoTime, UnixTime, component } from './common.js';
import { Block } from './blocks.js';

export const BurnBlock = component(
  'BurnBlock',
  z
    .object({
      burn_block_time: UnixTime,
      burn_block_time_iso: IsoTime,
      burn_block_hash: Hash,
      burn_block_height: Height,
      stacks_blocks: z.array(Hash).describe('hashes of the canonical Stacks blocks it carries, newest first'),
      avg_block_time: z
        .int()
        .describe('mean time between its consecutive Stacks blocks, in whole seconds (truncated, as the reference; 0 for one block)'),
      total_tx_count: Count.describe('transactions in its Stacks blocks'),
    })
    .describe('A Bitcoin block that carries canonical Stacks blocks'),
);

export const BurnBlockListResponse = component(
  'BurnBlockList',
  z.object({
    limit: Count,
    offset: Count,
    total: Count.describe('the number of canonical Stacks blocks (as the reference counts it); 0 for an empty page'),
    results: z.array(BurnBlock),
  }),
);

export const BurnBlockBlocksResponse = component(
  'BurnBlockBlockList',
  z.object({
    limit: Count,
    offset: Count,
    total: Count.describe('canonical Stacks blocks of the burn block; 0 for an empty page'),
    results: z.array(Block),
  }),
);

export const SignerSignatureListResponse = component(
  'SignerSignatureList',
  z.object({
    limit: Count,
    offset: Count,
    total: Count.describe('signatures of the block (0 for an unknown or pre-Nakamoto block)'),
    results: z.array(Hex).describe('signer signatures (0x hex), in the order the node sent them'),
  }),
);

export const AverageBlockTimesResponse = component(
  'AverageBlockTimes',
  z.object({
    last_1h: z.number().min(0).describe('mean block time over the last hour, in seconds'),
    last_24h: z.number().min(0).describe('mean block time over the last 24 hours, in seconds'),
    last_7d: z.number().min(0).describe('mean block time over the last 7 days, in seconds'),
    last_30d: z.number().min(0).describe('mean block time over the last 30 days, in seconds'),
  }),
);

export type BurnBlockJson = z.infer<typeof BurnBlock>;
