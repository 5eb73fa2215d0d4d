/**
 * The newest reference's v3 principal routes (src/api/routes/v3/principals.ts at HEAD), cursor-paginated:
 *   GET /extended/v3/principals/:principal/transactions                          its txs, with its STX flows
 *   GET /extended/v3/principals/:principal/transactions/:tx_id/balance-changes   its balance changes in one tx
 *   GET /extended/v3/principals/:principal/balance-changes?tx_id=…               …in several txs
 *   GET /extended/v3/principals/:principal/balances/stx                          STX: total, spendable, lock, pending
 *   GET /extended/v3/principals/:principal/balances/ft                           positive FT balances, largest first
 *   GET /extended/v3/principals/:principal/balances/ft/:asset_identifier         one FT balance ("0" if never held)
 *   GET /extended/v3/principals/:principal/balances/nft                          NFT instances held
 *   GET /extended/v3/principals/:principal/nonces                                nonces (addresses only)
 *   GET /extended/v3/principals/:principal/mempool/transactions                  its pending txs
 * The reference's /staking and /staking/bonds (pox-5 bonds and sBTC rewards) are not served: nothing here ingests
 * pox-5 (README).
 */
import { z } from 'zod';
import { endpoint } from '../../endpoint.js';
import { List } from '../../schemas/params.js';
import {
  BalanceChangeCursor,
  FtBalanceCursor,
  MempoolCursor,
  NftBalanceCursor,
  PrincipalBalanceChangeList,
  PrincipalFtPosition,
  PrincipalFtPositionList,
  PrincipalMempoolTransactionList,
  PrincipalNftPositionList,
  PrincipalNonces,
  PrincipalStxBalanceV3,
  PrincipalTransactionBalanceChangeList,
  PrincipalTransactionListV3,
  TxBalanceChangeCursor,
  TxCursor,
  V3Address,
  V3AssetIdentifier,
  V3Limit,
  V3Principal,
  V3TxId,
} from '../../schemas/principals-v3.js';
import { keysetPageJson, keysetSlice } from '../../paging.js';
import {
  balanceChangeJson,
  mempoolSummaryJson,
  nftPositionJson,
  noncesV3Json,
  principalTxJson,
  stxBalanceV3Json,
  txBalanceChangeJson,
} from '../../../views/v3.js';
import { currentNonces, stxBalanceParts } from '../../../answers/index.js';
import { chainTip } from '../../../store/chain-tip.js';
import * as balances from '../../../store/balances.js';
import * as v3 from '../../../store/principals-v3.js';
import type { BalanceChangeRow, TxPosition } from '../../../store/principals-v3.js';

const principalParams = z.object({ principal: V3Principal });

const txKey = (p: TxPosition) => `${p.block_height}:${p.microblock_sequence}:${p.tx_index}`;
const assetKey = (r: BalanceChangeRow) => `${r.asset_type}:${r.asset_identifier}`;
/** byte-wise, as the identifiers compare in SQL (COLLATE "C") */
const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
const byAsset = (a: { asset_type: number; asset_identifier: string }, b: { asset_type: number; asset_identifier: string }) =>
  cmp(a.asset_type, b.asset_type) || cmp(a.asset_identifier, b.asset_identifier);
const byPositionDesc = (a: TxPosition, b: TxPosition) =>
  cmp(b.block_height, a.block_height) || cmp(b.microblock_sequence, a.microblock_sequence) || cmp(b.tx_index, a.tx_index);

