/**
 * sendsWithoutWaiting and tipAfterMicroblocks (src/store/ingest/index.ts): which messages the projector sends without
 * waiting for the answers before them. Every message but a block always; a block when it extends the tip the
 * statements sent before it leave, carries no reward set, and accepts every microblock streamed on that tip since (the
 * one-statement path adopts a whole stream and declines a block that would orphan part of it).
 */
import { describe, expect, it } from 'vitest';
import { sendsWithoutWaiting, tipAfterMicroblocks, type SentTip } from '../../src/store/ingest/index.js';
import type { ChainUpdate } from '../../src/chain/types.js';

type Microblocks = Extract<ChainUpdate, { kind: 'microblocks' }>;
const tip: SentTip = { index_block_hash: '0xaa', block_height: 10 };

function stream(parent: string, ...chain: [hash: string, parentHash: string][]): Microblocks {
  return {
    kind: 'microblocks',
    parentIndexBlockHash: parent,
    microblocks: chain.map(([microblock_hash, microblock_parent_hash], i) => ({ microblock_hash, microblock_parent_hash, microblock_sequence: i, tx_count: 1 })),
  } as unknown as Microblocks;
}

function block(parent: string, height: number, parentMicroblock: string, confirmed: string[] = [], body = '{}') {
  const update = {
    kind: 'block',
    block: { index_block_hash: `0x${height}`, parent_index_block_hash: parent, block_height: height, parent_microblock_hash: parentMicroblock },
    confirmedMicroblocks: confirmed.map((microblock_hash) => ({ microblock_hash })),
    txs: [],
  } as unknown as ChainUpdate;
  return { update, body };
}

describe('sending ahead', () => {
  it('every message but a block, with or without a known tip', () => {
    for (const kind of ['burn_block', 'mempool', 'drop_mempool', 'raw'] as const) {
      expect(sendsWithoutWaiting({ update: { kind } as unknown as ChainUpdate, body: '{}' }, undefined)).toBe(true);
    }
    expect(sendsWithoutWaiting({ update: stream('0xaa', ['0xm0', '0x00']), body: '{}' }, undefined)).toBe(true);
  });

  it('a block on the tip, without a reward set; none without a known tip or off it', () => {
    expect(sendsWithoutWaiting(block('0xaa', 11, ''), tip)).toBe(true);
    expect(sendsWithoutWaiting(block('0xaa', 11, '', [], '{"reward_set": {}}'), tip)).toBe(false);
    expect(sendsWithoutWaiting(block('0xaa', 11, ''), undefined)).toBe(false);
    expect(sendsWithoutWaiting(block('0xbb', 11, ''), tip)).toBe(false);
    expect(sendsWithoutWaiting(block('0xaa', 10, ''), tip)).toBe(false);
  });

  it('after microblocks on the tip: a block that accepts the whole stream, not one that would orphan part of it', () => {
    const streamed = tipAfterMicroblocks(tipAfterMicroblocks(tip, stream('0xaa', ['0xm0', '0x00'])), stream('0xaa', ['0xm1', '0xm0']));
    expect(streamed?.streamed?.map((m) => m.microblock_hash)).toEqual(['0xm0', '0xm1']);
    // the chain to its parent microblock, or the microblocks its txs name
    expect(sendsWithoutWaiting(block('0xaa', 11, '0xm1'), streamed)).toBe(true);
    expect(sendsWithoutWaiting(block('0xaa', 11, '', ['0xm0', '0xm1']), streamed)).toBe(true);
    // only the first microblock, or none: a microblock fork, which the general path applies
    expect(sendsWithoutWaiting(block('0xaa', 11, '0xm0'), streamed)).toBe(false);
    expect(sendsWithoutWaiting(block('0xaa', 11, ''), streamed)).toBe(false);
    // a stream on another block is not stored: the tip's stream is unchanged
    expect(tipAfterMicroblocks(tip, stream('0xbb', ['0xm9', '0x00']))).toBe(tip);
    expect(tipAfterMicroblocks(undefined, stream('0xaa', ['0xm0', '0x00']))).toBeUndefined();
  });
});
