/** What `/extended` reads: the PoX unlock heights recorded by the ingest, the tip and its unconfirmed microblock. */
import type { Sql } from './connect.js';
import { chainTip, tipMicroblock, type ChainTip } from './chain-tip.js';

export interface StatusRows {
  pox: { pox_v1_unlock_height: number | null; pox_v2_unlock_height: number | null; pox_v3_unlock_height: number | null } | undefined;
  tip: ChainTip | undefined;
  microblock: { microblock_hash: string; microblock_sequence: number } | undefined;
}

export async function statusRows(sql: Sql): Promise<StatusRows> {
  const [pox] = await sql<NonNullable<StatusRows['pox']>[]>`
    SELECT pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height FROM chain_state WHERE id = 1`;
  const tip = await chainTip(sql);
  const microblock = tip ? await tipMicroblock(sql, tip.index_block_hash) : undefined;
  return { pox, tip, microblock };
}
