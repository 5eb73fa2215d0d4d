/** Burnchain rewards and reward slot holders (sql/0030_burnchain_rewards.sql): canonical rows, newest first. */
import type { Sql } from './sql.js';

export interface RewardRow {
  burn_block_hash: string;
  burn_block_height: string;
  burn_amount: string;
  reward_recipient: string;
  reward_amount: string;
  reward_index: number;
}

export interface SlotHolderRow {
  burn_block_hash: string;
  burn_block_height: string;
  address: string;
  slot_index: number;
  total: number;
}

export function rewards(sql: Sql, q: { recipient?: string; limit: number; offset: number }): Promise<RewardRow[]> {
  return sql<RewardRow[]>`
    SELECT burn_block_hash, burn_block_height::text, burn_amount::text, reward_recipient, reward_amount::text, reward_index
    FROM burnchain_rewards
    WHERE canonical ${q.recipient !== undefined ? sql`AND reward_recipient = ${q.recipient}` : sql``}
    -- qualified: the bare name is the text output column (a text sort puts 99999 above 100000, and no index serves it)
    ORDER BY burnchain_rewards.burn_block_height DESC, reward_index DESC
    LIMIT ${q.limit} OFFSET ${q.offset}`;
}

export async function rewardsTotal(sql: Sql, recipient: string): Promise<string> {
  const [row] = await sql<{ amount: string | null }[]>`
    SELECT sum(reward_amount)::text AS amount FROM burnchain_rewards WHERE canonical AND reward_recipient = ${recipient}`;
  return row?.amount ?? '0';
}

/** A page of slot holders; `total` counts the matching rows (0 when the page is empty, as the reference's window count). */
export function slotHolders(sql: Sql, q: { address?: string; limit: number; offset: number }): Promise<SlotHolderRow[]> {
  return sql<SlotHolderRow[]>`
    SELECT burn_block_hash, burn_block_height::text, address, slot_index, (count(*) OVER ())::integer AS total
    FROM reward_slot_holders
    WHERE canonical ${q.address !== undefined ? sql`AND address = ${q.address}` : sql``}
    ORDER BY reward_slot_holders.burn_block_height DESC, slot_index DESC
    LIMIT ${q.limit} OFFSET ${q.offset}`;
}
