/**
 * Transaction lists: GET /extended/v1/tx (recent, filtered, sorted), /extended/v1/tx/:tx_id/raw,
 * /extended/v1/tx/block/:block_hash, /extended/v1/tx/block_height/:height, /extended/v2/blocks/:height_or_hash/transactions.
 * (`/extended/v1/tx/mempool/dropped` is a legacy route the reference does not mount by default: not served here either.)
 */
import { z } from 'zod';
import { endpoint, networkChecked, notFound, raw } from '../../endpoint.js';
import { redirect } from '../../../http/response.js';
import {
  ExcludeFunctionArgs,
  Height,
  HeightOrHash,
  List,
  TxIdParam,
  Unanchored,
  blockRef,
  principalProblem,
  normalizeHash,
  paging,
} from '../../schemas/params.js';
import { isPrincipal, isStacksAddress } from '../../../chain/principal.js';
import { RawTxResponse, TxListResponse } from '../../schemas/explorer.js';
import { txJson } from '../../../views/txs.js';
import * as lists from '../../../store/tx-lists.js';
import { visibleHeight } from '../../../store/txs.js';

const TX_TYPES = ['coinbase', 'token_transfer', 'smart_contract', 'contract_call', 'poison_microblock', 'tenure_change'] as const;

/** A query principal checked as the reference's handler does (its own message, naming the parameter). */
function principalFilter(name: string, check: (s: string) => boolean, what: string, description: string) {
  return networkChecked(
    z
      .string()
      .refine(check, { error: (iss) => `Invalid query parameter for "${name}": "${String(iss.input)}" is not a valid ${what}`, abort: true })
      .superRefine((s, ctx) => {
        const problem = principalProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
      }),
  )
    .optional()
    .describe(description);
}

const DEPRECATED_BY_BLOCK = 'Deprecated: use `GET /extended/v2/blocks/{height_or_hash}/transactions`.';

