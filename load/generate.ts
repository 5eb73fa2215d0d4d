/**
 * Synthetic chain generator: a deterministic (seeded) Stacks chain of valid, signed transactions, wrapped in the event
 * observer messages a stacks-node POSTs (/new_burn_block, /new_mempool_tx, /new_microblocks, /new_block,
 * /drop_mempool_tx), with competing branches that later win when asked.
 *
 *   node dist/load/generate.js --blocks N --txs-per-block M --seed S [--forks] [--no-mempool] [--no-microblocks]
 *        (--out F.tsv | --url http://127.0.0.1:3700)
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
import { pathToFileURL } from 'node:url';
import {
  AddressHashMode,
  AnchorMode,
  ClarityVersion,
  Cl,
  StacksTransactionWire,
  TransactionSigner,
  createCoinbasePayload,
  createSingleSigSpendingCondition,
  createStandardAuth,
  makeUnsignedContractCall,
  makeUnsignedContractDeploy,
  makeUnsignedSTXTokenTransfer,
  privateKeyToPublic,
  publicKeyToAddressSingleSig,
  serializeCV,
  type ClarityValue,
} from '@stacks/transactions';
import { ArgReader } from './bench-support.js';

// ------------------------------------------------------------------------------------------------
// options and results

export interface GeneratorOptions {
  /** Height of the final canonical tip. */
  blocks: number;
  /** User transactions per anchored block (the coinbase comes on top). */
  txsPerBlock: number;
  seed: string;
  /** Competing branches that later win (default false). */
  forks?: boolean;
  /** A fork starts every this many canonical blocks (default 50, at least 4). */
  forkEvery?: number;
  /** Blocks of the losing branch per fork (default 2); the winner mines depth + 1. */
  forkDepth?: number;
  /** /new_mempool_tx before a transaction is mined, /drop_mempool_tx for replaced ones (default true). */
  mempool?: boolean;
  /** A microblock stream before every `microblockEvery`-th block (default true, every 10). */
  microblocks?: boolean;
  microblockEvery?: number;
  /** Funded accounts that send transactions (default 24). */
  accounts?: number;
  /** Blocks before a miner reward matures (default 10; mainnet 100). */
  maturity?: number;
  /** Unix time of the first burn block (default 1,700,000,000) and seconds between burn blocks (default 600). */
  startTime?: number;
  blockInterval?: number;
  /** First burn block height (default 1000). */
  burnStartHeight?: number;
  /**
   * BNS v1 activity (default false): from height 2 one signed contract call of the BNS boot contract per anchored block —
   * namespace-ready, then name-register / -update / -transfer / -renewal (without zonefile: no print) / -revoke — with
   * the print and `bns::names` NFT events the node emits, and an `/attachments/new` message after the block for each
   * zonefile (name-update zonefiles carry a subdomain TXT record).
   */
  bns?: boolean;
  /** BNS calls per anchored block with `bns` (default 1): a name-heavy chain for the naming benchmarks. */
  bnsPerBlock?: number;
}

export type GeneratedTxType = 'coinbase' | 'token_transfer' | 'smart_contract' | 'contract_call';

export interface GeneratedTx {
  txId: string;
  rawTx: string;
  type: GeneratedTxType;
  sender: string;
  nonce: number;
  fee: number;
  /** contract_call: "contract_id::function" */
  call?: string;
  status: 'success' | 'abort_by_response';
  eventCount: number;
}

export interface GeneratedMessage {
  /** 1-based, the TSV id column */
  id: number;
  /** TSV timestamp column (derived from the chain's burn time, not the wall clock) */
  timestamp: string;
  path: '/new_block' | '/new_burn_block' | '/new_mempool_tx' | '/drop_mempool_tx' | '/new_microblocks' | '/attachments/new';
  body: string;
  /** anchored block messages: height, index hash and whether the block is canonical when the chain is complete */
  block?: { height: number; indexBlockHash: string; finallyCanonical: boolean };
  /** the transactions the message carries (block, microblocks, mempool) */
  txs: GeneratedTx[];
}

