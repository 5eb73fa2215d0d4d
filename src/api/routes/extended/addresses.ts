/**
 * Address routes (the mempool list of an address lives in txs.ts):
 *   GET /extended/v1/address/:principal/stx                       STX balance, lock state, pending mempool flows
 *   GET /extended/v1/address/:principal/:tx_id/with_transfers      one tx with the principal's transfers in it
 */
import { z } from 'zod';
import { endpoint, notFound } from '../../endpoint.js';
import { PrincipalParam, Unanchored, normalizeHash } from '../../schemas/params.js';
import { StxBalanceResponse, TxWithTransfersResponse } from '../../schemas/addresses.js';
import { LABEL } from '../../endpoint.js';
import type { Sql } from '../../../store/sql.js';
import * as addresses from '../../../store/addresses.js';
import { chainTip } from '../../../store/chain-tip.js';
import { addressTxWithTransfers, stxBalance } from '../../../answers/index.js';

/** until_block: a positive block height or a block hash (index or plain). */
export const UntilBlock = z
  .union([
    z.int().min(1, { error: `${LABEL} must be >= 1 (unexpected integer value for block height)` }),
    z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, { error: `${LABEL} must be a block height or a block hash` }),
  ])
  .optional()
  .describe('As of this block: a height (≥ 1) or a block hash');

/** The height an until_block names; a hash no block has is a 404. */
export async function untilBlockHeight(sql: Sql, v: number | string | undefined): Promise<number | undefined> {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  return (await addresses.heightOfBlockHash(sql, normalizeHash(v))) ?? notFound('block not found with hash');
}

export const addressEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/stx',
    operationId: 'get_account_stx_balance',
    summary: 'STX balance of a principal',
    description: 'Balance, totals, lock state and (without until_block) the pending mempool flows.',
    tags: ['Accounts'],
    params: z.object({ principal: PrincipalParam }),
    query: z.object({
      unanchored: Unanchored,
      until_block: UntilBlock.describe(
        'Balance as of this block: a height (≥ 1) or a block hash; leaves out the pending flows',
      ),
    }),
    response: StxBalanceResponse,
    responseDescription: 'The balance',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const until = await untilBlockHeight(sql, q.until_block);
      const tip = await chainTip(sql);
      // The reference answers 500 here on an empty chain (a bug): no block, nothing to reckon a balance against.
      if (!tip) notFound('Could not find block at height: 0 (no block has been received yet)');
      const height = until ?? (q.unanchored ? tip.block_height + 1 : tip.block_height);
      const refHeight = Math.min(height, tip.block_height);
      const burnHeight = await addresses.burnHeightAt(sql, refHeight);
      if (burnHeight === undefined) notFound(`Could not find block at height: ${refHeight}`);
      return stxBalance(sql, params.principal, height, burnHeight, until === undefined);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/:tx_id/with_transfers',
    operationId: 'get_account_transaction_with_transfers',
    summary: 'A transaction of a principal with its transfers',
    description: 'Deprecated: use the events of an address transaction instead.',
    tags: ['Accounts'],
    deprecated: true,
    // any tx id: one that is malformed matches no transaction (404, as the reference answers)
    params: z.object({ principal: PrincipalParam, tx_id: z.string().transform(normalizeHash).describe('Transaction id') }),
    response: TxWithTransfersResponse,
    responseDescription: 'The transaction and the STX/FT/NFT transfers involving the principal',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const row = await addresses.principalTx(sql, params.principal, params.tx_id);
      return row ? addressTxWithTransfers(sql, params.principal, row) : notFound('No matching transaction found');
    },
  }),
];
