/**
 * Balance routes (STX + tokens of a principal):
 *   GET /extended/v1/address/:principal/balances            STX (as /stx answers), FT balances, NFT counts
 *   GET /extended/v2/addresses/:principal/balances/ft       positive FT balances, paged
 *   GET /extended/v2/addresses/:principal/balances/ft/:token one FT balance (`stx` too)
 */
import { z } from 'zod';
import { badRequest, endpoint, notFound } from '../../endpoint.js';
import { PrincipalParam, Unanchored, paging } from '../../schemas/params.js';
import { AddressBalanceResponse, PrincipalFtBalanceResponse, PrincipalFtBalancesResponse } from '../../schemas/tokens.js';
import * as addresses from '../../../store/addresses.js';
import * as balances from '../../../store/balances.js';
import { chainTip } from '../../../store/chain-tip.js';
import { stxBalance } from '../../../answers/index.js';
import { UntilBlock, untilBlockHeight } from './addresses.js';
import { ftBalancesJson, nftCountsJson } from '../../../views/tokens.js';

export const balanceEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/balances',
    operationId: 'get_account_balance',
    summary: 'STX, FT and NFT balances of a principal',
    description:
      'Deprecated in the reference in favour of the v2 balance routes. The `stx` member is what `/address/{principal}/stx` answers.',
    tags: ['Accounts'],
    deprecated: true,
    params: z.object({ principal: PrincipalParam }),
    query: z.object({
      unanchored: Unanchored,
      until_block: UntilBlock.describe(
        'Balances as of this block: a height (≥ 1) or a block hash; leaves out the pending STX flows',
      ),
    }),
    response: AddressBalanceResponse,
    responseDescription: 'The balances',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      if (q.unanchored && q.until_block !== undefined) {
        badRequest("can't handle both 'unanchored=true' and 'until_block' in the same request");
      }
      const until = await untilBlockHeight(sql, q.until_block);
      const tip = await chainTip(sql);
      // The reference answers 500 here on an empty chain (a bug): no block, nothing to reckon a balance against.
      if (!tip) notFound('Could not find block at height: 0 (no block has been received yet)');
      const height = until ?? (q.unanchored ? tip.block_height + 1 : tip.block_height);
      const refHeight = Math.min(height, tip.block_height);
      const burnHeight = await addresses.burnHeightAt(sql, refHeight);
      if (burnHeight === undefined) notFound(`Could not find block at height: ${refHeight}`);
      const [stx, ft, nft] = [
        await stxBalance(sql, params.principal, height, burnHeight, until === undefined),
        await balances.ftTotalsAt(sql, params.principal, height),
        await balances.nftTotalsAt(sql, params.principal, height),
      ];
      return { stx, fungible_tokens: ftBalancesJson(ft), non_fungible_tokens: nftCountsJson(nft) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/addresses/:principal/balances/ft',
    operationId: 'get_principal_ft_balances',
    summary: 'FT balances of a principal',
    description: 'Positive balances over the canonical anchored chain, by token identifier (case-insensitive).',
    tags: ['Accounts'],
    params: z.object({ principal: PrincipalParam }),
    query: z.object(paging(100, 200)),
    response: PrincipalFtBalancesResponse,
    responseDescription: 'A page of balances',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const rows = await balances.positiveFtBalances(sql, params.principal, q.limit, q.offset);
      return {
        limit: q.limit,
        offset: q.offset,
        total: rows[0]?.total ?? 0,
        results: rows.map((r) => ({ token: r.token, balance: r.balance })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/addresses/:principal/balances/ft/:token',
    operationId: 'get_principal_ft_balance',
    summary: 'One FT balance of a principal',
    description: 'Over the canonical anchored chain; `stx` gives the STX balance; a token never held is `0`.',
    tags: ['Accounts'],
    params: z.object({ principal: PrincipalParam, token: z.string().describe('`stx` or `<contract id>::<asset name>`') }),
    response: PrincipalFtBalanceResponse,
    responseDescription: 'The balance',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => ({
      balance: (await balances.ftBalance(sql, params.principal, params.token)) ?? '0',
    }),
  }),
];