export interface ChainSummary {
  seed: string;
  messages: number;
  byPath: Record<string, number>;
  tipHeight: number;
  tipIndexBlockHash: string;
  /** anchored blocks sent / canonical at the end (heights 1..tip) / orphaned by forks */
  blocksSent: number;
  canonicalBlocks: number;
  orphanedBlocks: number;
  forks: number;
  /** transactions mined in canonical blocks (coinbase included) and the user transactions among them */
  canonicalTxs: number;
  canonicalUserTxs: number;
  /** canonical transactions by type */
  canonicalByType: Record<string, number>;
  /** canonical events (as the node reports them for successful transactions) */
  canonicalEvents: number;
  /** distinct transactions across all messages */
  distinctTxs: number;
  /** txs sent to /new_mempool_tx that were never mined canonically nor dropped (always 0 by construction) */
  microblockStreams: number;
  contractsDeployed: number;
}

// ------------------------------------------------------------------------------------------------
// determinism helpers

function sha256(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('|')).digest('hex');
}

/** xoshiro128** seeded from sha256(seed): fast and reproducible. */
class Rng {
  private s: Uint32Array;
  constructor(seed: string) {
    const h = Buffer.from(sha256('rng', seed), 'hex');
    this.s = new Uint32Array([h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), h.readUInt32LE(12) | 1]);
  }
  next(): number {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.next() * a.length)];
  }
}
function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

const hex0x = (h: string) => (h.startsWith('0x') ? h.toLowerCase() : '0x' + h.toLowerCase());

function tsvTimestamp(unix: number, micros: number): string {
  const d = new Date(unix * 1000);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')}.${String(micros % 1_000_000).padStart(6, '0')}+00`;
}

/** One TSV line in the fixtures' format: `id\ttimestamp\tpath\tjson-body`. */
export function tsvLine(m: Pick<GeneratedMessage, 'id' | 'timestamp' | 'path' | 'body'>): string {
  return `${m.id}\t${m.timestamp}\t${m.path}\t${m.body}`;
}

// ------------------------------------------------------------------------------------------------
// the contract every deploy uses

export const CONTRACT_SOURCE = `;; stacks-pulse synthetic chain contract
(define-fungible-token pulse-token)
(define-non-fungible-token pulse-nft uint)
(define-data-var counter uint u0)
(define-public (ping (n uint))
  (begin
    (asserts! (> n u0) (err u1))
    (var-set counter (+ (var-get counter) n))
    (print {event: "ping", n: n, sender: tx-sender})
    (ok (var-get counter))))
(define-public (mint-ft (amount uint) (recipient principal)) (ft-mint? pulse-token amount recipient))
(define-public (transfer-ft (amount uint) (recipient principal)) (ft-transfer? pulse-token amount tx-sender recipient))
(define-public (mint-nft (id uint) (recipient principal)) (nft-mint? pulse-nft id recipient))
(define-public (transfer-nft (id uint) (recipient principal)) (nft-transfer? pulse-nft id tx-sender recipient))
(define-read-only (get-counter) (var-get counter))
`;

