import type { ChainUpdate } from '../../chain/types.js';
import { emptyResult, type IngestResult } from './result.js';
import { json, type Tx } from './rows.js';

/** The burn block, in one statement. */
export async function applyBurnBlock(tx: Tx, id: number, u: Extract<ChainUpdate, { kind: 'burn_block' }>): Promise<IngestResult> {
  await tx.unsafe(
    `WITH ins AS (
       INSERT INTO burn_blocks (burn_block_hash, burn_block_height, parent_burn_block_hash, consensus_hash, burn_amount,
         reward_recipients, reward_slot_holders, canonical, seq)
       SELECT r.burn_block_hash, r.burn_block_height, r.parent_burn_block_hash, r.consensus_hash, r.burn_amount,
         r.reward_recipients, r.reward_slot_holders, true, nextval('change_seq')
       FROM json_populate_record(NULL::burn_blocks, $1::text::json) r
       ON CONFLICT DO NOTHING
     )
     -- the reference's chain_tip.burn_block_height: raised by every higher burn block (sql/0017)
     INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, ($1::text::json->>'burn_block_height')::bigint)
     ON CONFLICT (id) DO UPDATE
       SET tip_burn_block_height = GREATEST(chain_state.tip_burn_block_height, EXCLUDED.tip_burn_block_height)`,
    [json(u.burnBlock)],
    { prepare: true },
  );
  return emptyResult(u, id);
}
