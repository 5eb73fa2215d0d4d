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

export const PoxEvent = component(
  'PoxEvent',
  z
    .object({
      block_height: Height,
      tx_id: Hash,
      tx_index: Count,
      event_index: Count,
      stacker: z.string().describe('the stacking principal'),
      locked: Amount,
      balance: z.string().regex(/^-?\d+$/),
      burnchain_unlock_height: Amount,
      pox_addr: BtcAddress.nullable(),
      pox_addr_raw: z.string().regex(/^0x[0-9a-f]*$/).nullable(),
      name: z.string().describe('the PoX function that printed the event (stack-stx, delegate-stx, handle-unlock, …)'),
      data: z
        .record(z.string(), z.string().nullable())
        .describe('the fields of that event (amounts and heights as decimal strings, principals, signer key)'),
    })
    .describe('A PoX synthetic event (a decoded print event of the boot pox-2/3/4 contract)'),
);

export const PoxEventList = component(
  'PoxEventList',
  z.object({ limit: Count, offset: Count, results: z.array(PoxEvent) }).describe('PoX events, newest first'),
);

export const PoxEventResults = component(
  'PoxEventResults',
  z.object({ results: z.array(PoxEvent) }).describe('PoX events, newest first'),
);

export const PoolDelegation = component(
  'PoolDelegation',
  z
    .object({
      stacker: z.string(),
      pox_addr: BtcAddress.optional(),
      amount_ustx: Amount,
      burn_block_unlock_height: Height.optional(),
      block_height: Height,
      tx_id: Hash,
    })
    .describe('A member of a stacking pool (its newest delegate-stx to the pool)'),
);

export const PoolDelegationList = component(
  'PoolDelegationList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(PoolDelegation) }).describe('Pool members, newest first'),
);

export const PoxCycle = component(
  'PoxCycle',
  z
    .object({
      block_height: Height.describe('height of the block that carried the reward set'),
      index_block_hash: Hash,
      cycle_number: Count,
      total_weight: Count,
      total_stacked_amount: Amount,
      total_signers: Count,
    })
    .describe('A PoX reward cycle and its signer set totals'),
);

export const PoxCycleList = component(
  'PoxCycleList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(PoxCycle) }).describe('PoX cycles, newest first'),
);

export const PoxSigner = component(
  'PoxSigner',
  z
    .object({
      signing_key: z.string().regex(/^0x[0-9a-f]*$/),
      signer_address: z.string().describe('the Stacks address of the signing key'),
      weight: Count,
      stacked_amount: Amount,
      weight_percent: z.number().nullable(),
      stacked_amount_percent: z.number().nullable(),
      pooled_stacker_count: Count,
      solo_stacker_count: Count,
    })
    .describe('A signer of a PoX cycle'),
);

export const PoxSignerList = component(
  'PoxSignerList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(PoxSigner) }).describe('Signers of a cycle'),
);

export const PoxStacker = component(
  'PoxStacker',
  z
    .object({
      stacker_address: z.string(),
      stacked_amount: Amount,
      pox_address: BtcAddress.nullable(),
      stacker_type: z.enum(['solo', 'pooled']),
    })
    .describe('A stacker whose STX back a signer in a cycle'),
);

export const PoxStackerList = component(
  'PoxStackerList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(PoxStacker) }).describe('Stackers of a signer'),
);