const RESP_BOOL = { response: { ok: 'bool', error: 'uint128' } };
/** The ABI as the node reports it in `contract_abi`. */
export const CONTRACT_ABI = {
  functions: [
    { name: 'mint-ft', access: 'public', args: [{ name: 'amount', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'mint-nft', access: 'public', args: [{ name: 'id', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'ping', access: 'public', args: [{ name: 'n', type: 'uint128' }], outputs: { type: { response: { ok: 'uint128', error: 'uint128' } } } },
    { name: 'transfer-ft', access: 'public', args: [{ name: 'amount', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'transfer-nft', access: 'public', args: [{ name: 'id', type: 'uint128' }, { name: 'recipient', type: 'principal' }], outputs: { type: RESP_BOOL } },
    { name: 'get-counter', access: 'read_only', args: [], outputs: { type: 'uint128' } },
  ],
  variables: [{ name: 'counter', type: 'uint128', access: 'variable' }],
  maps: [],
  fungible_tokens: [{ name: 'pulse-token' }],
  non_fungible_tokens: [{ name: 'pulse-nft', type: 'uint128' }],
  epoch: 'Epoch25',
  clarity_version: 'Clarity2',
};

// ------------------------------------------------------------------------------------------------
// chain state

interface Account {
  key: string;
  pub: string;
  address: string;
}

interface ContractState {
  id: string;
  counter: bigint;
  nextNft: number;
  ft: Record<string, string>; // address -> balance (decimal)
  nft: Record<string, string>; // id -> owner
}

interface BranchState {
  nonces: Record<string, number>;
  contracts: ContractState[];
  contractSeq: number;
  bns: BnsState;
}

/** BNS v1 state of a branch (GeneratorOptions.bns). */
export interface BnsState {
  ready: boolean;
  seq: number;
  /** by fully qualified name: owner (the bns::names NFT holder), revoked, last zonefile hash (hex, no 0x) */
  names: Record<string, { owner: string; revoked: boolean; zonefileHash: string }>;
  /** every name registered on the branch, in order (a random pick without scanning `names`) */
  fqns: string[];
}

export const BNS_TESTNET = 'ST000000000000000000002AMW42H.bns';
export const BNS_NAMESPACE = 'pulse';

interface BlockRec {
  height: number;
  blockHash: string;
  indexBlockHash: string;
  consensusHash: string;
  burnHash: string;
  burnHeight: number;
  burnTime: number;
  miner: string;
  feesAnchored: number;
  /** last microblock confirmed-to-be of this block's stream, set when a stream is emitted */
  stream?: { lastHash: string; lastSeq: number };
}

const ZERO32 = '0x' + '0'.repeat(64);

interface BuiltTx {
  meta: GeneratedTx;
  /** the node's receipt (without placement fields) */
  receipt: Record<string, unknown>;
  /** events without event_index */
  events: Record<string, unknown>[];
  /** a BNS zonefile the node announces after the block (`/attachments/new`, without its placement fields) */
  attachment?: Record<string, unknown>;
}

interface CostRange {
  runtime: [number, number];
  reads: [number, number];
}

const COSTS: Record<string, CostRange> = {
  token_transfer: { runtime: [0, 0], reads: [0, 0] },
  coinbase: { runtime: [0, 0], reads: [0, 0] },
  smart_contract: { runtime: [200_000, 900_000], reads: [5, 20] },
  contract_call: { runtime: [20_000, 400_000], reads: [2, 12] },
};

/** The node's serde JSON of a few Clarity values (the store reads raw_value; this only keeps the shape plausible). */
function nodeValueJson(v: ClarityValue): unknown {
  const c = v as { type: string; value?: unknown };
  switch (c.type) {
    case 'uint':
      return { UInt: Number(c.value) };
    case 'int':
      return { Int: Number(c.value) };
    case 'true':
    case 'false':
      return { Bool: c.type === 'true' };
    case 'ascii':
      return { Sequence: { String: { ASCII: { data: [...Buffer.from(String(c.value), 'ascii')] } } } };
    case 'address':
      return { Principal: { Standard: String(c.value) } };
    case 'tuple': {
      const data = c.value as Record<string, ClarityValue>;
      return { Tuple: { data_map: Object.fromEntries(Object.entries(data).map(([k, x]) => [k, nodeValueJson(x)])) } };
    }
    default:
      return { [c.type]: c.value ?? null };
  }
}

// ------------------------------------------------------------------------------------------------
// generator

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
    const account = (tag: string): Account => {
      const key = sha256('key', this.opts.seed, tag) + '01';
      const pub = privateKeyToPublic(key) as string;
      return { key, pub, address: publicKeyToAddressSingleSig(pub, 'testnet') };
    };
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
  }

  /** Accounts that send transactions (address and private key), e.g. to look them up through the API. */
  get accountAddresses(): string[] {
    return this.accounts.map((a) => a.address);
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
        const t = await this.userTx({ offChain: true, onlySimple: true });
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
    for (let i = 0; i < o.txsPerBlock; i++) user.push(await this.userTx({ firstBlock: height === 1 && i === 0 }));
    if (o.bns && height >= 2) for (let i = 0; i < o.bnsPerBlock; i++) user.push(await this.bnsCall());
    // replace-by-fee: the first user tx was first announced with a lower fee (a different tx, same nonce)
    let replaced: GeneratedTx | undefined;
    if (o.mempool && user.length && canonicalNow && this.rng.next() < 0.04 && user[0].meta.type === 'token_transfer') {
      replaced = await this.lowerFeeTwin(user[0].meta);
    }
    if (o.mempool && user.length) {
      const announced = [...(replaced ? [replaced] : []), ...user.map((t) => t.meta)];
      yield this.message('/new_mempool_tx', announced.map((t) => t.rawTx), announced, this.burnTime() + 1);
      if (replaced) {
        yield this.message('/drop_mempool_tx', { dropped_txids: [replaced.txId], reason: 'ReplaceByFee', new_txid: user[0].meta.txId }, [replaced], this.burnTime() + 1);
      }
    }
    yield this.newBurnBlock();
    const coinbase = await this.coinbaseTx(miner, height);
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

  // --------------------------------------------------------------------------------------------
  // transactions

  private nextNonce(addr: string): number {
    const n = this.state.nonces[addr] ?? 0;
    this.state.nonces[addr] = n + 1;
    return n;
  }

  private fee(): number {
    return this.rng.int(180, 3000);
  }

  private costOf(type: string) {
    const c = COSTS[type];
    const reads = this.rng.int(c.reads[0], c.reads[1]);
    return {
      read_count: reads,
      read_length: reads * this.rng.int(0, 400),
      runtime: this.rng.int(c.runtime[0], c.runtime[1]),
      write_count: Math.floor(reads / 3),
      write_length: Math.floor(reads / 3) * this.rng.int(0, 120),
    };
  }

  private static sign(tx: StacksTransactionWire, key: string): { rawTx: string; txId: string } {
    new TransactionSigner(tx).signOrigin(key);
    return { rawTx: hex0x(tx.serialize()), txId: hex0x(tx.txid()) };
  }

  private receipt(txId: string, rawTx: string, type: string, status: 'success' | 'abort_by_response', result: ClarityValue, abi: unknown = null) {
    return {
      txid: txId,
      tx_index: 0,
      raw_tx: rawTx,
      raw_result: hex0x(serializeCV(result)),
      status,
      execution_cost: this.costOf(type),
      contract_abi: abi,
      burnchain_op: null,
      vm_error: null,
      microblock_sequence: null as number | null,
      microblock_hash: null as string | null,
      microblock_parent_hash: null as string | null,
    };
  }

  private async coinbaseTx(miner: Account, height: number): Promise<BuiltTx> {
    const nonce = this.nextNonce(miner.address);
    const tx = new StacksTransactionWire({
      payload: createCoinbasePayload(Buffer.from(sha256('coinbase', this.opts.seed, height, miner.address), 'hex')),
      auth: createStandardAuth(createSingleSigSpendingCondition(AddressHashMode.P2PKH, miner.pub, nonce, 0)),
      network: 'testnet',
    });
    tx.anchorMode = AnchorMode.OnChainOnly;
    const { rawTx, txId } = ChainGenerator.sign(tx, miner.key);
    const meta: GeneratedTx = { txId, rawTx, type: 'coinbase', sender: miner.address, nonce, fee: 0, status: 'success', eventCount: 0 };
    return { meta, receipt: this.receipt(txId, rawTx, 'coinbase', 'success', Cl.ok(Cl.bool(true))), events: [] };
  }

  private async lowerFeeTwin(t: GeneratedTx): Promise<GeneratedTx> {
    const acct = this.accounts.find((a) => a.address === t.sender)!;
    const tx = await makeUnsignedSTXTokenTransfer({
      recipient: this.accounts[0].address === t.sender ? this.accounts[1].address : this.accounts[0].address,
      amount: 1n,
      fee: Math.max(1, Math.floor(t.fee / 2)),
      nonce: t.nonce,
      publicKey: acct.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = ChainGenerator.sign(tx, acct.key);
    return { txId, rawTx, type: 'token_transfer', sender: t.sender, nonce: t.nonce, fee: Math.max(1, Math.floor(t.fee / 2)), status: 'success', eventCount: 0 };
  }

  /** One user transaction from a random account, valid against the branch state. */
  private async userTx(opt: { offChain?: boolean; onlySimple?: boolean; firstBlock?: boolean } = {}): Promise<BuiltTx> {
    const rng = this.rng;
    const from = rng.pick(this.accounts);
    let to = rng.pick(this.accounts);
    if (to === from) to = this.accounts[(this.accounts.indexOf(from) + 1) % this.accounts.length];
    const r = rng.next();
    const contracts = this.state.contracts;
    const mustDeploy = opt.firstBlock || (contracts.length === 0 && !opt.onlySimple);
    if (!mustDeploy && (opt.onlySimple || r < 0.4 || contracts.length === 0)) return this.transfer(from, to, opt.offChain);
    if (mustDeploy || r < 0.42) return this.deploy(from);
    const c = rng.pick(contracts);
    if (r < 0.7) return this.ping(from, c);
    if (r < 0.85) {
      const holders = Object.entries(c.ft).filter(([, b]) => BigInt(b) > 0n);
      if (holders.length && rng.next() < 0.6) {
        const [holder, bal] = rng.pick(holders);
        const sender = this.accounts.find((a) => a.address === holder)!;
        const rcpt = to === sender ? from : to;
        const amount = BigInt(rng.int(1, Number(BigInt(bal) > 1_000_000n ? 1_000_000n : BigInt(bal))));
        return this.ftCall(sender, c, 'transfer-ft', amount, rcpt);
      }
      return this.ftCall(from, c, 'mint-ft', BigInt(rng.int(1, 5_000_000)), to);
    }
    const owned = Object.entries(c.nft);
    if (owned.length && rng.next() < 0.5) {
      const [id, owner] = rng.pick(owned);
      const sender = this.accounts.find((a) => a.address === owner)!;
      const rcpt = to === sender ? from : to;
      return this.nftCall(sender, c, 'transfer-nft', Number(id), rcpt);
    }
    return this.nftCall(from, c, 'mint-nft', c.nextNft, to);
  }

  private async transfer(from: Account, to: Account, offChain = false): Promise<BuiltTx> {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee();
    const amount = BigInt(this.rng.int(1, 50_000_000));
    const memo = this.rng.next() < 0.3 ? `pulse ${nonce}` : '';
    const tx = await makeUnsignedSTXTokenTransfer({ recipient: to.address, amount, fee, nonce, memo, publicKey: from.pub, network: 'testnet' });
    // microblock txs need an anchor mode that allows off-chain; the builders' default (any) does
    if (offChain) tx.anchorMode = AnchorMode.Any;
    const { rawTx, txId } = ChainGenerator.sign(tx, from.key);
    const memoHex = Buffer.alloc(34);
    Buffer.from(memo, 'utf8').copy(memoHex);
    const events = [
      {
        txid: txId,
        type: 'stx_transfer_event',
        committed: true,
        stx_transfer_event: { sender: from.address, recipient: to.address, amount: amount.toString(), memo: memoHex.toString('hex') },
      },
    ];
    const meta: GeneratedTx = { txId, rawTx, type: 'token_transfer', sender: from.address, nonce, fee, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'token_transfer', 'success', Cl.ok(Cl.bool(true))), events };
  }

  private async deploy(from: Account): Promise<BuiltTx> {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee() * 10;
    const name = `pulse-${this.state.contractSeq++}`;
    const tx = await makeUnsignedContractDeploy({
      contractName: name,
      codeBody: CONTRACT_SOURCE,
      clarityVersion: ClarityVersion.Clarity2,
      fee,
      nonce,
      publicKey: from.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = ChainGenerator.sign(tx, from.key);
    const id = `${from.address}.${name}`;
    this.state.contracts.push({ id, counter: 0n, nextNft: 1, ft: {}, nft: {} });
    this.summaryData.contractsDeployed++;
    const meta: GeneratedTx = { txId, rawTx, type: 'smart_contract', sender: from.address, nonce, fee, status: 'success', eventCount: 0 };
    return { meta, receipt: this.receipt(txId, rawTx, 'smart_contract', 'success', Cl.ok(Cl.bool(true)), CONTRACT_ABI), events: [] };
  }

  private async call(from: Account, c: ContractState, fn: string, args: ClarityValue[]) {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee();
    const [address, name] = c.id.split('.');
    const tx = await makeUnsignedContractCall({
      contractAddress: address,
      contractName: name,
      functionName: fn,
      functionArgs: args,
      fee,
      nonce,
      postConditionMode: 'allow',
      publicKey: from.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = ChainGenerator.sign(tx, from.key);
    return { nonce, fee, rawTx, txId };
  }

  /** The BNS state of the branch generated last (after messages(): the canonical chain's). */
  bnsState(): BnsState {
    return structuredClone(this.state.bns);
  }

  /** One BNS v1 operation as a signed contract call of the boot contract, with the node's events (GeneratorOptions.bns). */
  private async bnsCall(): Promise<BuiltTx> {
    const s = this.state.bns;
    const rng = this.rng;
    const ns = BNS_NAMESPACE;
    const contract = { id: BNS_TESTNET } as ContractState;
    const buf = (x: string) => Cl.bufferFromUtf8(x);
    const nameCV = (name: string) => Cl.tuple({ name: buf(name), namespace: buf(ns) });
    // the node's serde JSON (`value`) is left out as null: the store reads raw_value
    const nftValue = (name: string) => ({ value: null, raw_value: hex0x(serializeCV(nameCV(name))) });
    const print = (value: ClarityValue) => ({
      type: 'contract_event',
      contract_event: { contract_identifier: BNS_TESTNET, topic: 'print', value: null, raw_value: hex0x(serializeCV(value)) },
    });
    const namePrint = (op: string, name: string, hash: string, sender: string) =>
      print(
        Cl.tuple({
          attachment: Cl.tuple({
            hash: Cl.bufferFromHex(hash),
            'attachment-index': Cl.uint(s.seq),
            metadata: Cl.tuple({ name: buf(name), namespace: buf(ns), op: Cl.stringAscii(op), 'tx-sender': Cl.standardPrincipal(sender) }),
          }),
        }),
      );
    const attachment = (op: string, name: string, hash: string, zonefile: string) => ({
      attachment_index: String(s.seq),
      content_hash: '0x' + hash,
      contract_id: BNS_TESTNET,
      metadata: hex0x(serializeCV(Cl.tuple({ op: Cl.stringAscii(op), name: buf(name), namespace: buf(ns) }))),
      content: '0x' + Buffer.from(zonefile, 'utf8').toString('hex'),
    });
    const built = async (from: Account, fn: string, args: ClarityValue[], events: Record<string, unknown>[], att?: Record<string, unknown>): Promise<BuiltTx> => {
      const { nonce, fee, rawTx, txId } = await this.call(from, contract, fn, args);
      const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${BNS_TESTNET}::${fn}`, status: 'success', eventCount: events.length };
      return {
        meta,
        receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))),
        events: events.map((e) => ({ txid: txId, committed: true, ...e })),
        ...(att ? { attachment: att } : {}),
      };
    };
    const zonefileHash = (z: string) => createHash('sha256').update(z).digest('hex').slice(0, 40);

    if (!s.ready) {
      s.ready = true;
      const from = this.accounts[0];
      const ready = Cl.tuple({
        namespace: buf(ns),
        status: Cl.stringAscii('ready'),
        properties: Cl.tuple({
          'launched-at': Cl.some(Cl.uint(this.chain.length)),
          lifetime: Cl.uint(5000),
          'revealed-at': Cl.uint(Math.max(0, this.chain.length - 1)),
          'namespace-import': Cl.standardPrincipal(from.address),
          'price-function': Cl.tuple({
            base: Cl.uint(4),
            coeff: Cl.uint(250),
            'no-vowel-discount': Cl.uint(4),
            'nonalpha-discount': Cl.uint(4),
            buckets: Cl.list([6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0].map((b) => Cl.uint(b))),
          }),
        }),
      });
      return built(from, 'namespace-ready', [buf(ns)], [print(ready)]);
    }
    s.seq++;
    // a random live name: a few picks from every name ever registered (revoked ones are a minority)
    let picked: string | undefined;
    for (let i = 0; i < 16 && s.fqns.length && !picked; i++) {
      const f = rng.pick(s.fqns);
      if (!s.names[f].revoked) picked = f;
    }
    const r = rng.next();
    if (!picked || r < 0.4) {
      const owner = rng.pick(this.accounts);
      const name = `n${s.seq}`;
      const zonefile = `$ORIGIN ${name}.${ns}\n$TTL 3600\n_http._tcp IN URI 10 1 "https://gaia.example/${name}/profile.json"\n`;
      const hash = zonefileHash(zonefile);
      s.names[`${name}.${ns}`] = { owner: owner.address, revoked: false, zonefileHash: hash };
      s.fqns.push(`${name}.${ns}`);
      return built(
        owner,
        'name-register',
        [buf(ns), buf(name), Cl.bufferFromHex('00'.repeat(20)), Cl.bufferFromHex(hash)],
        [
          { type: 'nft_mint_event', nft_mint_event: { asset_identifier: `${BNS_TESTNET}::names`, recipient: owner.address, ...nftValue(name) } },
          namePrint('name-register', name, hash, owner.address),
        ],
        attachment('name-register', name, hash, zonefile),
      );
    }
    const fqn = picked;
    const n = s.names[fqn];
    const name = fqn.slice(0, -(ns.length + 1));
    const owner = this.accounts.find((a) => a.address === n.owner)!;
    if (r < 0.6) {
      const subOwner = rng.pick(this.accounts).address;
      const sub = `$ORIGIN s${s.seq}\n$TTL 3600\n_http._tcp URI 10 1 "https://gaia.example/s${s.seq}/profile.json"\n`;
      const zonefile =
        `$ORIGIN ${fqn}\n$TTL 3600\n_resolver IN URI 10 1 "https://resolver.example"\n` +
        `s${s.seq} TXT "owner=${subOwner}" "seqn=0" "parts=1" "zf0=${Buffer.from(sub).toString('base64')}"\n`;
      const hash = zonefileHash(zonefile);
      n.zonefileHash = hash;
      return built(owner, 'name-update', [buf(ns), buf(name), Cl.bufferFromHex(hash)], [namePrint('name-update', name, hash, owner.address)], attachment('name-update', name, hash, zonefile));
    }
    if (r < 0.8) {
      let to = rng.pick(this.accounts);
      if (to === owner) to = this.accounts[(this.accounts.indexOf(owner) + 1) % this.accounts.length];
      n.owner = to.address;
      return built(
        owner,
        'name-transfer',
        [buf(ns), buf(name), Cl.standardPrincipal(to.address), Cl.none()],
        [
          { type: 'nft_transfer_event', nft_transfer_event: { asset_identifier: `${BNS_TESTNET}::names`, sender: owner.address, recipient: to.address, ...nftValue(name) } },
          namePrint('name-transfer', name, '', owner.address),
        ],
      );
    }
    if (r < 0.92) {
      // a renewal without zonefile hash: the contract prints nothing
      return built(owner, 'name-renewal', [buf(ns), buf(name), Cl.uint(1000), Cl.none(), Cl.none()], []);
    }
    n.revoked = true;
    return built(owner, 'name-revoke', [buf(ns), buf(name)], [namePrint('name-revoke', name, '', owner.address)]);
  }

  private async ping(from: Account, c: ContractState): Promise<BuiltTx> {
    const fail = this.rng.next() < 0.05;
    const n = fail ? 0n : BigInt(this.rng.int(1, 1000));
    const { nonce, fee, rawTx, txId } = await this.call(from, c, 'ping', [Cl.uint(n)]);
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::ping`, status: fail ? 'abort_by_response' : 'success', eventCount: 0 };
    if (fail) return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'abort_by_response', Cl.error(Cl.uint(1))), events: [] };
    c.counter += n;
    const printed = Cl.tuple({ event: Cl.stringAscii('ping'), n: Cl.uint(n), sender: Cl.standardPrincipal(from.address) });
    const events = [
      {
        txid: txId,
        type: 'contract_event',
        committed: true,
        contract_event: { contract_identifier: c.id, topic: 'print', value: nodeValueJson(printed), raw_value: hex0x(serializeCV(printed)) },
      },
    ];
    meta.eventCount = 1;
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.uint(c.counter))), events };
  }

  private async ftCall(from: Account, c: ContractState, fn: 'mint-ft' | 'transfer-ft', amount: bigint, to: Account): Promise<BuiltTx> {
    const { nonce, fee, rawTx, txId } = await this.call(from, c, fn, [Cl.uint(amount), Cl.standardPrincipal(to.address)]);
    const asset = `${c.id}::pulse-token`;
    const add = (addr: string, d: bigint) => {
      c.ft[addr] = (BigInt(c.ft[addr] ?? '0') + d).toString();
    };
    let ev: Record<string, unknown>;
    if (fn === 'mint-ft') {
      add(to.address, amount);
      ev = { type: 'ft_mint_event', ft_mint_event: { asset_identifier: asset, recipient: to.address, amount: amount.toString() } };
    } else {
      add(from.address, -amount);
      add(to.address, amount);
      ev = { type: 'ft_transfer_event', ft_transfer_event: { asset_identifier: asset, sender: from.address, recipient: to.address, amount: amount.toString() } };
    }
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::${fn}`, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))), events: [{ txid: txId, committed: true, ...ev }] };
  }

  private async nftCall(from: Account, c: ContractState, fn: 'mint-nft' | 'transfer-nft', id: number, to: Account): Promise<BuiltTx> {
    const { nonce, fee, rawTx, txId } = await this.call(from, c, fn, [Cl.uint(id), Cl.standardPrincipal(to.address)]);
    const asset = `${c.id}::pulse-nft`;
    const value = Cl.uint(id);
    const v = { value: nodeValueJson(value), raw_value: hex0x(serializeCV(value)) };
    let ev: Record<string, unknown>;
    if (fn === 'mint-nft') {
      c.nextNft++;
      ev = { type: 'nft_mint_event', nft_mint_event: { asset_identifier: asset, recipient: to.address, ...v } };
    } else {
      ev = { type: 'nft_transfer_event', nft_transfer_event: { asset_identifier: asset, sender: from.address, recipient: to.address, ...v } };
    }
    c.nft[String(id)] = to.address;
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::${fn}`, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))), events: [{ txid: txId, committed: true, ...ev }] };
  }
}

// ------------------------------------------------------------------------------------------------
// outputs

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

// ------------------------------------------------------------------------------------------------
// CLI

function parseCli(argv: string[]): { opts: GeneratorOptions; out?: string; url?: string; quiet: boolean } {
  const opts: GeneratorOptions = { blocks: 100, txsPerBlock: 10, seed: 'stacks-pulse' };
  let out: string | undefined;
  let url: string | undefined;
  let quiet = false;
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--blocks': opts.blocks = args.integer(); break;
      case '--txs-per-block': opts.txsPerBlock = args.integer(); break;
      case '--seed': opts.seed = args.value(); break;
      case '--forks': opts.forks = true; break;
      case '--bns': opts.bns = true; break;
      case '--bns-per-block': opts.bns = true; opts.bnsPerBlock = args.integer(); break;
      case '--fork-every': opts.forkEvery = args.integer(); break;
      case '--fork-depth': opts.forkDepth = args.integer(); break;
      case '--no-mempool': opts.mempool = false; break;
      case '--no-microblocks': opts.microblocks = false; break;
      case '--microblock-every': opts.microblockEvery = args.integer(); break;
      case '--accounts': opts.accounts = args.integer(); break;
      case '--maturity': opts.maturity = args.integer(); break;
      case '--out': out = args.value(); break;
      case '--url': url = args.value(); break;
      case '--quiet': quiet = true; break;
      case '-h':
      case '--help':
        process.stdout.write(
          'usage: node dist/load/generate.js --blocks N --txs-per-block M --seed S [--forks] [--fork-every N] [--fork-depth N]\n' +
            '         [--bns] [--bns-per-block N]\n' +
            '         [--no-mempool] [--no-microblocks] [--microblock-every N] [--accounts N] [--maturity N] (--out F.tsv | --url URL)\n',
        );
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default:
        throw new Error(`unknown option ${a} (see --help)`);
    }
  }
  if (!out === !url) throw new Error('give exactly one of --out F.tsv or --url URL');
  return { opts, out, url, quiet };
}

async function cli() {
  const { opts, out, url, quiet } = parseCli(process.argv.slice(2));
  const started = Date.now();
  let last = started;
  let blocks = 0;
  const progress = (m: GeneratedMessage) => {
    if (m.path === '/new_block') blocks++;
    const now = Date.now();
    if (!quiet && now - last > 2000) {
      last = now;
      process.stderr.write(`… ${blocks} blocks, ${m.id} messages, ${((now - started) / 1000).toFixed(0)} s\n`);
    }
  };
  const summary = out ? await generateToFile(opts, out, progress) : await streamToObserver(opts, url!, progress);
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ ...summary, seconds }, null, 2) + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cli().catch((err) => {
    process.stderr.write(`generate: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
