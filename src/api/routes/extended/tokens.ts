/**
 * Token routes:
 *   GET /extended/v1/tokens/nft/holdings             NFTs a principal holds (nft_custody)
 *   GET /extended/v1/tokens/nft/history              events of one NFT
 *   GET /extended/v1/tokens/nft/mints                mint events of an NFT asset class
 *   GET /extended/v1/tokens/ft/:token/holders        holders of a fungible token (or `stx`), richest first
 */
import { z } from 'zod';
import { endpoint } from '../../endpoint.js';
import { Bool, List, PrincipalParam, Unanchored, paging } from '../../schemas/params.js';
import { isPrincipal } from '../../../chain/principal.js';
import { FtHoldersResponse, NftHistoryResponse, NftHoldingsResponse, NftMintsResponse } from '../../schemas/tokens.js';
import * as tokens from '../../../store/tokens.js';
import { visibleHeight } from '../../../store/txs.js';
import { nftHistoryJson, nftHoldingsJson, nftMintsJson } from '../../../views/tokens.js';

/** `<contract principal>::<asset name>`: only the part before `::` is checked, as the reference does. */
const isAssetIdentifier = (s: string) => isPrincipal(s.split('::')[0]);

const AssetIdentifier = z
  .string()
  .refine(isAssetIdentifier, { message: '{label}: invalid or missing asset_identifier' })
  .describe('Asset class identifier `<contract id>::<asset name>`');

/** A hex Clarity value, `0x` optional, normalized to `0x` lower case. */
const ClarityHex = z
  .string()
  .regex(/^(0x)?([0-9a-fA-F]{2})*$/, { error: '{label} must be a hex-encoded Clarity value' })
  .transform((v) => (v.startsWith('0x') ? v : '0x' + v).toLowerCase())
  .describe("Hex of the token's Clarity value (`0x` optional)");

const TxMetadata = Bool().describe('Include the whole transaction (`tx`) instead of its id (`tx_id`)');

export const tokenEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/tokens/nft/holdings',
    operationId: 'get_nft_holdings',
    summary: 'NFTs a principal holds',
    description:
      'The current owner of each NFT is the recipient of its latest canonical event (unconfirmed microblock events ' +
      'included, as the reference does); newest acquisition first. `unanchored` is accepted and changes nothing (the ' +
      "reference's schema does not list it either).",
    tags: ['Non-Fungible Tokens'],
    query: z.object({
      principal: PrincipalParam,
      asset_identifiers: List(AssetIdentifier).optional().describe('Asset classes to keep, repeated or comma-separated'),
      ...paging(50, 200),
      tx_metadata: TxMetadata,
    }),
    response: NftHoldingsResponse,
    responseDescription: 'A page of holdings',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const rows = await tokens.nftHoldings(sql, q.principal, q.asset_identifiers, q);
      const txs = q.tx_metadata ? await tokens.canonicalTxs(sql, rows.map((r) => r.tx_id)) : undefined;
      return { limit: q.limit, offset: q.offset, total: rows[0]?.total ?? 0, results: nftHoldingsJson(rows, txs) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tokens/nft/history',
    operationId: 'get_nft_history',
    summary: 'Events of one NFT',
    description: 'Mints, transfers and burns of one token (asset class + value), newest first.',
    tags: ['Non-Fungible Tokens'],
    query: z.object({
      asset_identifier: AssetIdentifier,
      value: ClarityHex,
      ...paging(50, 200),
      unanchored: Unanchored,
      tx_metadata: TxMetadata,
    }),
    response: NftHistoryResponse,
    responseDescription: 'A page of events',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const rows = await tokens.nftHistory(sql, q.asset_identifier, q.value, await visibleHeight(sql, q.unanchored), q);
      const txs = q.tx_metadata ? await tokens.canonicalTxs(sql, rows.map((r) => r.tx_id)) : undefined;
      return { limit: q.limit, offset: q.offset, total: rows[0]?.total ?? 0, results: nftHistoryJson(rows, txs) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tokens/nft/mints',
    operationId: 'get_nft_mints',
    summary: 'Mints of an NFT asset class',
    tags: ['Non-Fungible Tokens'],
    query: z.object({
      asset_identifier: AssetIdentifier,
      ...paging(50, 200),
      unanchored: Unanchored,
      tx_metadata: TxMetadata,
    }),
    response: NftMintsResponse,
    responseDescription: 'A page of mint events',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      const rows = await tokens.nftMints(sql, q.asset_identifier, await visibleHeight(sql, q.unanchored), q);
      const txs = q.tx_metadata ? await tokens.canonicalTxs(sql, rows.map((r) => r.tx_id)) : undefined;
      return { limit: q.limit, offset: q.offset, total: rows[0]?.total ?? 0, results: nftMintsJson(rows, txs) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/tokens/ft/:token/holders',
    operationId: 'get_ft_holders',
    summary: 'Holders of a fungible token',
    description:
      'Balances over the canonical anchored chain, largest first; equal balances by principal. `stx` lists STX ' +
      'balances. An unknown token has no holders.',
    tags: ['Fungible Tokens'],
    params: z.object({ token: z.string().describe('`stx` or `<contract id>::<asset name>`') }),
    query: z.object(paging(100, 200)),
    response: FtHoldersResponse,
    responseDescription: 'A page of holders',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const h = await tokens.ftHolders(sql, params.token, q);
      return { total_supply: h.total_supply, limit: q.limit, offset: q.offset, total: h.total, results: h.results };
    },
  }),
];
