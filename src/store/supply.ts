/**
 * The unlocked STX supply: a lookup in the per-block running totals of sql/0023_stx_supply.sql, plus the mints and
 * burns of unconfirmed microblocks when the asked height reaches past the tip.
 */
import type { Sql } from './sql.js';
import { chainTip } from './chain-tip.js';

export interface SupplyAt {
  /** micro-STX */
  unlocked: bigint;
  block_height: number;
}

/**
 * The supply at `height` (default: the tip; `unanchored`: tip + 1, whose matured coinbases are still those up to the
 * tip, as the reference counts them).
 */
export async function unlockedSupply(sql: Sql, opts: { height?: number; unanchored: boolean }): Promise<SupplyAt> {
  const tip = (await chainTip(sql))?.block_height ?? 0;
  const height = opts.height ?? (opts.unanchored ? tip + 1 : tip);
  const [row] = await sql<{ unlocked: string; unconfirmed: string }[]>`
    SELECT
      COALESCE((SELECT s.unlocked FROM stx_supply s WHERE s.block_height <= ${height} ORDER BY s.block_height DESC LIMIT 1), 0)::text
        AS unlocked,
      ${
        height > tip
          ? sql`COALESCE((
              SELECT sum(CASE e.asset_event_type WHEN 'mint' THEN e.amount ELSE -e.amount END) FROM events e
              WHERE e.index_block_hash = '' AND e.canonical AND e.microblock_canonical AND e.block_height <= ${height}
                AND e.event_type = 'stx_asset' AND e.asset_event_type IN ('mint', 'burn')), 0)::text`
          : sql`'0'`
      } AS unconfirmed`;
  return { unlocked: BigInt(row.unlocked) + BigInt(row.unconfirmed), block_height: height };
}
