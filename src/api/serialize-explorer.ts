/** Pure serializers of the explorer views (microblocks, supply, search). */
import { isoTime } from './serialize.js';
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
