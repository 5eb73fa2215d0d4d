/**
 * Transaction lookups and the mempool:
 *   GET /extended/v1/tx/:tx_id, /tx/multiple, /tx/mempool, /tx/mempool/stats, /address/:principal/mempool.
 */
import { z } from 'zod';
import { endpoint, notFound, raw, badRequest, networkChecked } from '../../endpoint.js';
import { redirect } from '../../../http/response.js';
import {
  ExcludeFunctionArgs,
  LoosePrincipalParam,
  List,
  principalProblem,
  TxIdParam,
  Unanchored,
  normalizeHash,
  paging,
} from '../../schemas/params.js';
import { TX_ID_RE } from '../../../chain/principal.js';
import { MempoolListResponse, MempoolStatsResponse, TxLookupResponse, TxMultipleResponse } from '../../schemas/txs.js';
import { mempoolTxJson } from '../../../views/txs.js';
import * as txs from '../../../store/txs.js';
import { lookupTx, lookupTxsCanonical } from '../../../answers/index.js';
import { offsetPageJson } from '../../paging.js';

const eventPage = {
  event_limit: z
    .int()
    .min(0)
    .max(100)
    .default(20)
    .transform((v) => v || 20)
    .describe('Events to embed (0 or absent: 20; more than 100: 400)'),
  event_offset: z.int().min(0).default(0).describe('Index of the first embedded event'),
};

/** `address` / `sender_address` / `recipient_address` on /tx/mempool: a real principal of the database's network. */
function mempoolAddress(name: string, description: string) {
  return networkChecked(
    z.string().superRefine((s, ctx) => {
      const problem = principalProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
    }),
  )
    .optional()
    .describe(description);
}

const STATS_TYPES = ['token_transfer', 'smart_contract', 'contract_call', 'poison_microblock'] as const;

function mempoolStatsJson(rows: txs.MempoolStatsRow[]): Record<string, Record<string, unknown>> {
  const byType = new Map(rows.map((r) => [r.tx_type, r]));
  const out: Record<string, Record<string, unknown>> = { tx_type_counts: {}, tx_simple_fee_averages: {}, tx_ages: {}, tx_byte_sizes: {} };
  const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  const pct = (a?: number | null, b?: number | null, c?: number | null, d?: number | null) => ({ p25: num(a), p50: num(b), p75: num(c), p95: num(d) });
  for (const t of STATS_TYPES) {
    const r = byType.get(t);
    out.tx_type_counts[t] = r?.n ?? 0;
    out.tx_simple_fee_averages[t] = pct(r?.f25, r?.f50, r?.f75, r?.f95);
    out.tx_ages[t] = pct(r?.a25, r?.a50, r?.a75, r?.a95);
    out.tx_byte_sizes[t] = pct(r?.s25, r?.s50, r?.s75, r?.s95);
  }
  return out;
}

