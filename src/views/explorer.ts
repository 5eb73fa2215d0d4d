/** Pure serializers of the explorer views (microblocks, supply, search). */
import { isoTime } from './txs.js';
import type { MicroblockDbRow } from '../store/microblocks.js';

export function microblockJson(m: MicroblockDbRow, txs: string[]): Record<string, unknown> {
  return {
    canonical: m.canonical,
    microblock_canonical: m.microblock_canonical,
    microblock_hash: m.microblock_hash,
    microblock_sequence: m.microblock_sequence,
    microblock_parent_hash: m.microblock_parent_hash,
    block_height: Number(m.block_height),
    parent_block_height: m.parent_block_height === null ? Number(m.block_height) - 1 : Number(m.parent_block_height),
    parent_block_hash: m.parent_block_hash ?? '0x',
    parent_burn_block_hash: m.parent_burn_block_hash,
    parent_burn_block_time: Number(m.parent_burn_block_time),
    parent_burn_block_time_iso: m.parent_burn_block_time > 0 ? isoTime(Number(m.parent_burn_block_time)) : '',
    parent_burn_block_height: Number(m.parent_burn_block_height),
    block_hash: m.block_hash || '0x',
    txs,
  };
}

/**
 * The reference's Microblock as its Socket.IO and JSON-RPC messages carry it: microblockJson's fields, with `txs` and
 * the parent burn block fields in the order the reference sends them there.
 */
export function microblockPushJson(m: MicroblockDbRow, txs: string[]): Record<string, unknown> {
  const j = microblockJson(m, txs);
  return Object.fromEntries(PUSH_MICROBLOCK_KEYS.map((k) => [k, j[k]]));
}

const PUSH_MICROBLOCK_KEYS = [
  'canonical',
  'microblock_canonical',
  'microblock_hash',
  'microblock_sequence',
  'microblock_parent_hash',
  'block_height',
  'parent_block_height',
  'parent_block_hash',
  'block_hash',
  'txs',
  'parent_burn_block_height',
  'parent_burn_block_hash',
  'parent_burn_block_time',
  'parent_burn_block_time_iso',
] as const;

/** Groups (microblock × tx) rows, in row order, into microblocks with their tx ids. */
export function groupMicroblockRows(rows: (MicroblockDbRow & { tx_id: string })[]): Record<string, unknown>[] {
  const out: { row: MicroblockDbRow; txs: string[] }[] = [];
  const byHash = new Map<string, { row: MicroblockDbRow; txs: string[] }>();
  for (const r of rows) {
    let m = byHash.get(r.microblock_hash);
    if (!m) {
      m = { row: r, txs: [] };
      byHash.set(r.microblock_hash, m);
      out.push(m);
    }
    m.txs.push(r.tx_id);
  }
  return out.map((m) => microblockJson(m.row, m.txs));
}

/** micro-STX → STX with 6 decimals (`1234.500000`). */
export function microStxToStx(micro: bigint): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  return `${neg ? '-' : ''}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** An STX amount string with comma thousands separators in its integer part. */
export function withThousands(stx: string): string {
  const [int, frac] = stx.split('.');
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac !== undefined ? '.' + frac : '');
}

/** Supply in 2050, micro-STX (the reference's constant). */
export const TOTAL_STX_2050_MICRO = 2_318_000_000n * 1_000_000n;

export interface SupplyFigures {
  unlocked_percent: string;
  total_stx: string;
  total_stx_year_2050: string;
  unlocked_stx: string;
}

/**
 * The reference's supply figures: the total is the unlocked supply itself, so the percentage is 100.00, or NaN on a
 * chain with no supply yet.
 */
export function supplyFigures(unlocked: bigint): SupplyFigures {
  const total = unlocked;
  return {
    unlocked_percent: total === 0n ? 'NaN' : ((Number(unlocked) / Number(total)) * 100).toFixed(2),
    total_stx: microStxToStx(total),
    total_stx_year_2050: microStxToStx(TOTAL_STX_2050_MICRO),
    unlocked_stx: microStxToStx(unlocked),
  };
}
