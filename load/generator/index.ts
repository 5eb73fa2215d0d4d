/**
 * Synthetic chain generator: a deterministic (seeded) Stacks chain of valid, signed transactions, wrapped in the event
 * observer messages a stacks-node POSTs (/new_burn_block, /new_mempool_tx, /new_microblocks, /new_block,
 * /drop_mempool_tx), with competing branches that later win when asked.
 *
 * This module is the chain's shape (burn blocks, anchored blocks, microblock streams, forks, the mempool) and the
 * outputs (a TSV, or POSTs to an observer); types.ts the options and results, txs.ts the transaction builders, keys.ts
 * the accounts and signing, determinism.ts the seeded helpers; the command line is load/generate.ts.
 *
 * Shape: epoch 2.x-style blocks (one Stacks block per burn block, a coinbase first in every block, microblock streams
 * confirmed by the next block, matured miner rewards MATURITY blocks later). Transactions: STX transfers, contract
 * deploys (a small FT/NFT/print contract), contract calls with print events (some aborted by response), FT mint and
 * transfer, NFT mint and transfer. Forks (--forks): every --fork-every blocks the miner of branch A mines --fork-depth
 * blocks, then a competing miner mines depth+1 blocks on the fork point and wins; A's user transactions are dropped
 * from the mempool with ReplaceAcrossFork. Everything (hashes, keys, timestamps in the TSV) derives from the seed:
 * the same options give byte-identical output.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { sha256, Rng, tsvTimestamp } from './determinism.js';
import { seededAccount } from './keys.js';
import { TxBuilder } from './txs.js';
import type { Account, BlockRec, BnsState, BranchState, BuiltTx, ChainSummary, GeneratedMessage, GeneratedTx, GeneratorOptions } from './types.js';

const ZERO32 = '0x' + '0'.repeat(64);

export class ChainGenerator {
  readonly opts: Required<GeneratorOptions>;
  private readonly rng: Rng;
  private readonly accounts: Account[];
  private readonly miners: Account[];
  private msgId = 0;
  private burnHeight: number;
  private readonly burnHashes: string[] = [];
  /** blocks of the branch being extended, by height (index 0: the boot parent) */
  private chain: BlockRec[] = [];
  private state: BranchState = { nonces: {}, contracts: [], contractSeq: 0, bns: { ready: false, seq: 0, names: {}, fqns: [] } };
  private readonly summaryData: ChainSummary;
  private readonly seenTx = new Set<string>();
  /** block messages' meta, to fix finallyCanonical after forks */
  private readonly blockMessages = new Map<string, GeneratedMessage>();
  private readonly canonicalIndexes = new Set<string>();
  private readonly orphanedIndexes = new Set<string>();
  private readonly txsOfBlock = new Map<string, GeneratedTx[]>();
  private readonly eventsOfBlock = new Map<string, number>();
  private readonly txs: TxBuilder;

  constructor(options: GeneratorOptions) {
    this.opts = {
      bns: false,
      bnsPerBlock: 1,
      forks: false,
      forkEvery: 50,
      forkDepth: 2,
      mempool: true,
      microblocks: true,
      microblockEvery: 10,
      accounts: 24,
      maturity: 10,
      startTime: 1_700_000_000,
      blockInterval: 600,
      burnStartHeight: 1000,
      ...options,
    };
    if (!Number.isInteger(this.opts.blocks) || this.opts.blocks < 1) throw new Error('blocks must be a positive integer');
    if (!Number.isInteger(this.opts.txsPerBlock) || this.opts.txsPerBlock < 0) throw new Error('txsPerBlock must be >= 0');
    this.opts.forkEvery = Math.max(4, this.opts.forkEvery);
    this.opts.forkDepth = Math.max(1, this.opts.forkDepth);
    this.rng = new Rng(this.opts.seed);
    const account = (tag: string): Account => seededAccount(this.opts.seed, tag);
    this.accounts = Array.from({ length: Math.max(2, this.opts.accounts) }, (_, i) => account(`account-${i}`));
    this.miners = [account('miner-a'), account('miner-b')];
    this.burnHeight = this.opts.burnStartHeight - 1;
    this.summaryData = {
      seed: this.opts.seed,
      messages: 0,
      byPath: {},
      tipHeight: 0,
      tipIndexBlockHash: '',
      blocksSent: 0,
      canonicalBlocks: 0,
      orphanedBlocks: 0,
      forks: 0,
      canonicalTxs: 0,
      canonicalUserTxs: 0,
      canonicalByType: {},
      canonicalEvents: 0,
      distinctTxs: 0,
      microblockStreams: 0,
      contractsDeployed: 0,
    };
    this.txs = new TxBuilder({
      opts: this.opts,
      rng: this.rng,
      accounts: this.accounts,
      summary: this.summaryData,
      state: () => this.state,
      chainLength: () => this.chain.length,
    });
  }

  /** Accounts that send transactions (address and private key), e.g. to look them up through the API. */
  get accountAddresses(): string[] {
    return this.accounts.map((a) => a.address);
  }

  /** A signed STX transfer with the same sender and nonce as `t` and half its fee (a replace-by-fee loser). */
  lowerFeeTwin(t: GeneratedTx): Promise<GeneratedTx> {
    return this.txs.lowerFeeTwin(t);
  }

  /** Final figures; complete once messages() has been fully consumed. */
  summary(): ChainSummary {
    const s = this.summaryData;
    s.canonicalBlocks = this.canonicalIndexes.size;
    s.orphanedBlocks = this.orphanedIndexes.size;
    s.canonicalTxs = 0;
    s.canonicalUserTxs = 0;
    s.canonicalEvents = 0;
    s.canonicalByType = {};
    for (const h of this.canonicalIndexes) {
      for (const t of this.txsOfBlock.get(h) ?? []) {
        s.canonicalTxs++;
        if (t.type !== 'coinbase') s.canonicalUserTxs++;
        s.canonicalByType[t.type] = (s.canonicalByType[t.type] ?? 0) + 1;
      }
      s.canonicalEvents += this.eventsOfBlock.get(h) ?? 0;
    }
    s.distinctTxs = this.seenTx.size;
    return { ...s, byPath: { ...s.byPath }, canonicalByType: { ...s.canonicalByType } };
  }

  // --------------------------------------------------------------------------------------------
  // messages

  private message(path: GeneratedMessage['path'], body: unknown, txs: GeneratedTx[], unix: number): GeneratedMessage {
    this.msgId++;
    this.summaryData.messages++;
    this.summaryData.byPath[path] = (this.summaryData.byPath[path] ?? 0) + 1;
    for (const t of txs) this.seenTx.add(t.txId);
    return { id: this.msgId, timestamp: tsvTimestamp(unix, this.msgId * 997), path, body: JSON.stringify(body), txs };
  }

  private newBurnBlock(): GeneratedMessage {
    this.burnHeight++;
    const h = '0x' + sha256('burn', this.opts.seed, this.burnHeight);
    this.burnHashes.push(h);
    const parent = this.burnHashes.length > 1 ? this.burnHashes[this.burnHashes.length - 2] : '0x' + sha256('burn', this.opts.seed, this.burnHeight - 1);
    const recipient = this.rng.next() < 0.5 ? [{ recipient: 'mzYBtAjNzuEvEMAp2ahx8oT9kWWvb5L2Rj', amt: this.rng.int(1000, 20000) }] : [];
    return this.message(
      '/new_burn_block',
      {
        burn_block_hash: h,
        burn_block_height: this.burnHeight,
        burn_amount: this.rng.int(10_000, 50_000),
        reward_recipients: recipient,
        reward_slot_holders: recipient.map((r) => r.recipient),
        consensus_hash: '0x' + sha256('consensus', this.opts.seed, this.burnHeight).slice(0, 40),
        parent_burn_block_hash: parent,
      },
      [],
      this.burnTime(),
    );
  }

  private burnTime(): number {
    return this.opts.startTime + (this.burnHeight - this.opts.burnStartHeight) * this.opts.blockInterval;
  }

  /** Every message of the chain, in the order a node sends them. */
  async *messages(): AsyncGenerator<GeneratedMessage> {
    const o = this.opts;
    // the boot parent: block 0 is never sent (as with nodes that put the genesis txs into block 1)
    this.chain = [
      {
        height: 0,
        blockHash: '0x' + sha256('genesis-block', o.seed),
        indexBlockHash: '0x' + sha256('genesis-index', o.seed),
        consensusHash: '0x' + sha256('genesis-consensus', o.seed).slice(0, 40),
        burnHash: '0x' + sha256('burn', o.seed, o.burnStartHeight - 1),
        burnHeight: o.burnStartHeight - 1,
        burnTime: o.startTime - o.blockInterval,
        miner: this.miners[0].address,
        feesAnchored: 0,
      },
    ];
    let height = 0;
    while (height < o.blocks) {
      const forkHere = o.forks && height >= 2 && height % o.forkEvery === 0 && height + o.forkDepth + 1 <= o.blocks;
      if (forkHere) {
        yield* this.fork();
        height += o.forkDepth + 1;
        continue;
      }
      const tip = this.chain[this.chain.length - 1];
      const streamHere = o.microblocks && height >= 1 && (height + 1) % o.microblockEvery === 0;
      let streamTxs: BuiltTx[] = [];
      let streamInfo: { hashes: string[]; seqs: number[] } | undefined;
      if (streamHere) {
        const r = await this.microblockStream(tip);
        streamTxs = r.txs;
        streamInfo = r.info;
        for (const m of r.messages) yield m;
      }
      yield* this.anchoredBlock(tip, 0, streamTxs, streamInfo, true);
      height++;
    }
    const tip = this.chain[this.chain.length - 1];
    this.summaryData.tipHeight = tip.height;
    this.summaryData.tipIndexBlockHash = tip.indexBlockHash;
  }

  /** A losing branch of forkDepth blocks, then the winning branch of forkDepth + 1 blocks on the same parent. */
  private async *fork(): AsyncGenerator<GeneratedMessage> {
    const o = this.opts;
    this.summaryData.forks++;
    const base = this.chain.slice();
    const baseState = structuredClone(this.state);
    // branch A (miner b), loses
    const lost: GeneratedTx[] = [];
    const losingIndexes: string[] = [];
    for (let i = 0; i < o.forkDepth; i++) {
      for await (const m of this.anchoredBlock(this.chain[this.chain.length - 1], 1, [], undefined, false)) {
        if (m.path === '/new_block') {
          lost.push(...m.txs.filter((t) => t.type !== 'coinbase'));
          losingIndexes.push(m.block!.indexBlockHash);
        }
        yield m;
      }
    }
    // branch B (miner a) from the same parent with the parent's state: conflicting nonces
    this.chain = base;
    this.state = baseState;
    for (let i = 0; i <= o.forkDepth; i++) {
      yield* this.anchoredBlock(this.chain[this.chain.length - 1], 0, [], undefined, true);
    }
    for (const h of losingIndexes) {
      this.canonicalIndexes.delete(h);
      this.orphanedIndexes.add(h);
      const msg = this.blockMessages.get(h);
      if (msg?.block) msg.block.finallyCanonical = false;
    }
    if (o.mempool && lost.length) {
      yield this.message('/drop_mempool_tx', { dropped_txids: lost.map((t) => t.txId), reason: 'ReplaceAcrossFork', new_txid: null }, lost, this.burnTime());
    }
  }

  /** A microblock stream of two microblocks on `parent`, to be confirmed by the next block. */
  private async microblockStream(parent: BlockRec) {
    const perMb = Math.max(1, Math.floor(this.opts.txsPerBlock / 4));
    const messages: GeneratedMessage[] = [];
    const txs: BuiltTx[] = [];
    const hashes: string[] = [];
    const seqs: number[] = [];
    let prev = parent.blockHash;
    for (let seq = 0; seq < 2; seq++) {
      const mbHash = '0x' + sha256('microblock', this.opts.seed, parent.indexBlockHash, seq);
      for (let i = 0; i < perMb; i++) {
        const t = await this.txs.userTx({ offChain: true, onlySimple: true });
        t.receipt.microblock_sequence = seq;
        t.receipt.microblock_hash = mbHash;
        t.receipt.microblock_parent_hash = prev;
        txs.push(t);
      }
      hashes.push(mbHash);
      seqs.push(seq);
      prev = mbHash;
    }
    if (this.opts.mempool) messages.push(this.message('/new_mempool_tx', txs.map((t) => t.meta.rawTx), txs.map((t) => t.meta), this.burnTime()));
    const events: Record<string, unknown>[] = [];
    txs.forEach((t, i) => {
      t.receipt.tx_index = i;
      for (const e of t.events) events.push({ ...e, event_index: events.length });
    });
    messages.push(
      this.message(
        '/new_microblocks',
        {
          parent_index_block_hash: parent.indexBlockHash,
          burn_block_hash: parent.burnHash,
          burn_block_height: parent.burnHeight,
          burn_block_timestamp: parent.burnTime,
          transactions: txs.map((t) => t.receipt),
          events,
        },
        txs.map((t) => t.meta),
        this.burnTime(),
      ),
    );
    parent.stream = { lastHash: prev, lastSeq: 1 };
    this.summaryData.microblockStreams++;
    return { messages, txs, info: { hashes, seqs } };
  }

  /** /new_mempool_tx (+ a replace-by-fee pair now and then), /new_burn_block, /new_block. */
  private async *anchoredBlock(
    parent: BlockRec,
    minerIdx: number,
    streamTxs: BuiltTx[],
    stream: { hashes: string[]; seqs: number[] } | undefined,
    canonicalNow: boolean,
  ): AsyncGenerator<GeneratedMessage> {
    const o = this.opts;
    const miner = this.miners[minerIdx];
    const height = parent.height + 1;
    const user: BuiltTx[] = [];
    for (let i = 0; i < o.txsPerBlock; i++) user.push(await this.txs.userTx({ firstBlock: height === 1 && i === 0 }));
    if (o.bns && height >= 2) for (let i = 0; i < o.bnsPerBlock; i++) user.push(await this.txs.bnsCall());
    // replace-by-fee: the first user tx was first announced with a lower fee (a different tx, same nonce)
    let replaced: GeneratedTx | undefined;
    if (o.mempool && user.length && canonicalNow && this.rng.next() < 0.04 && user[0].meta.type === 'token_transfer') {
      replaced = await this.txs.lowerFeeTwin(user[0].meta);
    }
    if (o.mempool && user.length) {
      const announced = [...(replaced ? [replaced] : []), ...user.map((t) => t.meta)];
      yield this.message('/new_mempool_tx', announced.map((t) => t.rawTx), announced, this.burnTime() + 1);
      if (replaced) {
        yield this.message('/drop_mempool_tx', { dropped_txids: [replaced.txId], reason: 'ReplaceByFee', new_txid: user[0].meta.txId }, [replaced], this.burnTime() + 1);
      }
    }
    yield this.newBurnBlock();
    const coinbase = await this.txs.coinbaseTx(miner, height);
    const burnHash = this.burnHashes[this.burnHashes.length - 1];
    const consensusHash = '0x' + sha256('consensus', o.seed, this.burnHeight).slice(0, 40);
    const blockHash = '0x' + sha256('block', o.seed, this.burnHeight, height, minerIdx);
    const indexBlockHash = '0x' + createHash('sha512-256').update(Buffer.from(blockHash.slice(2) + consensusHash.slice(2), 'hex')).digest('hex');
    const all = [coinbase, ...streamTxs, ...user];
    const receipts: Record<string, unknown>[] = [];
    const events: Record<string, unknown>[] = [];
    all.forEach((t, i) => {
      const r: Record<string, unknown> = { ...t.receipt, tx_index: i };
      if (!stream || !streamTxs.includes(t)) {
        r.microblock_sequence = null;
        r.microblock_hash = null;
        r.microblock_parent_hash = null;
      }
      receipts.push(r);
      for (const e of t.events) events.push({ ...e, event_index: events.length });
    });
    const fees = [coinbase, ...user].reduce((s, t) => s + t.meta.fee, 0);
    const rewards: Record<string, unknown>[] = [];
    const matured = this.chain[height - o.maturity];
    if (height > o.maturity && matured && matured.height > 0) {
      rewards.push({
        from_index_consensus_hash: '0x' + sha256('reward-consensus', matured.consensusHash),
        from_stacks_block_hash: matured.blockHash,
        recipient: matured.miner,
        coinbase_amount: '1000000000',
        tx_fees_anchored: String(matured.feesAnchored),
        tx_fees_streamed_confirmed: '0',
        tx_fees_streamed_produced: '0',
      });
    }
    // as a real node reports them: the anchored txs' costs summed, and the confirmed stream's apart
    type Cost = { read_count: number; read_length: number; runtime: number; write_count: number; write_length: number };
    const cost = (txs: BuiltTx[]) =>
      txs.reduce<Cost>(
        (acc, t) => {
          const c = t.receipt.execution_cost as Cost;
          return {
            read_count: acc.read_count + c.read_count,
            read_length: acc.read_length + c.read_length,
            runtime: acc.runtime + c.runtime,
            write_count: acc.write_count + c.write_count,
            write_length: acc.write_length + c.write_length,
          };
        },
        { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
      );
    const body = {
      block_hash: blockHash,
      block_height: height,
      burn_block_hash: burnHash,
      burn_block_height: this.burnHeight,
      burn_block_time: this.burnTime(),
      index_block_hash: indexBlockHash,
      parent_block_hash: parent.blockHash,
      parent_index_block_hash: parent.indexBlockHash,
      parent_microblock: stream ? parent.stream!.lastHash : ZERO32,
      parent_microblock_sequence: stream ? parent.stream!.lastSeq : 0,
      parent_burn_block_hash: parent.burnHash,
      parent_burn_block_height: parent.burnHeight,
      parent_burn_block_timestamp: parent.burnTime,
      miner_txid: '0x' + sha256('miner-txid', o.seed, this.burnHeight),
      events,
      transactions: receipts,
      matured_miner_rewards: rewards,
      anchored_cost: cost(stream ? [coinbase, ...user] : all),
      confirmed_microblocks_cost: cost(stream ? streamTxs : []),
      pox_v1_unlock_height: 2,
      pox_v2_unlock_height: 3,
      pox_v3_unlock_height: 4,
    };
    const rec: BlockRec = {
      height,
      blockHash,
      indexBlockHash,
      consensusHash,
      burnHash,
      burnHeight: this.burnHeight,
      burnTime: this.burnTime(),
      miner: miner.address,
      feesAnchored: fees,
    };
    this.chain.push(rec);
    const metas = all.map((t) => t.meta);
    const msg = this.message('/new_block', body, metas, this.burnTime() + 2);
    msg.block = { height, indexBlockHash, finallyCanonical: canonicalNow };
    this.blockMessages.set(indexBlockHash, msg);
    this.txsOfBlock.set(indexBlockHash, metas);
    this.eventsOfBlock.set(indexBlockHash, events.length);
    if (canonicalNow) this.canonicalIndexes.add(indexBlockHash);
    this.summaryData.blocksSent++;
    yield msg;
    const attachments = all
      .filter((t) => t.attachment)
      .map((t) => ({ ...t.attachment, index_block_hash: indexBlockHash, block_height: String(height), tx_id: t.meta.txId }));
    if (attachments.length) yield this.message('/attachments/new', attachments, [], this.burnTime() + 3);
  }

  /** The BNS state of the branch generated last (after messages(): the canonical chain's). */
  bnsState(): BnsState {
    return structuredClone(this.state.bns);
  }
}

