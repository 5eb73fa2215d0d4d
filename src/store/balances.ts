/**
 * Balance reads over the maintained token tables (sql/0045_token_tables.sql): a principal's FT balances and NFT counts
 * at a height (the maintained totals, plus the unconfirmed microblock rows up to that height, minus the canonical
 * anchored rows above it), its positive FT balances page, one FT balance. Rows only.
 */
import type { Sql } from './sql.js';

export interface AssetTotalsRow {
  asset_identifier: string;
  received: string;
  sent: string;
}

/** The maintained table and event type of each kind of asset total; an NFT event counts 1. */
const ASSET_TOTALS = {
  ft: { table: 'ft_balances', eventType: 'fungible_token_asset', amount: 'amount' },
  nft: { table: 'nft_totals', eventType: 'non_fungible_token_asset', amount: '1' },
} as const;

/**
 * Received / sent per asset as of stacks height `height`: the maintained totals + unconfirmed rows at or below
 * `height` − canonical anchored rows above it (an `until_block` below the tip reads only the rows above it, not the
 * history). Assets whose canonical events all went away are left out.
 */
function assetTotalsAt(sql: Sql, kind: keyof typeof ASSET_TOTALS, principal: string, height: number): Promise<AssetTotalsRow[]> {
  const k = ASSET_TOTALS[kind];
  const table = sql.unsafe(k.table);
  const amount = sql.unsafe(k.amount);
  return sql<AssetTotalsRow[]>`
    WITH d AS (
      SELECT asset_identifier, received, sent FROM ${table} WHERE principal = ${principal}
      UNION ALL
      -- four branches, each on its own index (an OR over them scanned every event the principal ever had); a row that
      -- is both (a transfer to oneself) counts in both, as received in one and as sent in the other
      SELECT asset_identifier, ${amount}, 0 FROM events
      WHERE recipient = ${principal} AND index_block_hash = '' AND event_type = ${k.eventType}
        AND canonical AND microblock_canonical AND block_height <= ${height}
      UNION ALL
      SELECT asset_identifier, 0, ${amount} FROM events
      WHERE sender = ${principal} AND index_block_hash = '' AND event_type = ${k.eventType}
        AND canonical AND microblock_canonical AND block_height <= ${height}
      UNION ALL
      SELECT asset_identifier, -${amount}, 0 FROM events
      WHERE recipient = ${principal} AND canonical AND microblock_canonical AND block_height > ${height}
        AND index_block_hash <> '' AND event_type = ${k.eventType}
      UNION ALL
      SELECT asset_identifier, 0, -${amount} FROM events
      WHERE sender = ${principal} AND canonical AND microblock_canonical AND block_height > ${height}
        AND index_block_hash <> '' AND event_type = ${k.eventType}
    )
    SELECT asset_identifier, sum(received)::text AS received, sum(sent)::text AS sent
    FROM d GROUP BY asset_identifier
    HAVING sum(received) <> 0 OR sum(sent) <> 0`;
}

/** FT received / sent per asset as of `height` (ft_balances, see assetTotalsAt). */
export function ftTotalsAt(sql: Sql, principal: string, height: number): Promise<AssetTotalsRow[]> {
  return assetTotalsAt(sql, 'ft', principal, height);
}

/** NFT events received / sent per asset as of `height` (nft_totals, see assetTotalsAt). */
export function nftTotalsAt(sql: Sql, principal: string, height: number): Promise<AssetTotalsRow[]> {
  return assetTotalsAt(sql, 'nft', principal, height);
}

export interface FtBalanceRow {
  token: string;
  balance: string;
  total: number;
}

/**
 * The principal's positive FT balances (canonical anchored chain), by token name case-insensitively: the page in the
 * order of ft_balances_principal_name (sql/0104), `total` from the principal's index entries (0 for an empty page).
 */
export async function positiveFtBalances(sql: Sql, principal: string, limit: number, offset: number): Promise<FtBalanceRow[]> {
  const [rows, [count]] = await Promise.all([
    sql<Omit<FtBalanceRow, 'total'>[]>`
      SELECT asset_identifier AS token, balance::text AS balance
      FROM ft_balances WHERE principal = ${principal} AND balance > 0
      ORDER BY lower(asset_identifier), asset_identifier
      LIMIT ${limit} OFFSET ${offset}`,
    // the maintained count of the principal's positive balances (ft_principal_counts, sql/0112)
    sql<{ n: number }[]>`SELECT COALESCE((SELECT positive FROM ft_principal_counts WHERE principal = ${principal}), 0)::int AS n`,
  ]);
  return rows.map((r) => ({ ...r, total: count.n }));
}

/** One balance (canonical anchored chain); `stx` reads the STX totals. undefined: the principal never held it. */
export async function ftBalance(sql: Sql, principal: string, token: string): Promise<string | undefined> {
  if (token === 'stx') {
    const [r] = await sql<{ balance: string }[]>`
      SELECT (received - sent - fees + rewards)::text AS balance FROM stx_totals WHERE principal = ${principal}`;
    return r?.balance;
  }
  const [r] = await sql<{ balance: string }[]>`
    SELECT balance::text AS balance FROM ft_balances WHERE principal = ${principal} AND asset_identifier = ${token}`;
  return r?.balance;
}