export const txListEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx',
    operationId: 'get_transaction_list',
    summary: 'Recent transactions',
    description:
      'Canonical mined transactions, newest first by default. Filters combine (AND); a filter value of 0 (`nonce`, ' +
      '`start_time`, `end_time`) filters nothing, as in the reference.',
    tags: ['Transactions'],
    query: z.object({
      ...paging(20, 50),
      type: List(z.enum(TX_TYPES)).optional().describe('Only these types, repeated or comma-separated'),
      unanchored: Unanchored,
      order: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
      sort_by: z.enum(['block_height', 'burn_block_time', 'fee']).default('block_height').describe('Sort key'),
      from_address: principalFilter('from_address', isStacksAddress, 'STX address', 'Only transactions sent by this address'),
      to_address: principalFilter('to_address', isPrincipal, 'STX address', 'Only token transfers to this principal'),
      start_time: z.int().optional().describe('Only transactions whose burn block time is at or after this (unix seconds)'),
      end_time: z.int().optional().describe('Only transactions whose burn block time is at or before this (unix seconds)'),
      contract_id: principalFilter('contract_id', isPrincipal, 'principal', 'Only contract calls to this contract'),
      function_name: z.string().optional().describe('Only contract calls of this function'),
      nonce: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('Only transactions with this nonce'),
      exclude_function_args: ExcludeFunctionArgs,
    }),
    response: TxListResponse,
    responseDescription: 'A page of transactions',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const maxHeight = await visibleHeight(sql, q.unanchored);
      const { total, rows } = await lists.recentTxs(
        sql,
        {
          types: q.type ?? [],
          fromAddress: q.from_address,
          toAddress: q.to_address,
          startTime: q.start_time,
          endTime: q.end_time,
          contractId: q.contract_id,
          functionName: q.function_name,
          nonce: q.nonce,
        },
        { limit: q.limit, offset: q.offset, order: q.order, sortBy: q.sort_by, maxHeight, unanchored: q.unanchored },
      );
      return {
        limit: q.limit,
        offset: q.offset,
        total,
        results: rows.map((r) => txJson(r, { excludeFunctionArgs: q.exclude_function_args })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/:tx_id/raw',
    operationId: 'get_raw_transaction_by_id',
    summary: 'Raw transaction',
    description: 'The serialized transaction (mined in any block, or in the mempool).',
    tags: ['Transactions'],
    params: z.object({ tx_id: TxIdParam.describe('Transaction id (without `0x`: a 302 redirect to the `0x` form)') }),
    response: RawTxResponse,
    responseDescription: 'The raw transaction',
    redirect: { status: 302, description: 'The id lacks `0x`: redirect to the `0x` form' },
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      if (!params.tx_id.startsWith('0x')) return raw(redirect(302, `/extended/v1/tx/0x${params.tx_id}/raw`));
      const rawTx = await lists.rawTx(sql, normalizeHash(params.tx_id));
      return rawTx !== undefined ? { raw_tx: rawTx } : notFound('could not find raw transaction by ID');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/block/:block_hash',
    operationId: 'get_transactions_by_block_hash',
    summary: 'Transactions of a block by hash (legacy)',
    description: DEPRECATED_BY_BLOCK,
    tags: ['Transactions'],
    deprecated: true,
    params: z.object({
      block_hash: z
        .string()
        .regex(/^0x[0-9a-fA-F]*$/, { error: '{label} must be a 0x-prefixed hex string' })
        .describe('Block hash (0x-prefixed hex, as stored: lower case)'),
    }),
    query: z.object({ ...paging(20, 200), exclude_function_args: ExcludeFunctionArgs }),
    response: TxListResponse,
    responseDescription: 'A page of the block\'s transactions, last first',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await lists.v1BlockTxs(sql, { hash: params.block_hash.toLowerCase() }, q);
      if (!page.indexBlockHash) notFound('no block found by hash');
      return {
        limit: q.limit,
        offset: q.offset,
        total: page.total,
        results: page.rows.map((r) => txJson(r, { excludeFunctionArgs: q.exclude_function_args })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/block_height/:height',
    operationId: 'get_transactions_by_block_height',
    summary: 'Transactions of a block by height (legacy)',
    description: DEPRECATED_BY_BLOCK,
    tags: ['Transactions'],
    deprecated: true,
    params: z.object({ height: Height.describe('Block height') }),
    query: z.object({ ...paging(20, 50), exclude_function_args: ExcludeFunctionArgs }),
    response: TxListResponse,
    responseDescription: 'A page of the block\'s transactions, last first',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await lists.v1BlockTxs(sql, { height: params.height }, q);
      if (!page.indexBlockHash) notFound(`no block found at height ${params.height}`);
      return {
        limit: q.limit,
        offset: q.offset,
        total: page.total,
        results: page.rows.map((r) => txJson(r, { excludeFunctionArgs: q.exclude_function_args })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/blocks/:height_or_hash/transactions',
    operationId: 'get_transactions_by_block',
    summary: 'Transactions of a block',
    description:
      'The canonical block\'s transactions in block order. As in the reference, an empty page (a block without ' +
      'transactions, `limit=0`, an offset past the end) is a 404.',
    tags: ['Transactions'],
    params: z.object({ height_or_hash: HeightOrHash }),
    query: z.object({
      // no "0 means the default" here: the reference passes limit=0 on to its query (and answers 404)
      limit: z.int().min(0).max(50).default(20).describe('Page size (more than 50: 400)'),
      offset: z.int().min(0).default(0).describe('Index of the first transaction'),
    }),
    response: TxListResponse,
    responseDescription: 'A page of the block\'s transactions',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await lists.v2BlockTxs(sql, blockRef(params.height_or_hash), q);
      if (!page.rows.length) notFound('Block not found');
      return { limit: q.limit, offset: q.offset, total: page.total, results: page.rows.map((r) => txJson(r)) };
    },
  }),
];
