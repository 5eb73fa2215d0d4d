/**
 * The `burn-block` and `tenure` push rooms (src/push/chain-heartbeat.ts) over Socket.IO and JSON-RPC, on the
 * replayed fuzzed-transactions-1 stream (Nakamoto: tenures 38–40, 8 Stacks blocks in burn block 243) and a fork on it:
 * payloads are what REST answers, a reorg re-sends the burn blocks it changed and the tenure it starts, and a client
 * resuming from cursor 0 gets the same stream.
 */
import { describe, expect, it } from 'vitest';
import { readFixture } from '../helpers/fixtures.js';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { recordingSocket, rpcClient, type Recorded } from '../helpers/push-clients.js';
import { getOk } from '../helpers/http.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const lines = readFixture('fuzzed-transactions-1');
const blockMsgs: Json[] = lines.filter((l) => l.path === '/new_block').map((l) => JSON.parse(l.body));
const byHeight = new Map(blockMsgs.map((b) => [b.block_height as number, b]));

async function settle(svc: TestService): Promise<void> {
  await svc.service.pipeline!.idle();
  await svc.service.push!.publisher!.idle();
}

const of = (got: Recorded[], event: string) => got.filter((m) => m.event === event);

function forkBlock(parent: Json, o: { height: number; id: string; burnHash: string; burnHeight: number; sigs: string[]; tenure: number }): Json {
  const base = byHeight.get(12)!;
  return {
    ...base,
    block_height: o.height,
    block_hash: '0x' + (o.id + 'b').repeat(32),
    index_block_hash: '0x' + (o.id + 'c').repeat(32),
    parent_block_hash: parent.block_hash,
    parent_index_block_hash: parent.index_block_hash,
    burn_block_hash: o.burnHash,
    burn_block_height: o.burnHeight,
    block_time: base.block_time + o.height,
    tenure_height: o.tenure,
    signer_signature: o.sigs,
    transactions: [],
    events: [],
    matured_miner_rewards: [],
  };
}

describe('burn-block and tenure rooms', () => {
  it('Socket.IO and JSON-RPC: REST-shaped burn blocks as they gain Stacks blocks, tenure changes, reorgs, resume', async () => {
    const svc = await startTestService();
    try {
      const sock = await recordingSocket(svc.api, { rooms: ['burn-block', 'tenure'] });
      const rpc = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
      expect((await rpc.call('subscribe', { event: 'burn_block' })).result).toEqual({});
      expect((await rpc.call('subscribe', { event: 'tenure' })).result).toEqual({});
      await replay(svc.observer, lines);
      await settle(svc);
      await sock.sync();
      await rpc.sync();

      // burn-block: one message per canonical block above height 1 (the push layer sends nothing for block 1)
      const burns = of(sock.got, 'burn-block').map((m) => m.args[0] as Json);
      expect(burns.map((b) => [b.burn_block_height, b.stacks_blocks.length])).toEqual([
        [242, 2],
        ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => [243, n]),
        [244, 1],
        [244, 2],
      ]);
      // each burn block's last message is what REST answers now
      for (const h of [242, 243, 244]) {
        const last = burns.filter((b) => b.burn_block_height === h).at(-1);
        expect(last).toEqual(await getOk(svc, `/extended/v2/burn-blocks/${h}`));
      }
      // tenure: 38 → 39 at block 3, 39 → 40 at block 11; the page as REST answered it then (one block so far)
      const tenures = of(sock.got, 'tenure').map((m) => m.args[0] as Json);
      expect(tenures.map((t) => [t.results[0].tenure_height, t.results[0].height, t.total, t.cursor])).toEqual([
        [39, 3, 1, byHeight.get(3)!.index_block_hash],
        [40, 11, 1, byHeight.get(11)!.index_block_hash],
      ]);
      expect(tenures[1].results[0]).toEqual(await getOk(svc, '/extended/v2/blocks/11'));
      // messages carry the chain position of the block that caused them
      expect(of(sock.got, 'tenure')[0].args.at(-1)).toMatchObject({ height: 3, index_block_hash: byHeight.get(3)!.index_block_hash });

      // JSON-RPC: the same payloads, as notifications burn_block / tenure
      const notes = rpc.notifications();
      expect(notes.filter((n) => n.method === 'burn_block').map((n) => n.params)).toEqual(burns);
      expect(notes.filter((n) => n.method === 'tenure').map((n) => n.params)).toEqual(tenures);

      // a fork: the sibling of block 12 alone changes nothing; the block on it makes a reorg
      const burnX = '0x' + '7e'.repeat(32);
      const f12 = forkBlock(byHeight.get(11)!, { height: 12, id: 'f', burnHash: burnX, burnHeight: 245, sigs: ['aa'.repeat(65)], tenure: 41 });
      const f13 = forkBlock(f12, { height: 13, id: 'e', burnHash: burnX, burnHeight: 245, sigs: ['bb'.repeat(65)], tenure: 41 });
      const before = sock.got.length;
      await replay(svc.observer, [{ id: 'x', timestamp: '', path: '/new_block', body: JSON.stringify(f12) }]);
      await settle(svc);
      await sock.sync();
      expect(sock.got.slice(before).filter((m) => m.event !== 'block')).toEqual([]);
      await replay(svc.observer, [{ id: 'y', timestamp: '', path: '/new_block', body: JSON.stringify(f13) }]);
      await settle(svc);
      await sock.sync();
      const after = sock.got.slice(before);
      // the orphaned block's burn block (244, now one Stacks block) and the new one (245, both fork blocks)
      expect(of(after, 'burn-block').map((m) => m.args[0])).toEqual([
        await getOk(svc, '/extended/v2/burn-blocks/244'),
        await getOk(svc, `/extended/v2/burn-blocks/${burnX}`),
      ]);
      expect((of(after, 'burn-block')[1].args[0] as Json).stacks_blocks).toEqual([f13.block_hash, f12.block_hash]);
      // tenure 41 starts at the restored block f12 (f13 continues it)
      expect(of(after, 'tenure').map((m) => m.args[0])).toEqual([await getOk(svc, `/extended/v2/block-tenures/41/blocks?cursor=${f12.index_block_hash}`)]);

      // resume from cursor 0: the whole stream again, in order
      const again = await recordingSocket(svc.api, { rooms: ['burn-block', 'tenure'], auth: { cursor: '0' } });
      await again.sync();
      const strip = (r: Recorded[]) => r.filter((m) => m.event === 'burn-block' || m.event === 'tenure').map((m) => ({ event: m.event, args: m.args }));
      expect(strip(again.got)).toEqual(strip(sock.got));
      // JSON-RPC resume with params.cursor
      const rpc2 = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
      await rpc2.call('subscribe', { event: 'tenure', cursor: '0' });
      await rpc2.sync();
      expect(rpc2.notifications().map((n) => n.params)).toEqual(of(sock.got, 'tenure').map((m) => m.args[0]));
      again.socket.disconnect();
      sock.socket.disconnect();
      rpc.ws.close();
      rpc2.ws.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});
