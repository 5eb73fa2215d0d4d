/**
 * The observer's message pipeline, independent of the HTTP transport: parse → validate → decode → append to the
 * durable log (event_log) → 200. The append is the acknowledgement: the node never waits for derived rows. The
 * projector (src/projector/projector.ts) then applies the log to the derived tables, in order, and reports each
 * applied change to the listeners (push, cache). Messages are appended one at a time, in arrival order, so the log's
 * id order is the order the node sent them in.
 */
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { appendToLog, recordDeadLetter, type AppendEntry } from '../store/event-log.js';
import { normalizeObserverPath } from './schemas.js';
import { decodeOrReject, Rejected } from './decode.js';
import type { DecodeInput, DecodeResult } from '../chain/decoded.js';
import { inThreadDecoder, type MessageDecoder } from './decode-pool.js';
import type { ChainUpdate } from '../chain/types.js';
import { checkTxNetworks } from '../chain/network.js';
import { recordNetwork, recordedNetwork } from '../store/network.js';
import { Projector, type CommittedMessage, type ProjectorOptions } from '../projector/projector.js';
import { isUnavailable } from '../store/faults.js';

export interface ObserverReply {
  status: number;
  body: Record<string, unknown>;
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

function badRequest(message: string): ObserverReply {
  return { status: 400, body: { statusCode: 400, error: 'Bad Request', message } };
}

/**
 * Parses, validates and decodes one message in this thread (`receivedAt` in ms: a mempool tx's receipt time). Throws
 * Rejected for a bad message; an unknown path is a raw message (logged, nothing derived).
 */
export function decodeMessage(path: string, text: string, receivedAt: number, log?: Logger): ChainUpdate {
  const r = decodeOrReject(path, text, receivedAt);
  if (r.unknownPath) log?.warn({ path }, 'unknown observer path: message stored raw');
  return r.update;
}

export class ObserverPipeline {
  private readonly queue = new SerialQueue();
  /** applies the log to the derived tables (started by start(); the observer acknowledges without it) */
  readonly projector: Projector;

  /**
   * The chain id this database holds (0x00000001 mainnet, 0x80000000 testnet): from STACKS_CHAIN_ID or the database
   * (settleNetwork at start-up), else adopted from the first transaction stored. undefined: not known yet.
   */
  private network: number | undefined;
  /** whether `network` reflects the database (read lazily when the caller did not settle it) */
  private networkRead = false;
  /** parses, validates and decodes messages (worker threads, or this thread) before they are appended */
  readonly decoder: MessageDecoder;

  constructor(
    readonly sql: Sql,
    private readonly log: Logger,
    opts: { chainId?: number; projector?: ProjectorOptions; decoder?: MessageDecoder } = {},
  ) {
    this.decoder = opts.decoder ?? inThreadDecoder;
    if (opts.chainId !== undefined) {
      this.network = opts.chainId;
      this.networkRead = true;
    }
    // what the projector reads back from the log (after a restart, or appended by another process) is decoded by the
    // same pool as what the observer receives
    const decodeMany = this.decoder.threads > 0 ? (batch: DecodeInput[]) => this.decoder.decode(batch) : undefined;
    this.projector = new Projector(sql, log, (path, body, receivedAt) => decodeMessage(path, body, receivedAt, log), {
      ...opts.projector,
      decodeMany: opts.projector?.decodeMany ?? decodeMany,
    });
  }

  /**
   * Set by the push publisher: which projections also record their result in push_outbox (crash safety): true for
   * every pushable change, or a predicate (the publisher skips changes when nobody follows any room).
   */
  set pushOutbox(v: boolean | ((u: ChainUpdate) => boolean)) {
    this.projector.pushOutbox = v;
  }
  get pushOutbox(): boolean | ((u: ChainUpdate) => boolean) {
    return this.projector.pushOutbox;
  }

  /**
   * Blocks on the canonical tip go through the one-statement path (project_block_fast, sql/functions/projector.sql); false
   * sends every block through the general path (the two write the same rows: test/store/ingest-fast-path.test.ts).
   */
  set fastBlocks(v: boolean) {
    this.projector.fastBlocks = v;
  }
  get fastBlocks(): boolean {
    return this.projector.fastBlocks;
  }

  private starting: Promise<void> | undefined;

  /** Starts applying the log (where the last run left it); the first message handled starts it too. */
  start(): Promise<void> {
    this.starting ??= this.projector.start();
    return this.starting;
  }

  /** Stops the projector after the batch in flight. */
  async stop(): Promise<void> {
    await this.starting;
    this.starting = undefined;
    await this.projector.stop();
  }

