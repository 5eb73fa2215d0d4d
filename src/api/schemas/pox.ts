/** Stacking: burnchain rewards and reward slot holders; PoX events, cycles, signers and stackers. */
import { z } from 'zod';
import { Amount, Count, Hash, Height, component } from './common.js';

const BtcAddress = z.string().describe('a Bitcoin address');

export const BurnchainReward = component(
  'BurnchainReward',
  z
    .object({
      canonical: z.boolean(),
      burn_block_hash: Hash,
      burn_block_height: Height,
      burn_amount: Amount.describe('satoshis committed by the block winner'),
      reward_recipient: BtcAddress,
      reward_amount: Amount.describe('satoshis paid to the recipient'),
      reward_index: Count.describe('position in the burn block of this reward'),
    })
    .describe('A PoX reward paid in a burn block'),
);

export const BurnchainRewardList = component(
  'BurnchainRewardList',
  z.object({ limit: Count, offset: Count, results: z.array(BurnchainReward) }).describe('Burnchain rewards, newest first'),
);

export const BurnchainRewardsTotal = component(
  'BurnchainRewardsTotal',
  z.object({ reward_recipient: BtcAddress, reward_amount: Amount }).describe('Total rewards paid to a recipient'),
);

export const BurnchainRewardSlotHolder = component(
  'BurnchainRewardSlotHolder',
  z
    .object({
      canonical: z.boolean(),
      burn_block_hash: Hash,
      burn_block_height: Height,
      address: BtcAddress,
      slot_index: Count,
    })
    .describe('A reward slot holder of a burn block'),
);

export const BurnchainRewardSlotHolderList = component(
  'BurnchainRewardSlotHolderList',
  z
    .object({ limit: Count, offset: Count, total: Count, results: z.array(BurnchainRewardSlotHolder) })
    .describe('Reward slot holders, newest first'),
);
