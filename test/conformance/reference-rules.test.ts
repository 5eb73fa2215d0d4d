/**
 * Rules of the reference (v8.13.6) that the public fixtures do not exercise, each shown on a generated chain
 * (load/generator/) with hand-made variations of its messages:
 *  - a block's tenure_height comes from the payload: none and a signer bitvec → -1, none and no bitvec → its height;
 *  - a block's execution costs are the payload's anchored_cost (the sum of its txs' costs only when the node sends none),
 *    and the generator reports costs as a node does;
 *  - boot block 0's txs are re-homed into block 1 but keep block 0's block_time;
 *  - chain_tip.burn_block_height is raised by a higher /new_burn_block and reset by the next canonical block;
 *  - the mempool: replace-by-fee between pending txs, mined winners, restore of the payer+nonce group on a reorg (all
 *    pending again), receipt time of a restored tx never seen in the mempool, re-mining.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { ChainGenerator } from '../../load/generator/index.js';
import type { GeneratedMessage, GeneratedTx } from '../../load/generator/types.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { deliverOk, getOk } from '../helpers/http.js';

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Cost = { read_count: number; read_length: number; runtime: number; write_count: number; write_length: number };

async function generate(seed: string, blocks: number): Promise<{ gen: ChainGenerator; messages: GeneratedMessage[] }> {
  const gen = new ChainGenerator({ blocks, txsPerBlock: 2, seed, forks: false, microblocks: false, mempool: false });
  const messages: GeneratedMessage[] = [];
  for await (const m of gen.messages()) messages.push(m);
  return { gen, messages };
}

const hash = (...parts: unknown[]) => '0x' + createHash('sha256').update(parts.join('/')).digest('hex');

function sumCosts(txs: { execution_cost: Cost }[]): Cost {
  const s = { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 };
  for (const t of txs) for (const k of Object.keys(s) as (keyof Cost)[]) s[k] += t.execution_cost[k];
  return s;
}

function blockBody(messages: GeneratedMessage[], height: number): Body {
  const m = messages.find((x) => x.path === '/new_block' && x.block?.height === height)!;
  return JSON.parse(m.body) as Body;
}

/** A copy of a block message as another block (new hashes, given parent and txs, no rewards). */
function variant(b: Body, tag: string, parent: Body, txIds: string[], height = b.block_height): Body {
  const keep = new Set(txIds);
  const transactions = (b.transactions as Body[]).filter((t) => keep.has(t.txid)).map((t, i) => ({ ...t, tx_index: i }));
  return {
    ...b,
    block_height: height,
    block_hash: hash('block', tag),
    index_block_hash: hash('index', tag),
    parent_block_hash: parent.block_hash,
    parent_index_block_hash: parent.index_block_hash,
    transactions,
    events: (b.events as Body[]).filter((e) => keep.has(e.txid)),
    matured_miner_rewards: [],
    anchored_cost: sumCosts(transactions as unknown as { execution_cost: Cost }[]),
  };
}