export const principalV3Endpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/transactions',
    operationId: 'get_principal_transactions',
    summary: 'Transactions of a principal',
    description:
      'Confirmed transactions the principal sent, sponsored, received, deployed or called, or moved STX, FTs or NFTs in ' +
      '(unconfirmed microblock transactions included), newest first; each with how the principal takes part, the STX ' +
      'it sent (the fee it paid included) and received, and which of its balances changed. Paged by cursor ' +
      '`block_height:microblock_sequence:tx_index` (a page starts at or below it; `h:0:0` that names no transaction ' +
      'starts at height h).',
    tags: ['Transactions'],
    params: principalParams,
    query: z.object({ limit: V3Limit(20, 50), cursor: TxCursor.optional() }),
    response: PrincipalTransactionListV3,
    responseDescription: 'A page of transactions',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await v3.principalTxPage(sql, params.principal, q);
      return keysetPageJson(q.limit, page, txKey, (r) => r, principalTxJson);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/transactions/:tx_id/balance-changes',
    operationId: 'get_principal_transaction_balance_changes',
    summary: "A principal's balance changes in a transaction",
    description:
      'What the transaction did to each of the principal\'s balances (STX with the fee it paid, each FT, each NFT class ' +
      'counted in tokens), by asset (STX, FTs, NFTs; then identifier). Paged by cursor `<asset_type>:<asset_identifier>` ' +
      '(1 STX with identifier `stx`, 2 FT, 3 NFT). An unknown transaction has none.',
    tags: ['Transactions'],
    params: z.object({ principal: V3Principal, tx_id: V3TxId }),
    query: z.object({ limit: V3Limit(20, 50), cursor: TxBalanceChangeCursor.optional() }),
    response: PrincipalTransactionBalanceChangeList,
    responseDescription: 'A page of balance changes',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const rows = await v3.balanceChanges(sql, params.principal, [params.tx_id]);
      const page = keysetSlice(rows, byAsset, q, (r, c) => byAsset(r, c) >= 0);
      return keysetPageJson(q.limit, page, assetKey, (r) => r, txBalanceChangeJson);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/balance-changes',
    operationId: 'get_principal_balance_changes',
    summary: "A principal's balance changes in several transactions",
    description:
      'The balance changes of the principal in the given transactions as one list, newest transaction first, then by ' +
      'asset. `tx_id` repeated or comma-separated (1 to 50). Paged by cursor ' +
      '`<block_height>:<microblock_sequence>:<tx_index>:<asset_type>:<asset_identifier>`.',
    tags: ['Transactions'],
    params: principalParams,
    query: z.object({
      limit: V3Limit(20, 50),
      cursor: BalanceChangeCursor.optional(),
      tx_id: List(V3TxId).min(1).max(50).describe('Transaction ids, repeated (`?tx_id=A&tx_id=B`) or comma-separated (`?tx_id=A,B`)'),
    }),
    response: PrincipalBalanceChangeList,
    responseDescription: 'A page of balance changes',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const rows = await v3.balanceChanges(sql, params.principal, [...new Set(q.tx_id)]);
      const order = (a: BalanceChangeRow, b: BalanceChangeRow) => byPositionDesc(a, b) || byAsset(a, b);
      const page = keysetSlice(rows, order, q, (r, c) => byPositionDesc(r, c) > 0 || (byPositionDesc(r, c) === 0 && byAsset(r, c) >= 0));
      return keysetPageJson(q.limit, page, (r) => `${txKey(r)}:${assetKey(r)}`, (r) => r, balanceChangeJson);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/balances/stx',
    operationId: 'get_principal_balances_stx',
    summary: 'STX balance of a principal',
    description:
      'Total and spendable (total minus locked) balance at the chain tip, the STX lock if any (with the PoX version ' +
      'that made it), and, when pending mempool transactions move STX to or from it, the estimated spendable balance.',
    tags: ['Accounts'],
    params: principalParams,
    response: PrincipalStxBalanceV3,
    responseDescription: 'The balance',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => {
      const tip = await chainTip(sql);
      const parts = await stxBalanceParts(sql, params.principal, tip?.block_height ?? 0, tip?.burn_block_height ?? 0, true);
      return stxBalanceV3Json(parts);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/balances/ft',
    operationId: 'get_principal_balances_ft',
    summary: 'FT balances of a principal',
    description:
      'Positive fungible-token balances over the canonical anchored chain, largest first (ties by identifier). Paged ' +
      'by cursor `balance:asset_identifier`.',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({ limit: V3Limit(100, 200), cursor: FtBalanceCursor.optional() }),
    response: PrincipalFtPositionList,
    responseDescription: 'A page of balances',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await v3.ftBalancePage(sql, params.principal, q);
      return keysetPageJson(
        q.limit,
        page,
        (k) => `${k.balance}:${k.token}`,
        (r) => r,
        (r) => ({ asset_identifier: r.token, balance: r.balance }),
      );
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/balances/ft/:asset_identifier',
    operationId: 'get_principal_balance_ft',
    summary: 'One FT balance of a principal',
    description: 'Over the canonical anchored chain; `"0"` for a token the principal does not hold.',
    tags: ['Accounts'],
    params: z.object({ principal: V3Principal, asset_identifier: V3AssetIdentifier }),
    response: PrincipalFtPosition,
    responseDescription: 'The balance',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => ({
      asset_identifier: params.asset_identifier,
      balance: (await balances.ftBalance(sql, params.principal, params.asset_identifier)) ?? '0',
    }),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/balances/nft',
    operationId: 'get_principal_balances_nft',
    summary: 'NFT instances held by a principal',
    description:
      'The NFTs the principal owns over the canonical anchored chain, by asset identifier then value. Paged by cursor ' +
      '`value:asset_identifier` (value as `0x` hex).',
    tags: ['Accounts'],
    params: principalParams,
    query: z.object({ limit: V3Limit(100, 200), cursor: NftBalanceCursor.optional() }),
    response: PrincipalNftPositionList,
    responseDescription: 'A page of NFTs',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await v3.nftHoldingPage(sql, params.principal, q);
      return keysetPageJson(q.limit, page, (k) => `${k.value_hex}:${k.asset_identifier}`, (r) => r, nftPositionJson);
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/nonces',
    operationId: 'get_principal_nonces',
    summary: 'Nonces of an address',
    description:
      'The nonce to use next, the last confirmed one, and the mempool\'s: its last pending nonce, the pending nonces ' +
      'between the two and the missing ones. Contract principals have no nonces (400).',
    tags: ['Accounts'],
    params: z.object({ principal: V3Address }),
    response: PrincipalNonces,
    responseDescription: 'The nonces',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => noncesV3Json(await currentNonces(sql, params.principal)),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v3/principals/:principal/mempool/transactions',
    operationId: 'get_principal_mempool_transactions',
    summary: 'Pending transactions of a principal',
    description:
      'Pending mempool transactions the principal sent, receives (token transfer), deploys or calls, newest receipt ' +
      'first. Paged by cursor `receipt_time:tx_id`.',
    tags: ['Transactions'],
    params: principalParams,
    query: z.object({ limit: V3Limit(20, 50), cursor: MempoolCursor.optional() }),
    response: PrincipalMempoolTransactionList,
    responseDescription: 'A page of pending transactions',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const page = await v3.mempoolPage(sql, params.principal, q);
      return keysetPageJson(q.limit, page, (k) => `${k.receipt_time}:${k.tx_id}`, (r) => r, mempoolSummaryJson);
    },
  }),
];