  /**
   * Shutdown: finishes the messages received, lets the projector catch up for at most `timeoutMs`, then stops it after
   * the batch in flight (what is acknowledged and not applied stays in the log for the next start).
   */
  async close(timeoutMs: number): Promise<void> {
    await this.queue.idle();
    let timer: NodeJS.Timeout | undefined;
    // a projector stuck on a message will not catch up: no point waiting
    if (!this.projector.lastFailure) {
      await Promise.race([this.projector.settled(), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    }
    clearTimeout(timer);
    await this.projector.stop();
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
   * Called after each projection COMMIT, once per message applied (never for duplicates), in log order. A listener that
   * returns a promise is awaited before the projector goes on, so it sees the database as of that message: the push
   * publisher relies on it.
   */
  onCommitted(listener: (m: CommittedMessage) => void | Promise<unknown>): void {
    this.projector.onCommitted(listener);
  }

  /** Resolves when every message received so far is acknowledged (logged) and applied (if the projector runs). */
  async idle(): Promise<void> {
    await this.queue.idle();
    await this.starting;
    if (this.projector.running) await this.projector.settled();
  }

  /**
   * `opts.receivedAt` (ms since the epoch): when the node sent the message, for a recorded stream (import-events uses
   * the TSV's timestamp column); default: now. Mempool txs take it as their receipt_time.
   */
  async handle(rawPath: string, body: Buffer | string, opts: { receivedAt?: number } = {}): Promise<ObserverReply> {
    const path = normalizeObserverPath(rawPath);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const entries = [{ path, body: text, receivedAt: opts.receivedAt ?? Date.now() }];
    // decoded while earlier messages are being appended; appended strictly in arrival order
    const decoded = this.decodeEntries(entries);
    return this.queue.run(async () => (await this.accept(entries, await decoded))[0]);
  }

  /**
   * Acknowledges a run of messages at once (import-events): each is validated and decoded, and those before the first
   * rejected one are appended in one statement. Replies in order; the messages after a rejected one are not looked at
   * (answered 409) and not logged: the caller stops there. `decoded`: the entries' decoder results when the caller
   * decoded them ahead (import-events decodes the next chunks while this one is appended).
   */
  async handleMany(entries: readonly AppendEntry[], decoded?: Promise<DecodeResult[]> | DecodeResult[]): Promise<ObserverReply[]> {
    const normalized = entries.map((e) => ({ ...e, path: normalizeObserverPath(e.path) }));
    const results = decoded ?? this.decodeEntries(normalized);
    return this.queue.run(async () => this.accept(normalized, await results));
  }

  /** The decoder's results for `entries` (paths normalized); a decoder fault is a result, never a rejection. */
  decodeEntries(entries: readonly AppendEntry[]): Promise<DecodeResult[]> {
    return this.decoder.decode(entries.map((e) => ({ path: e.path, body: e.body, receivedAt: e.receivedAt }))).catch((err: unknown) =>
      entries.map(() => ({ ok: false as const, failed: (err as Error)?.message ?? String(err) })),
    );
  }

  private async accept(entries: readonly AppendEntry[], decoded: readonly DecodeResult[]): Promise<ObserverReply[]> {
    const started = performance.now();
    void this.start();
    const replies: ObserverReply[] = [];
    const good: { entry: AppendEntry; update: ChainUpdate }[] = [];
    let stop: ObserverReply | undefined;
    for (const [i, entry] of entries.entries()) {
      let update: ChainUpdate;
      try {
        const d = decoded[i];
        if (!d) throw new Error('message not decoded');
        if (!d.ok) {
          if ('rejected' in d) throw new Rejected(d.rejected);
          throw new Error(`decoding failed: ${d.failed}`);
        }
        if (d.unknownPath) this.log.warn({ path: entry.path }, 'unknown observer path: message stored raw');
        update = d.update;
        const wrongNetwork = await this.checkNetwork(update);
        if (wrongNetwork) throw new Rejected(wrongNetwork);
      } catch (err) {
        if (err instanceof Rejected) stop = await this.reject(entry.path, entry.body, err.message);
        else {
          this.log.error({ err, path: entry.path }, 'observer message not logged (the node will retry)');
          stop = serverError(err);
        }
        break;
      }
      good.push({ entry, update });
    }
    let ids: (number | null)[];
    try {
      ids = await appendToLog(this.sql, good.map((g) => g.entry));
    } catch (err) {
      this.log.error({ err }, 'observer message not logged (the node will retry)');
      const failed = serverError(err);
      return entries.map(() => failed);
    }
    const ms = Math.round((performance.now() - started) * 10) / 10;
    good.forEach((g, i) => {
      const id = ids[i];
      if (id === null) {
        this.log.info({ path: g.entry.path, ms }, `duplicate ${g.entry.path} ignored`);
      } else {
        this.log.info({ id, ...describe(g.update), ms }, `logged ${g.entry.path}`);
        this.projector.logged({ id, path: g.entry.path, body: g.entry.body, update: g.update });
      }
      replies.push({ status: 200, body: { result: 'ok' } });
    });
    if (stop) {
      replies.push(stop);
      while (replies.length < entries.length) replies.push({ status: 409, body: { statusCode: 409, error: 'Conflict', message: 'not looked at: an earlier message was rejected' } });
    }
    return replies;
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

function describe(u: ChainUpdate): Record<string, unknown> {
  switch (u.kind) {
    case 'block':
      return { height: u.block.block_height, hash: u.block.index_block_hash, txs: u.txs.length, events: u.events.length };
    case 'microblocks':
      return { parent: u.parentIndexBlockHash, microblocks: u.microblocks.length, txs: u.txs.length };
    case 'burn_block':
      return { burn_height: u.burnBlock.burn_block_height };
    case 'mempool':
      return { txs: u.txs.length };
    case 'drop_mempool':
      return { txs: u.txIds.length, reason: u.reason };
    default:
      return {};
  }
}

function serverError(err: unknown): ObserverReply {
  // the database is unreachable or the connection died: not stored, the node sends it again later
  if (isUnavailable(err)) {
    return { status: 503, body: { statusCode: 503, error: 'Service Unavailable', message: `not stored, database unavailable: ${(err as Error).message}` } };
  }
  return { status: 500, body: { statusCode: 500, error: 'Internal Server Error', message: `not stored: ${(err as Error).message}` } };
}
