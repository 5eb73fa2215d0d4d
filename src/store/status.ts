/** What `/extended` reads: the PoX unlock heights recorded by the ingest, the tip and its unconfirmed microblock. */
import type { Sql } from './sql.js';
import { chainTip, tipMicroblock, type ChainTip } from './chain-tip.js';

export interface StatusRows {
  pox: { pox_v1_unlock_height: number | null; pox_v2_unlock_height: number | null; pox_v3_unlock_height: number | null } | undefined;
  tip: ChainTip | undefined;
  microblock: { microblock_hash: string; microblock_sequence: number } | undefined;
}

export async function statusRows(sql: Sql): Promise<StatusRows> {
  const [state] = await sql<(NonNullable<StatusRows['pox']> & { tip_burn_block_height: number | null })[]>`
    SELECT pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height, tip_burn_block_height FROM chain_state WHERE id = 1`;
  const pox = state
    ? { pox_v1_unlock_height: state.pox_v1_unlock_height, pox_v2_unlock_height: state.pox_v2_unlock_height, pox_v3_unlock_height: state.pox_v3_unlock_height }
    : undefined;
  const canonical = await chainTip(sql);
  // the reference's chain tip burn height: the last canonical block's, raised by every higher /new_burn_block since
  // (sql/0017_mempool_reference_rules.sql)
  const tip = canonical ? { ...canonical, burn_block_height: state?.tip_burn_block_height ?? canonical.burn_block_height } : undefined;
  const microblock = tip ? await tipMicroblock(sql, tip.index_block_hash) : undefined;
  return { pox, tip, microblock };
}
