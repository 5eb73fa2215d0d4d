/** GET /extended — service status and chain tip. */
import type { Router } from '../../http/router.js';
import { json, redirect } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import { chainTip, tipMicroblock } from '../../store/chain-tip.js';

export async function statusJson(ctx: ApiContext): Promise<Record<string, unknown>> {
  const [state] = await ctx.sql<
    { pox_v1_unlock_height: number | null; pox_v2_unlock_height: number | null; pox_v3_unlock_height: number | null; tip_burn_block_height: number | null }[]
  >`
    SELECT pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height, tip_burn_block_height FROM chain_state WHERE id = 1`;
  const body: Record<string, unknown> = {
    server_version: ctx.serverVersion,
    status: 'ready',
    pox_v1_unlock_height: state?.pox_v1_unlock_height ?? null,
    pox_v2_unlock_height: state?.pox_v2_unlock_height ?? null,
    pox_v3_unlock_height: state?.pox_v3_unlock_height ?? null,
  };
  const tip = await chainTip(ctx.sql);
  if (tip) {
    const chain_tip: Record<string, unknown> = {
      block_height: tip.block_height,
      block_hash: tip.block_hash,
      index_block_hash: tip.index_block_hash,
      // the reference's chain tip: the last canonical block's burn height, raised by higher burn blocks since
      burn_block_height: state?.tip_burn_block_height ?? tip.burn_block_height,
    };
    const mb = await tipMicroblock(ctx.sql, tip.index_block_hash);
    if (mb) {
      chain_tip.microblock_hash = mb.microblock_hash;
      chain_tip.microblock_sequence = mb.microblock_sequence;
    }
    body.chain_tip = chain_tip;
  }
  return body;
}

export function registerStatusRoutes(router: Router, ctx: ApiContext): void {
  router.get('/', () => redirect(301, '/extended'));
  router.get('/extended/v1/status', () => redirect(301, '/extended'));
  router.get('/extended', async () => json(200, await statusJson(ctx)));
}
