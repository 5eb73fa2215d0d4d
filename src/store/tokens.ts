/**
 * Token reads (sql/0045_token_tables.sql): NFT holdings (nft_custody + the unconfirmed microblock stream), NFT history
 * and mints (events), FT / STX holders (ft_balances / stx_totals), and the txs those answers embed. Rows only.
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { TxDbRow } from './txs.js';

export interface Page {
  limit: number;
  offset: number;
}

export interface HoldingRow {
  asset_identifier: string;
  value_hex: string;
  block_height: number;
  tx_id: string;
  total: number;
}

/**
 * The owner each NFT has after the unconfirmed microblock stream (its latest canonical event there, for the keys it
 * touches), as rows (asset_identifier, value_hex, owner, tx_id, block_height, microblock_sequence, tx_index,
 * event_index): what nft_custody (anchored chain only) is overridden by where the reference's custody took microblock
 * events as they arrived. The rule is the view nft_unconfirmed_owners (sql/functions/tokens.sql).
 */
export function unconfirmedNftOwners(sql: Sql) {
  return sql`SELECT * FROM nft_unconfirmed_owners`;
}

/**
 * How many NFTs `principal` holds (of `assets`, when given), as an SQL expression: nft_held_count
 * (sql/functions/tokens.sql), the maintained custody counts corrected by the unconfirmed stream, planned once per
 * connection.
 */
export function heldCount(sql: Sql, principal: string, assets?: string[]) {
  return sql`nft_held_count(${principal}, ${assets ?? null}::text[])`;
}

/**
 * The NFTs `principal` holds, newest acquisition first: nft_custody (canonical anchored chain), overridden by the
 * unconfirmed microblock stream's latest event for a key (the reference's custody table takes microblock events as
 * they arrive). nft_holdings_page (sql/functions/tokens.sql) reads the newest limit + offset custody rows in index order
 * (nft_custody_owner) beside the stream's few rows, with a plan kept for the connection (planning it cost more than
 * running it); `total` is heldCount's.
 */
export async function nftHoldings(sql: Sql, principal: string, assets: string[] | undefined, page: Page): Promise<HoldingRow[]> {
  return sql<HoldingRow[]>`
    SELECT asset_identifier, value_hex, block_height, tx_id, total
    FROM nft_holdings_page(${principal}, ${assets ?? null}::text[], ${page.limit}, ${page.offset})`;
}

export interface NftEventRow {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  event_index: number;
  asset_event_type: string;
  sender: string | null;
  recipient: string | null;
  value_hex: string;
  total: number;
}

/** The canonical events of one NFT up to `maxHeight`, newest first. */
export async function nftHistory(sql: Sql, asset: string, valueHex: string, maxHeight: number, page: Page): Promise<NftEventRow[]> {
  return sql<NftEventRow[]>`
    SELECT e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index, e.asset_event_type, e.sender, e.recipient,
      e.value_hex, (count(*) OVER ())::int AS total
    FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.asset_identifier = ${asset} AND e.value_hex = ${valueHex} AND e.event_type = 'non_fungible_token_asset'
      AND e.canonical AND e.microblock_canonical AND e.block_height <= ${maxHeight}
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/**
 * The canonical mint events of an asset class up to `maxHeight`, newest first. `total`: the maintained count of its
 * anchored mints (sql/0103_list_counts.sql) plus its unconfirmed microblock mints up to `maxHeight`.
 */
export async function nftMints(sql: Sql, asset: string, maxHeight: number, page: Page): Promise<NftEventRow[]> {
  return sql<NftEventRow[]>`
    SELECT e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index, e.asset_event_type, e.sender, e.recipient,
      e.value_hex,
      ((SELECT COALESCE(max(n), 0) FROM nft_mint_counts WHERE asset_identifier = ${asset})
        + (SELECT count(*) FROM events u
           WHERE u.index_block_hash = '' AND u.asset_identifier = ${asset} AND u.event_type = 'non_fungible_token_asset'
             AND u.asset_event_type = 'mint' AND u.canonical AND u.microblock_canonical AND u.block_height <= ${maxHeight}))::int AS total
    FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.asset_identifier = ${asset} AND e.event_type = 'non_fungible_token_asset' AND e.asset_event_type = 'mint'
      AND e.canonical AND e.microblock_canonical AND e.block_height <= ${maxHeight}
      -- only the heights of the newest limit + offset mints (read in events_nft_mints order): the page's rows are
      -- there, with every row that ties with them on height, whatever the order within a height
      AND e.block_height >= (
        SELECT min(block_height) FROM (
          SELECT block_height FROM events
          WHERE asset_identifier = ${asset} AND event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
            AND canonical AND microblock_canonical AND block_height <= ${maxHeight}
          ORDER BY block_height DESC LIMIT ${page.limit + page.offset}
        ) newest)
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** The canonical txs with these ids (for `tx_metadata`), by id. */
export async function canonicalTxs(sql: Sql, txIds: string[]): Promise<Map<string, TxDbRow>> {
  if (!txIds.length) return new Map();
  const rows = await sql<TxDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ANY(${[...new Set(txIds)]}) AND x.canonical AND x.microblock_canonical
    ORDER BY x.block_height DESC`;
  const out = new Map<string, TxDbRow>();
  for (const r of rows) if (!out.has(r.tx_id)) out.set(r.tx_id, r);
  return out;
}

export interface HolderPage {
  total: number;
  total_supply: string;
  results: { address: string; balance: string }[];
}

/**
 * Holders of a fungible token (`stx`: every principal with STX totals), richest first; ties by principal (the
 * reference leaves them unordered). A token's `total` (its ft_balances rows, zero balances included) and supply are
 * the maintained figures of ft_token_totals (sql/0112).
 */
export async function ftHolders(sql: Sql, token: string, page: Page): Promise<HolderPage> {
  if (token === 'stx') {
    const [agg] = await sql<{ total: number; supply: string }[]>`
      SELECT count(*)::int AS total, COALESCE(sum(received - sent - fees + rewards), 0)::text AS supply FROM stx_totals`;
    const rows = await sql<{ address: string; balance: string }[]>`
      SELECT principal AS address, (received - sent - fees + rewards)::text AS balance FROM stx_totals
      ORDER BY (received - sent - fees + rewards) DESC, principal
      LIMIT ${page.limit} OFFSET ${page.offset}`;
    return holderPage(agg, rows);
  }
  const [agg] = await sql<{ total: number; supply: string }[]>`
    SELECT COALESCE(max(holders), 0)::int AS total, COALESCE(max(supply), 0)::text AS supply FROM ft_token_totals WHERE asset_identifier = ${token}`;
  const rows = await sql<{ address: string; balance: string }[]>`
    SELECT principal AS address, balance::text AS balance FROM ft_balances
    WHERE asset_identifier = ${token}
    ORDER BY ft_balances.balance DESC, principal
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  return holderPage(agg, rows);
}

/** A page past the end reports no total and no supply, as the reference's windowed query does. */
function holderPage(agg: { total: number; supply: string }, rows: { address: string; balance: string }[]): HolderPage {
  return rows.length ? { total: agg.total, total_supply: agg.supply, results: rows } : { total: 0, total_supply: '0', results: [] };
}
