/**
 * Wallet account routes:
 *   GET /extended/v1/address/:principal/transactions                  the principal's txs (principal_stx_txs set)
 *   GET /extended/v1/address/:principal/transactions_with_transfers   …with its STX/FT/NFT transfers in each
 *   GET /extended/v1/address/:principal/assets                        its asset events
 *   GET /extended/v1/address/:principal/stx_inbound                   STX sent to it (transfers, memos, bulk sends)
 *   GET /extended/v1/address/:principal/nonces                        nonces: last executed, pending, next, gaps
 *   GET /extended/v2/addresses/:principal/transactions                txs with per-tx STX sums and event counts
 *   GET /extended/v2/addresses/:principal/transactions/:tx_id/events  its asset events in one tx
 *   GET /extended/v2/addresses/:principal/balances/stx                STX balance (optionally with the mempool)
 */
import { z } from 'zod';
import { badRequest, endpoint, notFound } from '../../endpoint.js';
import { ExcludeFunctionArgs, Offset, PrincipalParam, TxIdParam, Unanchored, normalizeHash, paging, Bool } from '../../schemas/params.js';
import {
  AddressAssetsResponse,
  AddressTransactionEventListResponse,
  AddressTransactionListResponse,
  AddressTxListResponse,
  AddressTxWithTransfersListResponse,
  NoncesResponse,
  StxBalanceV2Response,
  StxInboundListResponse,
} from '../../schemas/accounts.js';
import { addressAssetEventJson, txJson } from '../../../views/txs.js';
import { addressTxWithTransfersRanked, currentNonces, stxBalance } from '../../../answers/index.js';
import { chainTip } from '../../../store/chain-tip.js';
import * as ptx from '../../../store/principal-txs.js';
import * as nonces from '../../../store/nonces.js';
import type { Sql } from '../../../store/sql.js';

/** `until_block` as the reference reads it: a `0x` block hash, else a base-10 height ≥ 1 (parseInt's reading). */
const UntilBlock = z
  .string()
  .transform((s, ctx): number | string | undefined => {
    if (s === '') return undefined;
    if (s.startsWith('0x')) return s.toLowerCase();
    const n = Number.parseInt(s, 10);
    if (Number.isNaN(n) || n < 1) {
      ctx.addIssue({ code: 'custom', message: 'Unexpected integer value for block height path parameter' });
      return z.NEVER;
    }
    // heights are bigints in SQL: past 2^53 no block exists, and the comparison would overflow (a 500)
    if (!Number.isSafeInteger(n)) {
      ctx.addIssue({ code: 'custom', message: '{label} must be a block height <= 9007199254740991' });
      return z.NEVER;
    }
    return n;
  })
  .optional()
  .describe('As of this block: a height (≥ 1) or a `0x` block hash; not with `unanchored=true`');

const HeightFilter = z.int().optional().describe('Only this block height (0: no filter)');

/** The last height a list shows: until_block's block, else the tip (+1 with unanchored: the microblock stream). */
async function listHeight(sql: Sql, until: number | string | undefined, unanchored: boolean): Promise<number> {
  if (typeof until === 'number') return until;
  if (typeof until === 'string') return (await nonces.blockHeightOf(sql, { hash: until })) ?? notFound('block not found with hash');
  const tip = await chainTip(sql);
  return (tip?.block_height ?? 0) + (unanchored ? 1 : 0);
}

/** until_block with unanchored, or with height: the reference's 400s. */
function checkUntil(q: { until_block?: number | string; unanchored: boolean; height?: number }): void {
  if (q.until_block !== undefined && q.unanchored) badRequest("can't handle both 'unanchored=true' and 'until_block' in the same request");
  if (q.height && q.until_block !== undefined) badRequest("can't handle until_block and block_height in the same request");
}

const principalParams = z.object({ principal: PrincipalParam });

