/**
 * minedByNextBlock (src/store/ingest/index.ts): which txs of a mempool message the projector sends as mined by the next
 * block of its batch, so that they are inserted pruned. Only a block that extends the tip the statements leave (sent
 * ahead on the one-statement path), reached across burn blocks and raw messages alone, and only the txs it mines.
 */
import { describe, expect, it } from 'vitest';
import { minedByNextBlock, type SentTip } from '../../src/store/ingest/index.js';
import type { ChainUpdate } from '../../src/chain/types.js';

type Msg = { update: ChainUpdate; body: string };
const tip: SentTip = { index_block_hash: '0xaa', block_height: 10 };

function mempool(...ids: string[]): Msg {
  return { update: { kind: 'mempool', txs: ids.map((tx_id) => ({ tx_id })) } as unknown as ChainUpdate, body: '{}' };
}
function block(parent: string, height: number, ids: string[], body = '{}'): Msg {
  return {
    update: { kind: 'block', block: { index_block_hash: `0x${height}`, parent_index_block_hash: parent, block_height: height }, txs: ids.map((tx_id) => ({ tx_id })) } as unknown as ChainUpdate,
    body,
  };
}
const burn: Msg = { update: { kind: 'burn_block' } as unknown as ChainUpdate, body: '{}' };
const raw: Msg = { update: { kind: 'raw' } as unknown as ChainUpdate, body: '{}' };
const drop: Msg = { update: { kind: 'drop_mempool', txIds: ['0x1'] } as unknown as ChainUpdate, body: '{}' };

describe('minedByNextBlock', () => {
  it('the txs of the message that the next block on the tip mines, across burn blocks and raw messages', () => {
    const batch = [mempool('0x1', '0x2', '0x3', '0x1'), burn, raw, block('0xaa', 11, ['0x0', '0x3', '0x1'])];
    expect(minedByNextBlock(batch, 0, tip).sort()).toEqual(['0x1', '0x3']);
  });

  it('none when another message comes first, when the block does not extend the tip, or without a known tip', () => {
    expect(minedByNextBlock([mempool('0x1'), drop, block('0xaa', 11, ['0x1'])], 0, tip)).toEqual([]);
    expect(minedByNextBlock([mempool('0x1'), mempool('0x2'), block('0xaa', 11, ['0x1'])], 0, tip)).toEqual([]);
    expect(minedByNextBlock([mempool('0x1'), block('0xbb', 11, ['0x1'])], 0, tip)).toEqual([]);
    expect(minedByNextBlock([mempool('0x1'), block('0xaa', 10, ['0x1'])], 0, tip)).toEqual([]);
    expect(minedByNextBlock([mempool('0x1'), block('0xaa', 11, ['0x1'])], 0, undefined)).toEqual([]);
    expect(minedByNextBlock([mempool('0x1')], 0, tip)).toEqual([]);
  });

  it('none for a block with a reward set (applied by the general path) and for a message that is not a mempool one', () => {
    expect(minedByNextBlock([mempool('0x1'), block('0xaa', 11, ['0x1'], '{"reward_set": {}}')], 0, tip)).toEqual([]);
    expect(minedByNextBlock([burn, block('0xaa', 11, ['0x1'])], 0, tip)).toEqual([]);
  });
});