export const txEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/mempool',
    operationId: 'get_mempool_transaction_list',
    summary: 'Pending transactions',
    tags: ['Mempool'],
    query: z.object({
      ...paging(20, 50),
      sender_address: mempoolAddress('sender_address', 'Only transactions sent by this principal'),
      recipient_address: mempoolAddress('recipient_address', 'Only token transfers to this principal'),
      address: mempoolAddress(
        'address',
        'Transactions involving this principal (sender, recipient or contract); not combinable with the others',
      ),
      order_by: z.enum(['age', 'size', 'fee']).default('age').describe('Sort key'),
      order: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
      unanchored: Unanchored.describe('Leave out transactions already in an unconfirmed microblock'),
      exclude_function_args: ExcludeFunctionArgs,
    }),
    response: MempoolListResponse,
    responseDescription: 'A page of pending transactions',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      if (q.address !== undefined && (q.sender_address !== undefined || q.recipient_address !== undefined)) {
        badRequest('The "address" filter cannot be specified with other address filters');
      }
      const { total, rows } = await txs.pendingMempool(
        sql,
        { address: q.address, sender: q.sender_address, recipient: q.recipient_address },
        { unanchored: q.unanchored, limit: q.limit, offset: q.offset, orderBy: q.order_by, order: q.order },
      );
      return offsetPageJson(q, total, rows.map((r) => mempoolTxJson(r, { status: 'pending', excludeFunctionArgs: q.exclude_function_args })));
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/mempool/stats',
    operationId: 'get_mempool_stats',
    summary: 'Mempool statistics',
    description: 'Counts and p25/p50/p75/p95 of fee rates, ages (in blocks) and sizes of pending transactions, per type.',
    tags: ['Mempool'],
    response: MempoolStatsResponse,
    responseDescription: 'Statistics',
    errors: [503],
    handler: async (_input, { sql }) => mempoolStatsJson(await txs.mempoolStatsRows(sql)),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/multiple',
    operationId: 'get_tx_list_details',
    summary: 'Several transactions by id',
    description: 'One entry per requested id: `found` and the transaction (mined or mempool). 404 when none is found.',
    tags: ['Transactions'],
    query: z.object({
      tx_id: List(
        z
          .string()
          .regex(TX_ID_RE, { error: `{label} must match pattern "^(0x)?[a-fA-F0-9]{64}$"`, abort: true })
          .refine((s) => s.startsWith('0x'), { error: 'Hex string is missing the "0x" prefix' }),
      )
        .min(1)
        .describe('Transaction ids, repeated (`?tx_id=0x…&tx_id=0x…`) or one comma-separated value; each needs `0x`'),
      ...eventPage,
      unanchored: Unanchored,
      exclude_function_args: ExcludeFunctionArgs,
    }),
    response: TxMultipleResponse,
    responseDescription: 'Lookup results keyed by id',
    errors: [400, 404, 503],
    handler: async ({ query: q }, { sql }) => {
      const ids = q.tx_id;
      const byId = await lookupTxsCanonical(sql, [...new Set(ids.map((id) => id.toLowerCase()))], {
        unanchored: q.unanchored,
        events: { limit: q.event_limit, offset: q.event_offset },
      });
      const out: Record<string, unknown> = {};
      let found = 0;
      for (const id of ids) {
        if (id in out) continue;
        const tx = byId.get(id.toLowerCase());
        if (tx) found++;
        out[id] = tx ? { found: true, result: tx } : { found: false, result: { tx_id: id } };
      }
      if (found === 0) notFound('could not find any of the transactions by ID');
      return out;
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/:tx_id',
    operationId: 'get_transaction_by_id',
    summary: 'Transaction by id',
    description: 'A mined transaction with its events (paged), or a mempool one (pending or dropped).',
    tags: ['Transactions'],
    params: z.object({ tx_id: TxIdParam.describe('Transaction id (without `0x`: a 302 redirect to the `0x` form)') }),
    query: z.object({ ...eventPage, unanchored: Unanchored, exclude_function_args: ExcludeFunctionArgs }),
    response: TxLookupResponse,
    responseDescription: 'The transaction',
    redirect: { status: 302, description: 'The id lacks `0x`: redirect to the `0x` form (query kept)' },
    errors: [400, 404, 503],
    handler: async ({ params, query: q, req }, { sql }) => {
      if (!params.tx_id.startsWith('0x')) {
        return raw(redirect(302, `/extended/v1/tx/0x${params.tx_id}${req.rawQuery ? '?' + req.rawQuery : ''}`));
      }
      const max = await txs.visibleHeight(sql, q.unanchored);
      const tx = await lookupTx(sql, normalizeHash(params.tx_id), {
        max,
        events: { limit: q.event_limit, offset: q.event_offset },
        excludeFunctionArgs: q.exclude_function_args,
        // the reference's searchTx looks mined txs up among canonical placements only (getTxListDetails), so a tx
        // mined only in orphaned blocks and not in the mempool is not found (its non-canonical fallback never fires)
        includeNonCanonical: false,
      });
      return tx ?? notFound('could not find transaction by ID');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/mempool',
    operationId: 'get_address_mempool_transactions',
    summary: 'Pending transactions of a principal',
    tags: ['Mempool'],
    params: z.object({ principal: LoosePrincipalParam('Invalid query parameter, params/principal is not a valid principal') }),
    query: z.object({ ...paging(20, 50), unanchored: Unanchored, exclude_function_args: ExcludeFunctionArgs }),
    response: MempoolListResponse,
    responseDescription: 'A page of pending transactions',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const { total, rows } = await txs.pendingMempool(
        sql,
        { address: params.principal },
        { unanchored: q.unanchored, limit: q.limit, offset: q.offset, orderBy: 'age', order: 'desc' },
      );
      return offsetPageJson(q, total, rows.map((r) => mempoolTxJson(r, { status: 'pending', excludeFunctionArgs: q.exclude_function_args })));
    },
  }),
];