export const accountEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/transactions',
    operationId: 'get_account_transactions',
    summary: 'Transactions of a principal',
    description:
      'Sent, sponsored, received (token transfer), calling or deploying the contract, or moving STX to or from it; newest first.',
    tags: ['Accounts'],
    deprecated: true,
    params: principalParams,
    query: z.object({
      ...paging(20, 50),
      height: HeightFilter,
      unanchored: Unanchored,
      until_block: UntilBlock,
      exclude_function_args: ExcludeFunctionArgs,
    }),
    response: AddressTxListResponse,
    responseDescription: 'A page of transactions',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      checkUntil(q);
      const sel = q.height
        ? { atHeight: q.height }
        : { maxHeight: await listHeight(sql, q.until_block, q.unanchored) };
      const { total, rows } = await ptx.principalTxPage(sql, params.principal, { set: 'stx', ...sel, limit: q.limit, offset: q.offset });
      return {
        limit: q.limit,
        offset: q.offset,
        // the reference counts within the page's query: a page past the end says 0
        total: rows.length ? total : 0,
        results: rows.map((r) => txJson(r, { excludeFunctionArgs: q.exclude_function_args })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/transactions_with_transfers',
    operationId: 'get_account_transactions_with_transfers',
    summary: 'Transactions of a principal with its transfers',
    description: 'Each transaction with the STX, FT and NFT transfers of the principal in it. A `height` answers every transaction of that block.',
    tags: ['Accounts'],
    deprecated: true,
    params: principalParams,
    query: z.object({ ...paging(20, 50), height: HeightFilter, unanchored: Unanchored, until_block: UntilBlock }),
    response: AddressTxWithTransfersListResponse,
    responseDescription: 'A page of transactions with transfers',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      checkUntil(q);
      // at one height the reference pages nothing (its query has no LIMIT there)
      const sel = q.height
        ? { atHeight: q.height, limit: undefined }
        : { maxHeight: await listHeight(sql, q.until_block, q.unanchored), limit: q.limit };
      const { total, rows } = await ptx.principalTxPage(sql, params.principal, { set: 'transfers', ...sel, offset: q.offset });
      type Ranked = Awaited<ReturnType<typeof addressTxWithTransfersRanked>> & { row: ptx.PrincipalTxRow };
      const ranked: Ranked[] = [];
      for (const r of rows) ranked.push({ ...(await addressTxWithTransfersRanked(sql, params.principal, r)), row: r });
      // the reference's order: the page (taken by height, microblock sequence, tx index) re-sorted by height and tx
      // index only; ties keep its query's order: microblock sequence, then the principal's highest event index (a
      // tx without such events first) — block 1's genesis txs share tx indexes
      const tieKey = (x: Ranked) => (x.lastEventIndex < 0 ? Infinity : x.lastEventIndex);
      ranked.sort(
        (a, b) =>
          Number(b.row.block_height) - Number(a.row.block_height) ||
          b.row.tx_index - a.row.tx_index ||
          b.row.microblock_sequence - a.row.microblock_sequence ||
          tieKey(b) - tieKey(a),
      );
      const results = ranked.map((x) => x.json);
      return { limit: q.limit, offset: q.offset, total: rows.length ? total : 0, results };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/assets',
    operationId: 'get_account_assets',
    summary: 'Asset events of a principal',
    description: 'STX lock, STX, FT and NFT events sending to or from the principal, newest first.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({ ...paging(20, 100), unanchored: Unanchored, until_block: UntilBlock }),
    response: AddressAssetsResponse,
    responseDescription: 'A page of events',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      checkUntil(q);
      const h = await listHeight(sql, q.until_block, q.unanchored);
      const { total, rows } = await ptx.principalAssetEvents(sql, params.principal, h, q);
      return { limit: q.limit, offset: q.offset, total, results: rows.map((r) => addressAssetEventJson(r.api)) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/stx_inbound',
    operationId: 'get_account_inbound',
    summary: 'Inbound STX transfers',
    description: 'Token transfers to the principal, STX transfer events with a memo, and send-many-memo bulk sends.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({ ...paging(20, 50), height: HeightFilter, unanchored: Unanchored, until_block: UntilBlock }),
    response: StxInboundListResponse,
    responseDescription: 'A page of inbound transfers',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      checkUntil(q);
      const sel = q.height ? { atHeight: q.height } : { maxHeight: await listHeight(sql, q.until_block, q.unanchored) };
      const { total, rows } = await ptx.inboundTransfers(sql, params.principal, { ...sel, limit: q.limit, offset: q.offset });
      return {
        results: rows.map((r) => ({
          sender: r.sender,
          amount: r.amount,
          memo: r.memo ?? '0x',
          block_height: Number(r.block_height),
          tx_id: r.tx_id,
          transfer_type: r.transfer_type,
          tx_index: r.tx_index,
        })),
        total,
        limit: q.limit,
        offset: q.offset,
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/address/:principal/nonces',
    operationId: 'get_account_nonces',
    summary: 'Nonces of a principal',
    description:
      'The last executed and last pending nonce (as origin or as sponsor), the next nonce to use, and the gaps the mempool ' +
      'shows; with `block_height` or `block_hash`, the nonce as of that block.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({
      block_height: z.int().min(1).optional().describe('As of this block height'),
      block_hash: z.string().optional().describe('As of this block (`0x` hash); not with block_height'),
    }),
    response: NoncesResponse,
    responseDescription: 'The nonces',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      if (q.block_height !== undefined && q.block_hash) badRequest('Multiple block query parameters specified: block_height and block_hash');
      if (q.block_height !== undefined || q.block_hash) {
        let ref: { height: number } | { hash: string };
        if (q.block_height !== undefined) ref = { height: q.block_height };
        else {
          if (!q.block_hash!.startsWith('0x')) badRequest("Query parameter 'block_hash' is not a valid block hash hex string");
          ref = { hash: q.block_hash! };
        }
        const h = await nonces.blockHeightOf(sql, 'hash' in ref ? { hash: ref.hash.toLowerCase() } : ref);
        if (h === undefined) notFound(`No block found for ${JSON.stringify(ref)}`);
        const last = await nonces.executedNonceAt(sql, params.principal, h);
        return {
          last_executed_tx_nonce: last,
          possible_next_nonce: last === null ? 0 : last + 1,
          last_mempool_tx_nonce: null,
          detected_missing_nonces: [],
          detected_mempool_nonces: [],
        };
      }
      return currentNonces(sql, params.principal);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/addresses/:principal/transactions',
    operationId: 'get_address_transactions',
    summary: 'Transactions of an address, with its STX flows and event counts',
    description:
      'Confirmed transactions involving the address (as in v1, plus FT/NFT transfers), with the STX it sent (fee ' +
      'included when it paid it) and received and the counts of its STX/FT/NFT transfers, mints and burns in each.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({
      // here the reference takes 0 at its word: an empty page
      limit: z.int().min(0).max(50).default(20).describe('Page size (absent: 20; 0: an empty page; more than 50: 400)'),
      offset: Offset(),
      exclude_function_args: ExcludeFunctionArgs,
    }),
    response: AddressTransactionListResponse,
    responseDescription: 'A page of address transactions',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const p = params.principal;
      const { total, rows } = await ptx.principalTxPage(sql, p, { set: 'all', limit: q.limit, offset: q.offset });
      const counts = await ptx.principalEventCounts(sql, p, rows);
      const key = (r: { tx_id: string; index_block_hash: string; microblock_hash: string }) =>
        `${r.tx_id}/${r.index_block_hash}/${r.microblock_hash}`;
      const byKey = new Map(counts.map((c) => [key(c), c]));
      const results = rows.map((r) => {
        const c = byKey.get(key(r))!;
        const paid = (!r.sponsored && r.sender_address === p) || (r.sponsored && r.sponsor_address === p);
        return {
          // the reference reads no ABI here: contract calls carry no function signature or argument names
          tx: txJson({ ...r, abi: null }, { excludeFunctionArgs: q.exclude_function_args }),
          stx_sent: (BigInt(c.stx_sent) + (paid ? BigInt(r.fee_rate) : 0n)).toString(),
          stx_received: c.stx_received,
          events: {
            stx: { transfer: c.stx_transfer, mint: c.stx_mint, burn: c.stx_burn },
            ft: { transfer: c.ft_transfer, mint: c.ft_mint, burn: c.ft_burn },
            nft: { transfer: c.nft_transfer, mint: c.nft_mint, burn: c.nft_burn },
          },
        };
      });
      return { limit: q.limit, offset: q.offset, total: rows.length ? total : 0, results };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/addresses/:principal/transactions/:tx_id/events',
    operationId: 'get_address_transaction_events',
    summary: "An address's asset events in one transaction",
    description: 'The STX, FT and NFT events of the transaction sent or received by the address, by event index.',
    tags: ['Accounts'],
    params: z.object({
      principal: PrincipalParam,
      // the reference's schema takes a bare id, then fails on it (a 500): here it is a 400
      tx_id: TxIdParam.refine((s) => s.startsWith('0x'), { error: '{label} must start with 0x' }).transform(normalizeHash),
    }),
    query: z.object({ ...paging(20, 50) }),
    response: AddressTransactionEventListResponse,
    responseDescription: 'A page of events',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      if (!(await ptx.txExists(sql, params.tx_id))) notFound('Transaction not found');
      const { total, rows } = await ptx.principalTxEvents(sql, params.principal, params.tx_id, q);
      const results = rows.map((e) => {
        const data: Record<string, unknown> = { type: e.asset_event_type };
        const type = e.event_type === 'stx_asset' ? 'stx' : e.event_type === 'fungible_token_asset' ? 'ft' : 'nft';
        if (type !== 'nft') data.amount = e.amount ?? '0';
        if (type !== 'stx') data.asset_identifier = e.asset_identifier ?? '';
        if (type === 'nft') data.value = (e.api as { asset?: { value?: unknown } }).asset?.value;
        if (e.sender) data.sender = e.sender;
        if (e.recipient) data.recipient = e.recipient;
        return { type, event_index: e.event_index, data };
      });
      return { limit: q.limit, offset: q.offset, total, results };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/addresses/:principal/balances/stx',
    operationId: 'get_principal_stx_balance',
    summary: 'STX balance of a principal',
    description: 'Balance at the tip, lock state and miner rewards; `include_mempool` adds the pending flows.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({ include_mempool: Bool().describe('Add the pending mempool flows (`estimated_balance`, …)') }),
    response: StxBalanceV2Response,
    responseDescription: 'The balance',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const tip = await chainTip(sql);
      const b = await stxBalance(sql, params.principal, tip?.block_height ?? 0, tip?.burn_block_height ?? 0, q.include_mempool, 'v2');
      const out: Record<string, unknown> = {
        balance: b.balance,
        total_miner_rewards_received: b.total_miner_rewards_received,
        lock_tx_id: b.lock_tx_id,
        locked: b.locked,
        lock_height: b.lock_height,
        burnchain_lock_height: b.burnchain_lock_height,
        burnchain_unlock_height: b.burnchain_unlock_height,
      };
      if (q.include_mempool) {
        out.estimated_balance = b.estimated_balance;
        out.pending_balance_inbound = b.pending_balance_inbound;
        out.pending_balance_outbound = b.pending_balance_outbound;
      }
      return out;
    },
  }),
];
