/**
 * Burnchain rewards: GET /extended/v1/burnchain/rewards[/{address}[/total]] and /reward_slot_holders[/{address}].
 * An address is a BTC address, or a Stacks address converted to the BTC address of the same hash (the reference's rule).
 */
import { z } from 'zod';
import { badRequest, endpoint } from '../../endpoint.js';
import { paging } from '../../schemas/params.js';
import { BurnchainRewardList, BurnchainRewardSlotHolderList, BurnchainRewardsTotal } from '../../schemas/pox.js';
import { burnchainAddressOf } from '../../../chain/btc-address.js';
import * as burnchain from '../../../store/burnchain.js';
import type { RewardRow, SlotHolderRow } from '../../../store/burnchain.js';

const BurnchainAddress = z
  .string()
  .transform((raw) => ({ raw: raw.trim(), btc: burnchainAddressOf(raw) }))
  .describe('A Bitcoin address, or a Stacks address (converted to the Bitcoin address of the same hash)');

const Page = z.object(paging(96, 250));

function rewardJson(r: RewardRow) {
  return {
    canonical: true,
    burn_block_hash: r.burn_block_hash,
    burn_block_height: Number(r.burn_block_height),
    burn_amount: r.burn_amount,
    reward_recipient: r.reward_recipient,
    reward_amount: r.reward_amount,
    reward_index: r.reward_index,
  };
}

function slotHolderJson(r: SlotHolderRow) {
  return {
    canonical: true,
    burn_block_hash: r.burn_block_hash,
    burn_block_height: Number(r.burn_block_height),
    address: r.address,
    slot_index: r.slot_index,
  };
}

const invalid = (raw: string) => `Address ${raw} is not a valid Bitcoin or STX address.`;

export const burnchainEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/burnchain/reward_slot_holders',
    operationId: 'get_burnchain_reward_slot_holders',
    summary: 'Recent reward slot holders',
    description: 'The Bitcoin addresses that hold PoX reward slots, newest burn block first.',
    tags: ['Stacking Rewards'],
    query: Page,
    response: BurnchainRewardSlotHolderList,
    responseDescription: 'A page of slot holders',
    errors: [400, 503],
    handler: async ({ query }, { sql }) => {
      const rows = await burnchain.slotHolders(sql, query);
      return { limit: query.limit, offset: query.offset, total: rows[0]?.total ?? 0, results: rows.map(slotHolderJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/burnchain/reward_slot_holders/:address',
    operationId: 'get_burnchain_reward_slot_holders_by_address',
    summary: 'Reward slot holder entries of an address',
    tags: ['Stacking Rewards'],
    params: z.object({ address: BurnchainAddress }),
    query: Page,
    response: BurnchainRewardSlotHolderList,
    responseDescription: 'A page of slot holders',
    errors: [400, 503],
    handler: async ({ params, query }, { sql }) => {
      const address = params.address.btc ?? badRequest(invalid(params.address.raw));
      const rows = await burnchain.slotHolders(sql, { ...query, address });
      return { limit: query.limit, offset: query.offset, total: rows[0]?.total ?? 0, results: rows.map(slotHolderJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/burnchain/rewards',
    operationId: 'get_burnchain_reward_list',
    summary: 'Recent burnchain reward recipients',
    description: 'PoX rewards paid on the burn chain, newest first (no total, as the reference).',
    tags: ['Stacking Rewards'],
    query: Page,
    response: BurnchainRewardList,
    responseDescription: 'A page of rewards',
    errors: [400, 503],
    handler: async ({ query }, { sql }) => {
      const rows = await burnchain.rewards(sql, query);
      return { limit: query.limit, offset: query.offset, results: rows.map(rewardJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/burnchain/rewards/:address',
    operationId: 'get_burnchain_reward_list_by_address',
    summary: 'Recent burnchain rewards of a recipient',
    tags: ['Stacking Rewards'],
    params: z.object({ address: BurnchainAddress }),
    query: Page,
    response: BurnchainRewardList,
    responseDescription: 'A page of rewards',
    errors: [400, 503],
    handler: async ({ params, query }, { sql }) => {
      // the reference's message on this route does not name the address
      const recipient = params.address.btc ?? badRequest('Address is not a valid Bitcoin or STX address.');
      const rows = await burnchain.rewards(sql, { ...query, recipient });
      return { limit: query.limit, offset: query.offset, results: rows.map(rewardJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/burnchain/rewards/:address/total',
    operationId: 'get_burnchain_rewards_total_by_address',
    summary: 'Total burnchain rewards of a recipient',
    tags: ['Stacking Rewards'],
    params: z.object({ address: BurnchainAddress }),
    response: BurnchainRewardsTotal,
    responseDescription: 'The total',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => {
      const recipient = params.address.btc ?? badRequest(invalid(params.address.raw));
      return { reward_recipient: recipient, reward_amount: await burnchain.rewardsTotal(sql, recipient) };
    },
  }),
];