// outputs

/** One TSV line in the fixtures' format: `id\ttimestamp\tpath\tjson-body`. */
export function tsvLine(m: Pick<GeneratedMessage, 'id' | 'timestamp' | 'path' | 'body'>): string {
  return `${m.id}\t${m.timestamp}\t${m.path}\t${m.body}`;
}

/** Writes the chain as a TSV (the fixtures' format); resolves with the summary. */
export async function generateToFile(opts: GeneratorOptions, file: string, onProgress?: (m: GeneratedMessage) => void): Promise<ChainSummary> {
  const gen = new ChainGenerator(opts);
  const out = createWriteStream(file, { encoding: 'utf8' });
  const failed = new Promise<never>((_, rej) => out.once('error', rej));
  for await (const m of gen.messages()) {
    if (!out.write(tsvLine(m) + '\n')) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
    onProgress?.(m);
  }
  await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
  return gen.summary();
}

/** POSTs one message and waits for the answer, retrying non-200 answers and connection errors like a node does. */
export async function postMessage(url: string, m: Pick<GeneratedMessage, 'path' | 'body'>, retries = 20): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(url.replace(/\/$/, '') + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      await res.arrayBuffer();
      if (res.status === 200 || attempt >= retries) return res.status;
    } catch (err) {
      if (attempt >= retries) throw err;
    }
    await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** attempt)));
  }
}

/** Streams the chain into an observer, one message at a time (a node waits for each answer). */
export async function streamToObserver(opts: GeneratorOptions, url: string, onProgress?: (m: GeneratedMessage, ms: number) => void): Promise<ChainSummary> {
  const gen = new ChainGenerator(opts);
  for await (const m of gen.messages()) {
    const t0 = performance.now();
    const status = await postMessage(url, m);
    if (status !== 200) throw new Error(`message ${m.id} (${m.path}) answered ${status}`);
    onProgress?.(m, performance.now() - t0);
  }
  return gen.summary();
}
