import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateObserverMessage } from '../../src/observer/schemas.js';
import { decodeTx } from '../../src/chain/tx.js';
import { ChainGenerator, generateToFile, postMessage, tsvLine } from '../../load/generator/index.js';
import type { ChainSummary, GeneratedMessage, GeneratorOptions } from '../../load/generator/types.js';
import { startTestService, type TestService, settled } from '../helpers/service.js';
import { getOk } from '../helpers/http.js';

async function collect(opts: GeneratorOptions): Promise<{ messages: GeneratedMessage[]; summary: ChainSummary; gen: ChainGenerator }> {
  const gen = new ChainGenerator(opts);
  const messages: GeneratedMessage[] = [];
  for await (const m of gen.messages()) messages.push(m);
  return { messages, summary: gen.summary(), gen };
}

const SMALL: GeneratorOptions = { blocks: 24, txsPerBlock: 6, seed: 'gen-test', forks: true, forkEvery: 8, forkDepth: 2, microblockEvery: 5 };

describe('synthetic chain generator', () => {
  let chain: Awaited<ReturnType<typeof collect>>;
  beforeAll(async () => {
    chain = await collect(SMALL);
  });

  it('produces every message kind, forks and the requested canonical height', () => {
    const paths = new Set(chain.messages.map((m) => m.path));
    expect([...paths].sort()).toEqual(['/drop_mempool_tx', '/new_block', '/new_burn_block', '/new_mempool_tx', '/new_microblocks']);
    const s = chain.summary;
    expect(s.tipHeight).toBe(SMALL.blocks);
    expect(s.canonicalBlocks).toBe(SMALL.blocks);
    expect(s.forks).toBe(2); // at heights 8 and 16 (a fork needs depth + 1 blocks before the end)
    expect(s.orphanedBlocks).toBe(s.forks * 2);
    expect(s.blocksSent).toBe(s.canonicalBlocks + s.orphanedBlocks);
    expect(s.canonicalTxs).toBe(s.canonicalUserTxs + SMALL.blocks); // one coinbase per block
    expect(s.microblockStreams).toBeGreaterThan(0);
    for (const t of ['coinbase', 'token_transfer', 'smart_contract', 'contract_call']) expect(s.canonicalByType[t]).toBeGreaterThan(0);
    // ids are 1..n, block parents are chained
    expect(chain.messages.map((m) => m.id)).toEqual(chain.messages.map((_, i) => i + 1));
    const blocks = chain.messages.filter((m) => m.path === '/new_block').map((m) => JSON.parse(m.body));
    const byIndex = new Map(blocks.map((b) => [b.index_block_hash, b]));
    for (const b of blocks) {
      if (b.block_height === 1) continue;
      const parent = byIndex.get(b.parent_index_block_hash);
      expect(parent, `parent of ${b.block_height}`).toBeDefined();
      expect(parent.block_height).toBe(b.block_height - 1);
      expect(parent.block_hash).toBe(b.parent_block_hash);
    }
  });

  it('passes the observer validation and every raw transaction decodes to what was generated', () => {
    let decoded = 0;
    for (const m of chain.messages) {
      const body = JSON.parse(m.body);
      const v = validateObserverMessage(m.path, body);
      expect(v.ok, `${m.id} ${m.path}: ${v.ok ? '' : v.message}`).toBe(true);
      const raws: string[] =
        m.path === '/new_mempool_tx'
          ? body
          : m.path === '/new_block' || m.path === '/new_microblocks'
            ? body.transactions.map((t: { raw_tx: string }) => t.raw_tx)
            : [];
      if (m.path === '/drop_mempool_tx') expect(body.dropped_txids).toEqual(m.txs.map((t) => t.txId));
      else expect(raws.length).toBe(m.txs.length);
      raws.forEach((raw, i) => {
        const want = m.txs[i];
        const d = decodeTx(raw);
        expect(d.txId).toBe(want.txId);
        expect(d.txType).toBe(want.type);
        expect(d.senderAddress).toBe(want.sender);
        expect(d.nonce).toBe(want.nonce);
        expect(d.feeRate).toBe(String(want.fee));
        if (want.type === 'contract_call') expect(`${d.contractCallContractId}::${d.contractCallFunctionName}`).toBe(want.call);
        if (m.path !== '/new_mempool_tx') expect(body.transactions[i].txid).toBe(want.txId);
        decoded++;
      });
      if (m.path === '/new_block') {
        // event indexes run 0..n-1 over the block and name transactions of the block
        const ids = new Set(body.transactions.map((t: { txid: string }) => t.txid));
        body.events.forEach((e: { event_index: number; txid: string }, i: number) => {
          expect(e.event_index).toBe(i);
          expect(ids.has(e.txid)).toBe(true);
        });
        expect(body.transactions.map((t: { tx_index: number }) => t.tx_index)).toEqual(body.transactions.map((_: unknown, i: number) => i));
      }
    }
    expect(decoded).toBeGreaterThan(chain.summary.canonicalTxs);
  });

  it('is deterministic: the same seed gives identical output, another seed a different chain', async () => {
    const again = await collect(SMALL);
    expect(again.messages.map(tsvLine)).toEqual(chain.messages.map(tsvLine));
    expect(again.summary).toEqual(chain.summary);
    const other = await collect({ ...SMALL, seed: 'another-seed' });
    expect(other.summary.tipIndexBlockHash).not.toBe(chain.summary.tipIndexBlockHash);
    const ours = new Set(chain.messages.flatMap((m) => m.txs.map((t) => t.txId)));
    expect(other.messages.flatMap((m) => m.txs.map((t) => t.txId)).filter((id) => ours.has(id))).toEqual([]);
  });

  it('writes the fixtures TSV format', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sp-gen-'));
    try {
      const file = path.join(dir, 'chain.tsv');
      const summary = await generateToFile({ ...SMALL, blocks: 6, forks: false }, file);
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.length).toBe(summary.messages);
      for (const [i, l] of lines.entries()) {
        const [id, ts, p, ...rest] = l.split('\t');
        expect(Number(id)).toBe(i + 1);
        expect(ts).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00$/);
        expect(validateObserverMessage(p, JSON.parse(rest.join('\t'))).ok).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a generated chain with forks replayed into the service', () => {
  let svc: TestService;
  let chain: Awaited<ReturnType<typeof collect>>;
  beforeAll(async () => {
    svc = await startTestService();
    chain = await collect({ ...SMALL, seed: 'gen-replay' });
    for (const m of chain.messages) {
      const status = await postMessage(svc.observer, m, 0);
      expect(status, `${m.id} ${m.path}`).toBe(200);
    }
    await settled(svc.observer);
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('ends on the generator canonical tip, with the orphaned branches non-canonical', async () => {
    const s = chain.summary;
    const latest = await getOk(svc, '/extended/v2/blocks/latest');
    expect(latest.height).toBe(s.tipHeight);
    expect(latest.index_block_hash).toBe(s.tipIndexBlockHash);
    const blocks = chain.messages.filter((m) => m.block);
    for (const m of blocks) {
      // v1 answers orphaned blocks too (v2 only canonical ones)
      const b = await getOk(svc, `/extended/v1/block/${JSON.parse(m.body).block_hash}`);
      expect(b.index_block_hash).toBe(m.block!.indexBlockHash);
      expect(b.canonical, `block ${m.block!.height}`).toBe(m.block!.finallyCanonical);
      expect(b.height).toBe(m.block!.height);
      // (the reference lists only canonical txs of a block)
      if (m.block!.finallyCanonical) expect([...b.txs].sort()).toEqual(m.txs.map((t) => t.txId).sort());
    }
    const list = await getOk(svc, '/extended/v2/blocks?limit=1');
    expect(list.total).toBe(s.canonicalBlocks);
  });

  it('serves every canonical transaction with its type, sender, nonce and status', async () => {
    const canonical = chain.messages.filter((m) => m.block?.finallyCanonical);
    let n = 0;
    const byHeight = new Map<number, number>();
    for (const m of canonical) {
      byHeight.set(m.block!.height, m.txs.length);
      for (const t of m.txs) {
        const tx = await getOk(svc, `/extended/v1/tx/${t.txId}`);
        expect(tx.tx_type).toBe(t.type);
        expect(tx.sender_address).toBe(t.sender);
        expect(tx.nonce).toBe(t.nonce);
        expect(tx.tx_status).toBe(t.status);
        expect(tx.block_height).toBe(m.block!.height);
        expect(tx.canonical).toBe(true);
        expect(tx.event_count).toBe(t.status === 'success' ? t.eventCount : 0);
        n++;
      }
    }
    expect(n).toBe(chain.summary.canonicalTxs);
    // per-block transaction lists agree with the generator
    for (const [height, count] of byHeight) {
      const v2 = await getOk(svc, `/extended/v2/blocks/${height}`);
      expect(v2.tx_count, `height ${height}`).toBe(count);
    }
  });

  it('moves the losing branch transactions out of the chain and drops them from the mempool', async () => {
    const drop = chain.messages.find((m) => m.path === '/drop_mempool_tx' && JSON.parse(m.body).reason === 'ReplaceAcrossFork')!;
    expect(drop).toBeDefined();
    // The reference's rules (sql/0017): a losing-branch tx is pruned (status kept: pending) when a winning tx with its
    // payer+nonce is restored at its level or below, replaced by fee when the block that ends the reorg mines one, and
    // dropped across fork by the node otherwise; in no case mined or listed in the mempool.
    for (const t of drop.txs) {
      const body = await getOk(svc, `/extended/v1/tx/${t.txId}`);
      expect(['dropped_replace_across_fork', 'pending', 'dropped_replace_by_fee']).toContain(body.tx_status);
    }
    const pool = await getOk(svc, '/extended/v1/tx/mempool?limit=50');
    const listed = pool.results as { tx_id: string; tx_type: string }[];
    for (const t of drop.txs) expect(listed.map((r) => r.tx_id)).not.toContain(t.txId);
    // What stays listed, as in the reference: a winner mined above a losing tx of its nonce, restored with that tx's
    // nonce group and never pruned again (mined, yet pending in the mempool table), and the orphaned blocks' coinbases
    // (every tx of an orphaned block returns to the mempool; the node drops only user txs).
    for (const r of listed) {
      const status = (await getOk(svc, `/extended/v1/tx/${r.tx_id}`)).tx_status;
      if (r.tx_type === 'coinbase') expect(status).toBe('pending');
      else expect(status).toBe('success');
    }
  });
});
