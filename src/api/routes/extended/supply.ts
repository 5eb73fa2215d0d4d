/**
 * Supply and network info: GET /extended/v1/stx_supply (+ /total/plain, /circulating/plain, /legacy_format),
 * /extended/v1/info/network_block_times, /extended/v1/info/network_block_time/:network.
 */
import { z } from 'zod';
import { endpoint, raw } from '../../endpoint.js';
import { Height, Unanchored } from '../../schemas/params.js';
import {
  NetworkBlockTimeResponse,
  NetworkBlockTimesResponse,
  StxSupplyLegacyResponse,
  StxSupplyResponse,
} from '../../schemas/explorer.js';
import { supplyFigures, withThousands } from '../../../views/explorer.js';
import { unlockedSupply } from '../../../store/supply.js';

/** Target block times, seconds (the reference's constants: mainnet 10 minutes, testnet 2 minutes). */
const TARGET_BLOCK_TIME = { mainnet: 600, testnet: 120 } as const;

const supplyQuery = z.object({
  height: Height.optional().describe('Stacks block height (default: the chain tip); above the tip: the supply at the tip'),
  unanchored: Unanchored.describe('Count mints and burns of unconfirmed microblocks (ignored with `height`)'),
});

const plain = (body: string) => raw({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });

export const supplyEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/stx_supply',
    operationId: 'get_stx_supply',
    summary: 'STX supply',
    description: 'STX minted (genesis allocations, unlocks, matured coinbases) less STX burned, up to a height.',
    tags: ['Info'],
    query: supplyQuery,
    response: StxSupplyResponse,
    responseDescription: 'The supply',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const s = await unlockedSupply(sql, q);
      return { ...supplyFigures(s.unlocked), block_height: s.block_height };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/stx_supply/total/plain',
    operationId: 'get_stx_supply_total_supply_plain',
    summary: 'Total STX supply (plain text)',
    tags: ['Info'],
    deprecated: true,
    text: { contentType: 'text/plain', description: 'STX, 6 decimals' },
    errors: [503],
    handler: async (_input, { sql }) => plain(supplyFigures((await unlockedSupply(sql, { unanchored: false })).unlocked).total_stx),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/stx_supply/circulating/plain',
    operationId: 'get_stx_supply_circulating_plain',
    summary: 'Circulating STX supply (plain text)',
    tags: ['Info'],
    deprecated: true,
    text: { contentType: 'text/plain', description: 'STX, 6 decimals' },
    errors: [503],
    handler: async (_input, { sql }) => plain(supplyFigures((await unlockedSupply(sql, { unanchored: false })).unlocked).unlocked_stx),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/stx_supply/legacy_format',
    operationId: 'get_total_stx_supply_legacy_format',
    summary: 'STX supply (the 1.0 API format)',
    tags: ['Info'],
    deprecated: true,
    query: supplyQuery,
    response: StxSupplyLegacyResponse,
    responseDescription: 'The supply',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const s = await unlockedSupply(sql, q);
      const f = supplyFigures(s.unlocked);
      return {
        unlockedPercent: f.unlocked_percent,
        totalStacks: f.total_stx,
        totalStacksFormatted: withThousands(f.total_stx),
        totalStacksYear2050: f.total_stx_year_2050,
        totalStacksYear2050Formatted: withThousands(f.total_stx_year_2050),
        unlockedSupply: f.unlocked_stx,
        unlockedSupplyFormatted: withThousands(f.unlocked_stx),
        blockHeight: String(s.block_height),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/info/network_block_times',
    operationId: 'get_network_block_times',
    summary: 'Target block times of both networks',
    tags: ['Info'],
    response: NetworkBlockTimesResponse,
    responseDescription: 'Seconds per block',
    errors: [],
    handler: () => ({ mainnet: { target_block_time: TARGET_BLOCK_TIME.mainnet }, testnet: { target_block_time: TARGET_BLOCK_TIME.testnet } }),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/info/network_block_time/:network',
    operationId: 'get_network_block_time_by_network',
    summary: 'Target block time of a network',
    tags: ['Info'],
    params: z.object({ network: z.enum(['testnet', 'mainnet']).describe('Network') }),
    response: NetworkBlockTimeResponse,
    responseDescription: 'Seconds per block',
    errors: [400],
    handler: ({ params }) => ({ target_block_time: TARGET_BLOCK_TIME[params.network] }),
  }),
];
