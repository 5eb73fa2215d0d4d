/**
 * The observer's message pipeline, independent of the HTTP transport: parse → validate → decode → store (one
 * transaction) → notify. Block-type messages run one at a time in arrival order; mempool messages have their own
 * queue so they never wait behind a large block.
 */
import type { Logger } from 'pino';
import type { Sql } from '../store/connect.js';
import { ingestMessage, recordDeadLetter, type IngestResult } from '../store/ingest.js';
import { isObserverPath, normalizeObserverPath, validateObserverMessage } from './schemas.js';
import { MessageDecodeError, messageToUpdate } from './to-update.js';
import { isPushable, type ChainUpdate } from '../chain/types.js';
import { checkTxNetworks, recordNetwork, recordedNetwork } from '../chain/network.js';

export interface ObserverReply {
  status: number;
  body: Record<string, unknown>;
}

export interface CommittedMessage {
  path: string;
  update: ChainUpdate;
  result: IngestResult;
  /** a push_outbox row was committed with the change: the push publisher owes it a publication */
  outbox: boolean;
}

/** Runs async jobs strictly one after another. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;
  run<T>(job: () => Promise<T>): Promise<T> {
    this.pending++;
    const next = this.tail.then(job, job);
    this.tail = next.catch(() => undefined).finally(() => this.pending--);
    return next;
  }
  get depth(): number {
    return this.pending;
  }
  idle(): Promise<unknown> {
    return this.tail;
  }
}

const MEMPOOL_PATHS = new Set(['/new_mempool_tx', '/drop_mempool_tx']);

function badRequest(message: string): ObserverReply {
  return { status: 400, body: { statusCode: 400, error: 'Bad Request', message } };
}

export class ObserverPipeline {
  private readonly blocks = new SerialQueue();
  private readonly mempool = new SerialQueue();
  private readonly listeners: ((m: CommittedMessage) => void | Promise<unknown>)[] = [];
  /**
   * Set by the push publisher: which ingest transactions also record their result in push_outbox (crash safety):
   * true for every pushable change, or a predicate (the publisher skips changes when nobody follows any room).
   */
  pushOutbox: boolean | ((u: ChainUpdate) => boolean) = false;
  /**
   * Blocks on the canonical tip go through the one-statement path (sql/0013_ingest_block_fast.sql); false sends every
   * block through the general transaction (the two write the same rows: test/ingest-fast-path.test.ts).
   */
  fastBlocks = true;
  /** changes committed by this pipeline; ANALYZE runs when it reaches `analyzeAt` (see refreshStatistics) */
  private committed = 0;
  private analyzeAt = 64;
  private analyzing = false;

  /**
   * The chain id this database holds (0x00000001 mainnet, 0x80000000 testnet): from STACKS_CHAIN_ID or the database
   * (settleNetwork at start-up), else adopted from the first transaction stored. undefined: not known yet.
   */
  private network: number | undefined;
  /** whether `network` reflects the database (read lazily when the caller did not settle it) */
  private networkRead = false;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    opts: { chainId?: number } = {},
  ) {
    if (opts.chainId !== undefined) {
      this.network = opts.chainId;
      this.networkRead = true;
    }
  }

  /** The chain id in force (undefined until known). */
  get chainId(): number | undefined {
    return this.network;
  }

  /**
   * Refuses (with the reason) a message whose transactions belong to another network than the database's; the first
   * transaction stored in a database of no recorded network records its own. Microblock streams are not checked:
   * they are applied only on top of a block already accepted (a stream from another chain never builds on our tip).
   */
  private async checkNetwork(update: ChainUpdate): Promise<string | undefined> {
    if (update.kind !== 'block' && update.kind !== 'mempool') return undefined;
    if (!update.txs.length) return undefined;
    if (!this.networkRead || this.network === undefined) {
      this.network = await recordedNetwork(this.sql);
      this.networkRead = true;
    }
    const r = checkTxNetworks(update.txs, this.network);
    if (r.error) return r.error;
    if (this.network === undefined && r.network !== undefined) {
      const recorded = await recordNetwork(this.sql, r.network, `first transaction (${update.txs[0].tx_id})`);
      this.network = recorded;
      if (recorded !== r.network) return checkTxNetworks(update.txs, recorded).error;
      this.log.info({ chain_id: '0x' + recorded.toString(16).padStart(8, '0') }, 'network adopted from the first transaction');
    }
    return undefined;
  }

  /**
   * Called after each COMMIT that changed something (never for duplicates). A listener that returns a promise is
   * awaited before the node gets its 200, so it sees the database as of that commit (the node sends one message at a
   * time): the push publisher relies on it.
   */
  onCommitted(listener: (m: CommittedMessage) => void | Promise<unknown>): void {
    this.listeners.push(listener);
  }

  /** Resolves when every queued message has been handled. */
  async idle(): Promise<void> {
    await Promise.all([this.blocks.idle(), this.mempool.idle()]);
  }

  /**
   * `opts.receivedAt` (ms since the epoch): when the node sent the message, for a recorded stream (import-events uses
   * the TSV's timestamp column); default: now. Mempool txs take it as their receipt_time.
   */
  async handle(rawPath: string, body: Buffer | string, opts: { receivedAt?: number } = {}): Promise<ObserverReply> {
    const path = normalizeObserverPath(rawPath);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const queue = MEMPOOL_PATHS.has(path) ? this.mempool : this.blocks;
    return queue.run(() => this.process(path, text, opts.receivedAt));
  }

  private async process(path: string, text: string, receivedAt?: number): Promise<ObserverReply> {
    const started = performance.now();
    let parsed: unknown;
    try {
      if (text.trim() === '') throw new SyntaxError('body is empty: expected a JSON document');
      parsed = JSON.parse(text);
    } catch (err) {
      return this.reject(path, text, `invalid JSON: ${(err as Error).message}`);
    }
    let update: ChainUpdate;
    if (isObserverPath(path)) {
      const v = validateObserverMessage(path, parsed);
      if (!v.ok) return this.reject(path, text, v.message);
      try {
        update = messageToUpdate(v, Math.floor((receivedAt ?? Date.now()) / 1000));
      } catch (err) {
        if (err instanceof MessageDecodeError) return this.reject(path, text, err.message);
        this.log.error({ err, path }, 'observer message conversion failed');
        return { status: 500, body: { statusCode: 500, error: 'Internal Server Error', message: (err as Error).message } };
      }
    } else {
      this.log.warn({ path }, 'unknown observer path: message stored raw');
      update = { kind: 'raw' };
    }
    let wrongNetwork: string | undefined;
    try {
      wrongNetwork = await this.checkNetwork(update);
    } catch (err) {
      this.log.error({ err, path }, 'observer message not stored (the node will retry)');
      return {
        status: 500,
        body: { statusCode: 500, error: 'Internal Server Error', message: `not stored: ${(err as Error).message}` },
      };
    }
    if (wrongNetwork) return this.reject(path, text, wrongNetwork);
    let result: IngestResult;
    const outbox = isPushable(update) && (typeof this.pushOutbox === 'function' ? this.pushOutbox(update) : this.pushOutbox);
    try {
      result = await ingestMessage(this.sql, path, text, update, { pushOutbox: outbox, fastBlocks: this.fastBlocks });
    } catch (err) {
      this.log.error({ err, path }, 'observer message not stored (the node will retry)');
      return {
        status: 500,
        body: { statusCode: 500, error: 'Internal Server Error', message: `not stored: ${(err as Error).message}` },
      };
    }
    if (result.applied && receivedAt !== undefined && result.eventId !== null) {
      // a recorded stream (import-events): the message keeps its original arrival time, so export-events writes it back
      try {
        await this.sql`UPDATE event_log SET received_at = to_timestamp(${receivedAt / 1000}) WHERE id = ${result.eventId}`;
      } catch (err) {
        this.log.warn({ err, path }, 'could not record the arrival time of an imported message');
      }
    }
    const ms = Math.round((performance.now() - started) * 10) / 10;
    if (result.applied) {
      this.log.info(describe(update, ms), `ingested ${path}`);
      this.refreshStatistics();
      for (const l of this.listeners) {
        try {
          await l({ path, update, result, outbox });
        } catch (err) {
          this.log.error({ err }, 'committed-message listener failed');
        }
      }
    } else {
      this.log.info({ path, ms }, `duplicate ${path} ignored`);
    }
    return { status: 200, body: { result: 'ok' } };
  }

  /**
   * A database filled from empty (a node syncing from genesis, import-events) grows much faster than autovacuum
   * re-analyzes it (once a minute at best): the statements' plans, made when the tables were nearly empty, go on
   * scanning whole tables. So this pipeline runs ANALYZE itself, in the background, each time its count of committed
   * changes doubles from 64 up to about a million; past that the tables are big enough for autovacuum's pace.
   */
  private refreshStatistics(): void {
    this.committed++;
    if (this.committed < this.analyzeAt || this.analyzing || this.analyzeAt > 1 << 20) return;
    this.analyzeAt *= 2;
    this.analyzing = true;
    this.sql`ANALYZE`
      .catch((err: unknown) => this.log.warn({ err }, 'ANALYZE failed'))
      .finally(() => (this.analyzing = false));
  }

  private async reject(path: string, text: string, reason: string): Promise<ObserverReply> {
    this.log.warn({ path, reason }, 'observer message rejected');
    try {
      await recordDeadLetter(this.sql, path, text, reason);
    } catch (err) {
      this.log.error({ err }, 'could not record dead letter');
    }
    return badRequest(reason);
  }
}

function describe(u: ChainUpdate, ms: number): Record<string, unknown> {
  switch (u.kind) {
    case 'block':
      return { height: u.block.block_height, hash: u.block.index_block_hash, txs: u.txs.length, events: u.events.length, ms };
    case 'microblocks':
      return { parent: u.parentIndexBlockHash, microblocks: u.microblocks.length, txs: u.txs.length, ms };
    case 'burn_block':
      return { burn_height: u.burnBlock.burn_block_height, ms };
    case 'mempool':
      return { txs: u.txs.length, ms };
    case 'drop_mempool':
      return { txs: u.txIds.length, reason: u.reason, ms };
    default:
      return { ms };
  }
}
