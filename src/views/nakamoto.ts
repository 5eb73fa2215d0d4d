/** Burn block and block-time rows → the reference API's JSON. Pure functions, no I/O. */
import { isoTime } from './txs.js';
import type { BurnBlockDbRow } from '../store/burn-blocks.js';
import type { AverageBlockTimesRow } from '../store/tenures.js';

/** PostgreSQL numeric text → a number with at most 2 decimals, rounded as the reference does (JS toFixed). */
export function seconds2(v: string | null): number {
  return Number.parseFloat(Number.parseFloat(v ?? '0').toFixed(2));
}

export function burnBlockJson(b: BurnBlockDbRow) {
  return {
    burn_block_time: b.burn_block_time,
    burn_block_time_iso: isoTime(b.burn_block_time),
    burn_block_hash: b.burn_block_hash,
    burn_block_height: b.burn_block_height,
    stacks_blocks: b.stacks_blocks,
    // an integer in the reference's schema: its serializer truncates the 2-decimal mean (3.86 → 3)
    avg_block_time: Math.trunc(seconds2(b.avg_block_time)),
    total_tx_count: Number.parseInt(b.total_tx_count, 10),
  };
}

export function averageBlockTimesJson(r: AverageBlockTimesRow | undefined) {
  return {
    last_1h: seconds2(r?.last_1h ?? null),
    last_24h: seconds2(r?.last_24h ?? null),
    last_7d: seconds2(r?.last_7d ?? null),
    last_30d: seconds2(r?.last_30d ?? null),
  };
}