describe('reference rules on generated chains', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('block tenure_height and execution costs come from the payload; generated costs add up like a node', async () => {
    const { messages } = await generate('rules-blocks', 5);
    for (const m of messages.filter((x) => x.path === '/new_block')) {
      const b = JSON.parse(m.body) as Body;
      // a node reports the anchored txs' costs summed
      expect(b.anchored_cost).toEqual(sumCosts(b.transactions));
    }
    const svc2 = await startTestService();
    try {
      for (const m of messages) {
        const b = JSON.parse(m.body) as Body;
        if (m.path === '/new_block' && b.block_height === 3) b.signer_bitvec = '000300000001e0'; // Nakamoto-shaped, no tenure_height
        if (m.path === '/new_block' && b.block_height === 4) delete b.anchored_cost; // a very old node
        if (m.path === '/new_block' && b.block_height === 2) b.anchored_cost = { read_count: 7, read_length: 70, runtime: 700, write_count: 1, write_length: 10 };
        await deliverOk(svc2, m.path, b);
      }
      expect((await getOk(svc2, '/extended/v2/blocks/3')).tenure_height).toBe(-1);
      expect((await getOk(svc2, '/extended/v1/block/by_height/3')).tenure_height).toBe(-1);
      expect((await getOk(svc2, '/extended/v2/blocks/2')).tenure_height).toBe(2);
      const b2 = await getOk(svc2, '/extended/v2/blocks/2');
      expect([b2.execution_cost_read_count, b2.execution_cost_runtime, b2.execution_cost_write_length]).toEqual([7, 700, 10]);
      const b4 = await getOk(svc2, '/extended/v1/block/by_height/4');
      const sum4 = sumCosts(blockBody(messages, 4).transactions);
      expect([b4.execution_cost_read_count, b4.execution_cost_runtime]).toEqual([sum4.read_count, sum4.runtime]);
    } finally {
      await svc2.stop();
    }
  }, 300_000);

  it('boot block 0 txs move into block 1 with block 1 burn data but keep block 0 block_time', async () => {
    const { messages } = await generate('rules-boot', 2);
    const b1 = blockBody(messages, 1);
    const [coinbase, ...boot] = (b1.transactions as Body[]).map((t) => t.txid as string);
    const zero = { block_hash: '0x' + '00'.repeat(32), index_block_hash: hash('genesis-parent') };
    const b0 = { ...variant(b1, 'boot0', zero, boot, 0), burn_block_time: b1.burn_block_time - 3600, burn_block_height: b1.burn_block_height - 1 };
    const one = variant(b1, 'boot1', b0, [coinbase]);
    const svc2 = await startTestService();
    try {
      await deliverOk(svc2, '/new_block', b0);
      await deliverOk(svc2, '/new_block', one);
      const t = await getOk(svc2, `/extended/v1/tx/${boot[0]}`);
      expect(t.tx_status).toBe('success');
      expect(t.block_height).toBe(1);
      expect(t.block_hash).toBe(one.block_hash);
      expect(t.burn_block_time).toBe(one.burn_block_time);
      expect(t.block_time).toBe(b0.burn_block_time);
    } finally {
      await svc2.stop();
    }
  }, 300_000);

  it('chain_tip.burn_block_height: raised by a higher burn block, set by the next canonical block', async () => {
    const { messages } = await generate('rules-burn', 4);
    const upTo3 = messages.slice(0, messages.findIndex((m) => m.path === '/new_block' && m.block?.height === 3) + 1);
    for (const m of upTo3) await deliverOk(svc, m.path, JSON.parse(m.body));
    const tip = (await getOk(svc, '/extended')).chain_tip;
    const burn = JSON.parse(upTo3.filter((m) => m.path === '/new_burn_block').at(-1)!.body) as Body;
    await deliverOk(svc, '/new_burn_block', { ...burn, burn_block_hash: hash('burn-ahead'), burn_block_height: tip.burn_block_height + 10 });
    expect((await getOk(svc, '/extended')).chain_tip.burn_block_height).toBe(tip.burn_block_height + 10);
    await deliverOk(svc, '/new_burn_block', { ...burn, burn_block_hash: hash('burn-behind'), burn_block_height: tip.burn_block_height + 2 });
    expect((await getOk(svc, '/extended')).chain_tip.burn_block_height).toBe(tip.burn_block_height + 10);
    const b4 = blockBody(messages, 4);
    await deliverOk(svc, '/new_block', b4);
    expect((await getOk(svc, '/extended')).chain_tip.burn_block_height).toBe(b4.burn_block_height);
  }, 300_000);

  it('mempool: replace-by-fee, mined winner, reorg restores the whole payer+nonce group as pending, re-mining', async () => {
    const { gen, messages } = await generate('rules-mempool', 6);
    const svc2 = await startTestService();
    try {
      const upTo3 = messages.slice(0, messages.findIndex((m) => m.path === '/new_block' && m.block?.height === 3) + 1);
      for (const m of upTo3) await deliverOk(svc2, m.path, JSON.parse(m.body));
      const b3 = blockBody(messages, 3);
      const b4 = blockBody(messages, 4);
      const b5 = blockBody(messages, 5);
      const m4 = messages.find((m) => m.path === '/new_block' && m.block?.height === 4)!;
      const [coinbase4, userA, userB] = m4.txs;
      const twin: GeneratedTx = await gen.lowerFeeTwin(userA);
      const status = async (id: string) => {
        const t = await getOk(svc2, `/extended/v1/tx/${id}`);
        return { status: t.tx_status as string, replaced_by: (t.replaced_by_tx_id ?? null) as string | null };
      };

      // the twin first, then the higher-fee tx with the same nonce: the twin is replaced at once
      await deliverOk(svc2, '/new_mempool_tx', [twin.rawTx]);
      expect(await status(twin.txId)).toEqual({ status: 'pending', replaced_by: null });
      await deliverOk(svc2, '/new_mempool_tx', [userA.rawTx]);
      expect(await status(twin.txId)).toEqual({ status: 'dropped_replace_by_fee', replaced_by: userA.txId });
      expect((await getOk(svc2, '/extended/v1/tx/mempool')).total).toBe(1);

      // mined: the winner is the mined tx
      await deliverOk(svc2, '/new_block', b4);
      expect((await status(userA.txId)).status).toBe('success');
      expect(await status(twin.txId)).toEqual({ status: 'dropped_replace_by_fee', replaced_by: userA.txId });
      expect((await getOk(svc2, '/extended/v1/tx/mempool')).total).toBe(0);

      // a fork: 4' (coinbase only) and 5' on it orphan block 4; its txs and the twin (same payer+nonce) are pending again
      const b4x = variant(b4, 'b4x', b3, [coinbase4.txId]);
      const b5x = variant(b5, 'b5x', b4x, [(b5.transactions as Body[])[0].txid]);
      await deliverOk(svc2, '/new_block', b4x);
      await deliverOk(svc2, '/new_block', b5x);
      expect((await getOk(svc2, '/extended')).chain_tip.index_block_hash).toBe(b5x.index_block_hash);
      expect(await status(userA.txId)).toEqual({ status: 'pending', replaced_by: null });
      expect(await status(twin.txId)).toEqual({ status: 'pending', replaced_by: null });
      expect((await status(coinbase4.txId)).status).toBe('success'); // mined again in 4'
      const pool = await getOk(svc2, '/extended/v1/tx/mempool');
      expect(pool.total).toBe(3);
      // never announced to the mempool: restored from its mined copy, received at its block's burn time
      const restoredB = (pool.results as Body[]).find((t) => t.tx_id === userB.txId)!;
      expect(restoredB.receipt_time).toBe(b4.burn_block_time);

      // re-mined on the new branch: the mined tx wins again
      const b6 = blockBody(messages, 6);
      const b6x = variant({ ...b6, transactions: [...b6.transactions.slice(0, 1), ...b4.transactions.filter((t: Body) => t.txid === userA.txId)], events: [...b6.events, ...b4.events] }, 'b6x', b5x, [(b6.transactions as Body[])[0].txid, userA.txId]);
      await deliverOk(svc2, '/new_block', b6x);
      expect((await status(userA.txId)).status).toBe('success');
      expect(await status(twin.txId)).toEqual({ status: 'dropped_replace_by_fee', replaced_by: userA.txId });
      expect((await getOk(svc2, '/extended/v1/tx/mempool')).total).toBe(1); // userB
    } finally {
      await svc2.stop();
    }
  }, 300_000);
});

