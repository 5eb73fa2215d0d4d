/** What the chain generator takes and gives (options, messages, summary) and the state it keeps per branch. */
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

// the state of a branch, and what a built transaction carries

export interface Account {
  key: string;
  pub: string;
  address: string;
}

export interface ContractState {
  id: string;
  counter: bigint;
  nextNft: number;
  ft: Record<string, string>; // address -> balance (decimal)
  nft: Record<string, string>; // id -> owner
}

export interface BranchState {
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

export interface BlockRec {
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

export interface BuiltTx {
  meta: GeneratedTx;
  /** the node's receipt (without placement fields) */
  receipt: Record<string, unknown>;
  /** events without event_index */
  events: Record<string, unknown>[];
  /** a BNS zonefile the node announces after the block (`/attachments/new`, without its placement fields) */
  attachment?: Record<string, unknown>;
}