describe('reference rules on generated chains: push', () => {
  it('a non-canonical block notifies the balances of the principals its txs touch', async () => {
    const { io: connect } = await import('socket.io-client');
    const { messages } = await generate('rules-push', 4);
    const svc = await startTestService();
    try {
      const upTo3 = messages.slice(0, messages.findIndex((m) => m.path === '/new_block' && m.block?.height === 3) + 1);
      for (const m of upTo3) await deliverOk(svc, m.path, JSON.parse(m.body));
      await svc.service.push!.publisher!.idle();
      const b2 = blockBody(messages, 2);
      const b4 = blockBody(messages, 4);
      // a sibling of block 3 carrying block 4's txs: stored, not canonical
      const sibling = variant(b4, 'sibling3', b2, (b4.transactions as Body[]).map((t) => t.txid), 3);
      const { decodeTx } = await import('../../src/chain/tx.js');
      // principals of a block message's txs other than their senders (the senders' balances were already pushed for
      // orphaned txs): recipients, transfer parties, called and deployed contracts
      const parties = (b: Body) => {
        const out = new Set<string>();
        for (const e of b.events as Body[]) {
          const x = e.stx_transfer_event ?? e.ft_transfer_event ?? e.nft_transfer_event ?? {};
          if (x.sender) out.add(x.sender);
          if (x.recipient) out.add(x.recipient);
        }
        for (const t of b.transactions as Body[]) {
          const d = decodeTx(t.raw_tx);
          for (const p of [d.contractCallContractId, d.smartContractContractId, d.tokenTransferRecipient]) if (p) out.add(p);
        }
        return out;
      };
      const before = new Set<string>();
      for (const m of upTo3.filter((x) => x.path === '/new_block')) {
        const b = JSON.parse(m.body) as Body;
        for (const p of parties(b)) before.add(p);
        for (const t of b.transactions as Body[]) before.add(decodeTx(t.raw_tx).senderAddress);
      }
      const touched = new Set([...parties(sibling)].filter((p) => !before.has(p)));
      expect(touched.size).toBeGreaterThan(0);
      const rooms = [...touched].map((p) => `address-stx-balance:${p}`);
      const socket = connect(svc.api, { path: '/socket.io/', transports: ['websocket'], query: { subscriptions: rooms.join(',') }, reconnection: false });
      const got: string[] = [];
      socket.onAny((event: string) => got.push(event));
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      await deliverOk(svc, '/new_block', sibling);
      expect((await getOk(svc, `/extended/v1/block/${sibling.block_hash}`)).canonical).toBe(false);
      await svc.service.push!.publisher!.idle();
      expect(await socket.timeout(5000).emitWithAck('subscribe', 'block')).toBeNull();
      socket.disconnect();
      // each principal first touched by the non-canonical block gets its balance (at the block's height)
      expect([...new Set(got.filter((e) => e.startsWith('address-stx-balance:')))].sort()).toEqual(rooms.sort());
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('reference rules on generated chains: mempool room', () => {
  it('announces every tx seen for the first time, even one replaced at once or already mined, never a revived one again', async () => {
    const { io: connect } = await import('socket.io-client');
    const { gen, messages } = await generate('rules-mempool-room', 4);
    const svc = await startTestService();
    try {
      const upTo3 = messages.slice(0, messages.findIndex((m) => m.path === '/new_block' && m.block?.height === 3) + 1);
      for (const m of upTo3) await deliverOk(svc, m.path, JSON.parse(m.body));
      await svc.service.push!.publisher!.idle();
      const socket = connect(svc.api, { path: '/socket.io/', transports: ['websocket'], query: { subscriptions: 'mempool' }, reconnection: false });
      const got: { tx_id: string; tx_status: string }[] = [];
      socket.on('mempool', (tx: { tx_id: string; tx_status: string }) => got.push({ tx_id: tx.tx_id, tx_status: tx.tx_status }));
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      const minedIn2 = messages.find((m) => m.path === '/new_block' && m.block?.height === 2)!.txs[1];
      const [, userA] = messages.find((m) => m.path === '/new_block' && m.block?.height === 4)!.txs;
      const twin: GeneratedTx = await gen.lowerFeeTwin(userA);
      await deliverOk(svc, '/new_mempool_tx', [minedIn2.rawTx]); // already mined: stored pruned, still announced
      await deliverOk(svc, '/new_mempool_tx', [userA.rawTx]);
      await deliverOk(svc, '/new_mempool_tx', [twin.rawTx]); // lower fee, same nonce: replaced at once
      await deliverOk(svc, '/drop_mempool_tx', { dropped_txids: [userA.txId], reason: 'TooExpensive', new_txid: null });
      // revived (a body of its own: an identical message is a re-delivery, ignored): not announced again
      await deliverOk(svc, '/new_mempool_tx', [userA.rawTx, minedIn2.rawTx]);
      await svc.service.push!.publisher!.idle();
      expect(await socket.timeout(5000).emitWithAck('subscribe', 'block')).toBeNull();
      socket.disconnect();
      expect(got).toEqual([
        { tx_id: minedIn2.txId, tx_status: 'pending' },
        { tx_id: userA.txId, tx_status: 'pending' },
        { tx_id: twin.txId, tx_status: 'dropped_replace_by_fee' },
      ]);
      expect((await getOk(svc, `/extended/v1/tx/${userA.txId}`)).tx_status).toBe('pending');
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('reference rules on generated chains: a fork with mempool traffic', () => {
  it('txs of the losing branch: pruned with their nonce group when the winner is restored, so the ReplaceAcrossFork drop finds nothing to drop', async () => {
    const gen = new ChainGenerator({ blocks: 12, txsPerBlock: 4, seed: 'rules-fork', forks: true, forkEvery: 4, forkDepth: 2, microblocks: false, mempool: true });
    const messages: GeneratedMessage[] = [];
    for await (const m of gen.messages()) messages.push(m);
    const svc = await startTestService();
    try {
      const drops = messages.filter((m) => m.path === '/drop_mempool_tx' && (JSON.parse(m.body) as Body).reason === 'ReplaceAcrossFork');
      expect(drops.length).toBeGreaterThan(0);
      const { decodeTx } = await import('../../src/chain/tx.js');
      const key = (raw: string) => {
        const d = decodeTx(raw);
        return `${d.sponsored ? d.sponsorAddress : d.senderAddress}/${d.nonce}`;
      };
      const outcomes = new Set<string>();
      const ghosts: string[] = [];
      let sent = 0;
      for (const d of drops) {
        const at = messages.indexOf(d);
        // the state right after the node's drop
        for (; sent <= at; sent++) await deliverOk(svc, messages[sent].path, JSON.parse(messages[sent].body));
        // the winning branch (the block that ended the reorg is the last one before the drop) and the losing one
        const winning = messages.slice(0, at).filter((m) => m.path === '/new_block' && m.block!.finallyCanonical).slice(-3);
        const losing = messages.slice(0, at).filter((m) => m.path === '/new_block' && !m.block!.finallyCanonical).slice(-2);
        const heightOf = new Map<string, { height: number; txId: string }>();
        for (const m of winning) for (const t of (JSON.parse(m.body) as Body).transactions as Body[]) heightOf.set(key(t.raw_tx), { height: m.block!.height, txId: t.txid });
        const lastHeight = winning.at(-1)!.block!.height;
        for (const id of (JSON.parse(d.body) as Body).dropped_txids as string[]) {
          const lostIn = losing.find((m) => m.txs.some((t) => t.txId === id))!;
          const k = key(lostIn.txs.find((t) => t.txId === id)!.rawTx);
          const w = heightOf.get(k);
          const t = await getOk(svc, `/extended/v1/tx/${id}`);
          // the reorg restores level by level from the top: at each height the losing block's txs (and their nonce
          // group) return to the mempool, then the winning block's txs (and their nonce group) are pruned
          if (w && w.height === lastHeight) {
            // pruned with the new block's txs, then replaced by fee by the mined winner
            expect([t.tx_status, t.replaced_by_tx_id]).toEqual(['dropped_replace_by_fee', w.txId]);
          } else if (w && w.height <= lostIn.block!.height) {
            // restored, then pruned (status kept) with the winner at the same or a lower level: the drop finds it pruned
            expect(t.tx_status).toBe('pending');
          } else {
            // still pending when the node drops it
            expect(t.tx_status).toBe('dropped_replace_across_fork');
          }
          outcomes.add(t.tx_status);
          if (w && w.height > lostIn.block!.height && w.height !== lastHeight) {
            // the winner, mined higher, was pruned first, then restored with this tx's nonce group: listed as pending
            // in the mempool though mined
            expect((await getOk(svc, `/extended/v1/tx/${w.txId}`)).tx_status).toBe('success');
            const pool = await getOk(svc, `/extended/v1/address/${k.split('/')[0]}/mempool?limit=50`);
            expect((pool.results as Body[]).map((r) => r.tx_id)).toContain(w.txId);
            ghosts.push(w.txId);
          }
        }
        // every tx of an orphaned block returns to the mempool, its coinbase too (the node drops user txs only)
        const listed = ((await getOk(svc, '/extended/v1/tx/mempool?limit=50')).results as Body[]).map((r) => r.tx_id);
        for (const m of losing) {
          const coinbase = m.txs.find((t) => t.type === 'coinbase')!;
          expect((await getOk(svc, `/extended/v1/tx/${coinbase.txId}`)).tx_status).toBe('pending');
          expect(listed).toContain(coinbase.txId);
        }
      }
      expect([...outcomes].sort()).toEqual(['dropped_replace_across_fork', 'pending']);
      expect(ghosts.length).toBeGreaterThan(0);
      // and none of them is counted in the mempool
      const pool = await getOk(svc, '/extended/v1/tx/mempool?limit=50');
      const dropped = new Set(drops.flatMap((d) => (JSON.parse(d.body) as Body).dropped_txids as string[]));
      expect((pool.results as Body[]).filter((t) => dropped.has(t.tx_id))).toEqual([]);
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

describe('reference rules: estimated balance', () => {
  it('a pending sponsored transfer costs its sender amount + fee and its sponsor the fee again, as the reference sums them', async () => {
    const { makeSTXTokenTransfer, sponsorTransaction } = await import('@stacks/transactions');
    const { gen, messages } = await generate('rules-sponsored', 2);
    const svc = await startTestService();
    try {
      for (const m of messages) await deliverOk(svc, m.path, JSON.parse(m.body));
      const accounts = (gen as unknown as { accounts: { key: string; address: string }[] }).accounts;
      const [sender, sponsor, recipient] = [accounts[5], accounts[6], accounts[7]];
      const tx = await makeSTXTokenTransfer({
        recipient: recipient.address,
        amount: 1000n,
        senderKey: sender.key,
        network: 'testnet',
        sponsored: true,
        fee: 0,
        nonce: 900, // far ahead: no mined tx shares it
      });
      const sponsored = await sponsorTransaction({ transaction: tx, sponsorPrivateKey: sponsor.key, fee: 300, sponsorNonce: 900, network: 'testnet' });
      const before = {
        sender: BigInt((await getOk(svc, `/extended/v1/address/${sender.address}/stx`)).balance),
        sponsor: BigInt((await getOk(svc, `/extended/v1/address/${sponsor.address}/stx`)).balance),
      };
      await deliverOk(svc, '/new_mempool_tx', ['0x' + sponsored.serialize()]);
      const est = async (a: string) => BigInt((await getOk(svc, `/extended/v1/address/${a}/stx`)).estimated_balance);
      expect(await est(sender.address)).toBe(before.sender - 1000n - 300n);
      expect(await est(sponsor.address)).toBe(before.sponsor - 300n);
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('a tx mined in two blocks: search answers the placement the reference\'s index gives first, Rosetta finds the non-canonical block', async () => {
    const { messages } = await generate('rules-twice', 3);
    const b1 = blockBody(messages, 1);
    const b2 = blockBody(messages, 2);
    const txIds = (b2.transactions as Body[]).map((t) => t.txid as string);
    // two blocks at height 2 with the same txs: the first stored stays canonical; tags chosen so that the losing
    // block's index hash sorts first (the case where "canonical first" and the reference's index order disagree)
    let n = 0;
    while (hash('index', `twice-lose-${n}`) > hash('index', 'twice-win')) n++;
    // the winner leaves out one tx, which is then mined only in the orphan
    const orphanOnly = txIds[1];
    const win = variant(b2, 'twice-win', b1, txIds.filter((t) => t !== orphanOnly));
    const lose = variant(b2, `twice-lose-${n}`, b1, txIds);
    const svc2 = await startTestService();
    try {
      await deliverOk(svc2, '/new_block', b1);
      await deliverOk(svc2, '/new_block', win);
      await deliverOk(svc2, '/new_block', lose);
      const tx = txIds[txIds.length - 1];
      const plain = await getOk(svc2, `/extended/v1/search/${tx}`);
      expect(plain.result.tx_data).toMatchObject({ canonical: false, block_hash: lose.block_hash, block_height: 2 });
      const withMeta = await getOk(svc2, `/extended/v1/search/${tx}?include_metadata=true`);
      expect(withMeta.result.tx_data).toMatchObject({ canonical: true, block_hash: win.block_hash });
      expect(withMeta.result.metadata.block_hash).toBe(win.block_hash);
      // mined only in the orphan: a tx (not canonical) without include_metadata; with it, only canonical placements
      // count, and the tx is neither pending nor a block: not found
      expect((await getOk(svc2, `/extended/v1/search/${orphanOnly}`)).result.tx_data).toMatchObject({ canonical: false, block_hash: lose.block_hash });
      const res = await fetch(`${svc2.api}/extended/v1/search/${orphanOnly}?include_metadata=true`);
      expect(res.status).toBe(404);
      // /tx/{id} looks among canonical placements, then the mempool: not found either
      expect((await fetch(`${svc2.api}/extended/v1/tx/${orphanOnly}`)).status).toBe(404);

      const rosetta = async (block_identifier: Body) => {
        const res = await fetch(svc2.api + '/rosetta/v1/block', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ network_identifier: { blockchain: 'stacks', network: 'testnet' }, block_identifier }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as Body).block as Body;
      };
      // the orphan by hash: found, with its parent, and no transactions (its txs are not canonical)
      const orphan = await rosetta({ hash: lose.block_hash });
      expect(orphan.block_identifier).toEqual({ index: 2, hash: lose.block_hash });
      expect(orphan.parent_block_identifier).toEqual({ index: 1, hash: b1.block_hash });
      expect(orphan.transactions).toEqual([]);
      // a hash wins over an index; the height alone is the canonical block, with its txs
      expect((await rosetta({ index: 2, hash: lose.block_hash.slice(2) })).block_identifier.hash).toBe(lose.block_hash);
      // Rosetta's /block/transaction finds any placement (canonical first), whatever block the request names
      const btx = await fetch(svc2.api + '/rosetta/v1/block/transaction', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          network_identifier: { blockchain: 'stacks', network: 'testnet' },
          block_identifier: { index: 1 },
          transaction_identifier: { hash: orphanOnly },
        }),
      });
      expect(btx.status).toBe(200);
      expect(((await btx.json()) as Body).transaction_identifier.hash).toBe(orphanOnly);
      const canonical = await rosetta({ index: 2 });
      expect(canonical.block_identifier).toEqual({ index: 2, hash: win.block_hash });
      expect((canonical.transactions as Body[]).map((t) => t.transaction_identifier.hash)).toEqual(txIds.filter((t) => t !== orphanOnly));
    } finally {
      await svc2.stop();
    }
  }, 300_000);
});
