/**
 * The projector: applies the durable log (event_log) to the derived tables, in id order, exactly once.
 *
 * The observer acknowledges a message once it is appended to the log (src/observer/pipeline.ts) and hands the
 * decoded message over; the projector applies it a few milliseconds later. Each transaction applies a batch of
 * consecutive messages and moves projector_state.applied_id to the batch's last id (sql/0070_projector.sql), so a
 * crash or restart resumes right after the last committed batch. Caught up, a batch is the one message just logged;
 * behind (a node syncing, an import, a restart after downtime), a batch takes up to `maxBatch` messages and pays one
 * commit for all of them.
 *
 * Derived tables behind (`derivedBehindFrom`): a batch of catch-up size (an import's every batch of several messages;
 * in the service, one that only forms when the projection has fallen behind its node) records its blocks' flips
 * (sql/functions/derived.sql) and commits without applying them; a second connection applies them right after
 * (flushLoop), while this one applies the next batch, and only then does the batch count as applied (listeners,
 * settled(), the status routes through projector_derived). A smaller batch, or one whose last message is pushed, first
 * waits for every flip owed and then writes its derived tables in its own transaction.
 *
 * Push: a batch ends after any message the push publisher records (pushOutbox), so its listeners see the database as
 * of that message, as they did when each message had its own transaction (a subscriber never sees a state the REST
 * API would deny, nor a later one in a message about an earlier change).
 *
 * A message that cannot be applied stops the projector at that message: the error is logged and recorded in
 * projector_state (the status routes show it), the observer keeps acknowledging into the log, and the projector
 * retries with a pause doubling up to 30 s (a database restart heals by itself; a bug needs a fix and a restart).
 */
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { applyMessage, FastPathMissed, minedByNextBlock, sendsWithoutWaiting, tipAfterMicroblocks, type SentTip, type LoggedUpdate } from '../store/ingest/index.js';
import type { IngestResult } from '../store/ingest/result.js';
import { flushDeferredDerived, flushDerived, lockProjector, logBodies, markApplied, pendingMessages, recordProjectorFailure, logPosition, type PendingMessage } from '../store/event-log.js';
import { isPushable, type ChainUpdate } from '../chain/types.js';
import type { DecodeInput, DecodeResult } from '../chain/decoded.js';
import { countProjectorFailure } from '../metrics.js';
import { Maintenance, VACUUM_EVERY } from './maintenance.js';
import { ProjectorCounters, type ProjectorMetrics } from './metrics.js';

export interface CommittedMessage {
  path: string;
  update: ChainUpdate;
  result: IngestResult;
  /** a push_outbox row was committed with the change: the push publisher owes it a publication */
  outbox: boolean;
}

/** A message applied in the transaction in progress (see Projector.onApplying). */
export interface AppliedMessage {
  update: ChainUpdate;
  result: IngestResult;
}

/** Turns a logged message back into its update (the observer's decoder; `receivedAt` in ms). */
export type LogDecoder = (path: string, body: string, receivedAt: number) => ChainUpdate;

/** Decodes logged messages in bulk, off the main thread (the observer's decode pool); results in the input's order. */
export type LogBatchDecoder = (batch: DecodeInput[]) => Promise<DecodeResult[]>;

export interface ProjectorOptions {
  /** messages per transaction at most (default 500) */
  maxBatch?: number;
  /** body characters per transaction at most (default 32 MB) */
  maxBatchChars?: number;
  /**
   * decoded messages kept in memory between the acknowledgement and the projection (default 64 MB of bodies; decoded, a
   * message takes about three times its body's size in the heap: about 200 MB at the bound)
   */
  maxKnownChars?: number;
  /** pause before retrying a failed message: doubles from min to max (ms; default 250 → 30,000) */
  retryMs?: { min: number; max: number };
  /** applied messages between two background VACUUMs of mempool_txs when autovacuum is off (default 20,000) */
  vacuumEvery?: number;
  /**
   * Decodes the messages a batch reads back from the log (those this process did not hand over decoded: a restart,
   * another process's appends) in worker threads; without it they are decoded one by one in this thread.
   */
  decodeMany?: LogBatchDecoder;
  /**
   * A batch of at least this many messages that no push publication waits for leaves its derived tables to a second
   * connection, which applies them after the batch commits while the next batch is applied. import-events sets 2 (every
   * batch of an import); Infinity keeps them in the batch's own transaction. Default DERIVED_BEHIND_FROM: a service
   * that keeps pace with its node applies batches of a dozen messages or fewer in one transaction each (a flush behind
   * for those cost the observer CPU: the 10,000-block file replayed over HTTP was acknowledged at 294 messages/s against
   * 497), and only a projection that has fallen behind (a node replaying its backlog, a restart) overlaps the two.
   * A value below 2 counts as 2: a batch of one message always writes its own derived tables (the tip, push).
   */
  derivedBehindFrom?: number;
  /**
   * The columns the ANALYZEs run while the tables grow from empty cover: 'all' (the default), or only the 'indexed'
   * ones (analyzeIndexedColumns), for a caller that runs a whole ANALYZE at the end (import-events: analyzeFully).
   */
  growthStatistics?: 'all' | 'indexed';
}

type Batch = (LoggedUpdate & { outbox: boolean; ackedAt?: number })[];

/** the service's ProjectorOptions.derivedBehindFrom: batches this large only form when the projection is behind */
export const DERIVED_BEHIND_FROM = 100;

/** committed batches whose derived tables a flush behind has not applied yet, at most (the next one waits) */
const MAX_BEHIND = 2;

interface Known extends LoggedUpdate {
  /** performance.now() when the append committed */
  ackedAt: number;
}

export class Projector {
  /** set by the push publisher (see ObserverPipeline.pushOutbox) */
  pushOutbox: boolean | ((u: ChainUpdate) => boolean) = false;
  /** Blocks on the canonical tip go through the one-statement path; false sends every block through the general one. */
  fastBlocks = true;

  private readonly listeners: ((m: CommittedMessage) => void | Promise<unknown>)[] = [];
  private readonly applyingHooks: ((tx: Sql, applied: AppliedMessage[]) => Promise<unknown>)[] = [];
  private readonly known = new Map<number, Known>();
  private knownChars = 0;
  /** the last message whose batch committed and whose derived tables are applied: what settled() and status report */
  private applied = 0;
  /** the last message whose batch committed (ahead of `applied` while a flush behind is owed) */
  private committedId = 0;
  /** ends the flusher's pause after a failure (stop) */
  private flusherWake: (() => void) | undefined;
  private newest = 0;
  private waiters: { id: number; resolve: () => void }[] = [];
  /** resolves once run() has read the log's position (settled() waits for it) */
  private readonly ready: Promise<void>;
  private loaded!: () => void;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private failure: { id: number; reason: string; at: Date } | undefined;
  private readonly counters = new ProjectorCounters();
  private readonly maintenance: Maintenance;
  private readonly maxBatch: number;
  private readonly maxBatchChars: number;
  private readonly maxKnownChars: number;
  private readonly retry: { min: number; max: number };
  private readonly decodeMany: LogBatchDecoder | undefined;
  private readonly derivedBehindFrom: number;
  /** committed batches whose deferred derived flips are not applied yet (oldest first): their listeners wait */
  private readonly behind: { batch: Batch; results: IngestResult[] }[] = [];
  /** deferred flips may be waiting in the database (committed batches, or a previous run's) */
  private flushOwed = false;
  /** the flush behind in progress (flushLoop) */
  private flusher: Promise<void> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly decode: LogDecoder,
    opts: ProjectorOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBatchChars = opts.maxBatchChars ?? 32 * 1024 * 1024;
    this.maxKnownChars = opts.maxKnownChars ?? 64 * 1024 * 1024;
    this.retry = opts.retryMs ?? { min: 250, max: 30_000 };
    this.maintenance = new Maintenance(sql, log, () => this.counters.messagesApplied, opts.vacuumEvery ?? VACUUM_EVERY, opts.growthStatistics);
    this.decodeMany = opts.decodeMany;
    this.derivedBehindFrom = Math.max(2, opts.derivedBehindFrom ?? DERIVED_BEHIND_FROM);
    this.ready = new Promise((resolve) => (this.loaded = resolve));
  }

  /**
   * Called after each projection COMMIT, once per message, in log order. A listener that returns a promise is awaited
   * before the next batch starts, so it can read the database as of that commit (the push publisher relies on it).
   */
  onCommitted(listener: (m: CommittedMessage) => void | Promise<unknown>): void {
    this.listeners.push(listener);
  }

  /**
   * Called INSIDE each projection transaction, once its messages are applied and before COMMIT, with the batch's
   * messages and their results in log order: what it writes commits (or not) with the tables. A failure fails the batch.
   */
  onApplying(hook: (tx: Sql, applied: AppliedMessage[]) => Promise<unknown>): void {
    this.applyingHooks.push(hook);
  }

  /** Starts applying from where the log was left (idempotent; a database that is down is waited for). */
  async start(): Promise<void> {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Finishes the batch in flight and stops; what is logged and not applied stays in the log for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    this.flusherWake?.();
    await this.loop;
    await this.flusher;
    this.loop = undefined;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  /** A message this process appended (decoded: the projection does not read or decode it again). */
  logged(m: LoggedUpdate): void {
    this.newest = Math.max(this.newest, m.id);
    if (this.knownChars + m.body.length <= this.maxKnownChars) {
      this.known.set(m.id, { ...m, ackedAt: performance.now() });
      this.knownChars += m.body.length;
    }
    this.kick();
  }

  /** Messages were appended by someone else (or up to `id`): look at the log. */
  kick(id?: number): void {
    if (id !== undefined) this.newest = Math.max(this.newest, id);
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /**
   * Resolves once every message up to `id` (default: the newest logged one this process knows of: what the log held
   * when the projector started, and what was appended since) is applied. Resolves at once when stopping.
   */
  async settled(id?: number): Promise<void> {
    if (this.loop && !this.stopping) await Promise.race([this.ready, this.loop]);
    const target = id ?? this.newest;
    if (this.applied >= target || this.stopping || !this.loop) return;
    return new Promise((resolve) => {
      // the projector's own timers are unref'd (they never hold a process that is shutting down); a waiter must keep
      // the process alive, or an import whose projector pauses after a database failure while every connection is
      // closed would end with exit code 0 and messages not applied
      const hold = setInterval(() => {}, 60_000);
      this.waiters.push({
        id: target,
        resolve: () => {
          clearInterval(hold);
          resolve();
        },
      });
    });
  }

  /**
   * Resolves once everything the log holds now is applied. An append whose reply was lost (the connection dropped
   * after the COMMIT) and was sent again returns no id for its duplicates, so the newest id is read from the log
   * (retried for up to 2 minutes while the database is unreachable).
   */
  async settledLog(): Promise<void> {
    for (let pause = 250, since = Date.now(); !this.stopping; pause = Math.min(pause * 2, 5000)) {
      try {
        this.kick((await logPosition(this.sql)).logged);
        break;
      } catch (err) {
        if (Date.now() - since > 120_000) throw err;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
    return this.settled();
  }

  /** the newest id this process appended or was told of */
  get newestId(): number {
    return this.newest;
  }

  get appliedId(): number {
    return this.applied;
  }

  get lastFailure(): { id: number; reason: string; at: Date } | undefined {
    return this.failure;
  }

  /**
   * An ANALYZE of the whole database, now (the end of an import: the projector's own ANALYZEs stop doubling before the
   * end, and the deferred indexes' expression columns have no statistics yet).
   */
  async analyzeFully(parallel = 1): Promise<void> {
    await this.maintenance.fullStatistics(parallel);
  }

  metrics(): ProjectorMetrics {
    return this.counters.metrics(this.applied, this.newest, this.failure);
  }

  private async run(): Promise<void> {
    /** apply one message per transaction up to this id (isolating the message a failed batch stumbled on) */
    let isolateUpTo = 0;
    /** apply blocks without sending ahead up to this id (a block sent ahead missed the one-statement path) */
    let sendAheadOffUpTo = 0;
    let pause = this.retry.min;
    while (!this.stopping) {
      try {
        // where the last run left the log, and what it holds: settled() waits for all of it, not only for what this
        // process appends (an import re-run whose lines are all logged already must still apply the rest)
        const at = await logPosition(this.sql);
        this.applied = at.applied;
        this.committedId = at.applied;
        this.newest = Math.max(this.newest, at.logged);
        break;
      } catch (err) {
        await this.failed(this.applied + 1, err, pause);
        pause = Math.min(pause * 2, this.retry.max);
      }
    }
    this.newest = Math.max(this.newest, this.applied);
    this.loaded();
    // a previous run may have committed batches whose derived flips it did not apply (it stopped or crashed first)
    this.flushOwed = true;
    this.kickFlusher();
    while (!this.stopping) {
      let batch: Batch;
      try {
        batch = await this.nextBatch(isolateUpTo > this.committedId ? 1 : this.maxBatch);
      } catch (err) {
        await this.failed(this.committedId + 1, err, pause);
        pause = Math.min(pause * 2, this.retry.max);
        continue;
      }
      if (!batch.length) {
        this.settle();
        await this.idle();
        continue;
      }
      let results: IngestResult[] | undefined;
      const waitEach = sendAheadOffUpTo >= batch[0].id;
      // a batch of catch-up size, none of its messages published: the derived tables follow on the flusher's
      // connection; otherwise (a small batch, or one whose last message is pushed, whose listeners read the derived
      // tables as of its commit) they are applied in the batch's transaction, after every flip owed from earlier batches
      const behind = batch.length >= this.derivedBehindFrom && !batch.some((m) => m.outbox);
      if (!behind) {
        if (!(await this.drained())) break;
      } else {
        while (this.behind.length >= MAX_BEHIND && this.flusher) await this.flusher;
      }
      try {
        results = await this.apply(batch, waitEach, behind);
      } catch (err) {
        if (err instanceof FastPathMissed && !waitEach) {
          // a block sent ahead took the general path after all: the same batch again, each block waiting
          sendAheadOffUpTo = batch[batch.length - 1].id;
          this.counters.sendAheadRetries++;
          continue;
        }
        if (batch.length > 1) {
          isolateUpTo = batch[batch.length - 1].id;
          continue;
        }
        await this.failed(batch[0].id, err, pause);
        pause = Math.min(pause * 2, this.retry.max);
        continue;
      }
      if (!results) continue; // another projector moved first: start again from its place
      pause = this.retry.min;
      if (this.failure) {
        this.log.info({ id: this.failure.id }, 'projector: the message that failed is applied now');
        this.failure = undefined;
      }
      this.committedId = batch[batch.length - 1].id;
      this.forgetApplied();
      if (behind) {
        this.behind.push({ batch, results });
        this.flushOwed = true;
        this.kickFlusher();
      } else {
        await this.dispatch(batch, results);
      }
    }
    await this.flusher;
    this.settle();
  }

  /** A batch is committed with its derived tables: its listeners, in log order, then it counts as applied. */
  private async dispatch(batch: Batch, results: IngestResult[]): Promise<void> {
    this.counters.committed(batch);
    this.maintenance.committed();
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i];
      for (const l of this.listeners) {
        try {
          await l({ path: m.path, update: m.update, result: results[i], outbox: m.outbox });
        } catch (err) {
          this.log.error({ err }, 'committed-message listener failed');
        }
      }
    }
    this.applied = Math.max(this.applied, batch[batch.length - 1].id);
    this.settle();
  }

  /** Starts the flush behind when flips are owed and none is running. */
  private kickFlusher(): void {
    if (this.flusher || !this.flushOwed) return;
    this.flusher = this.flushLoop().finally(() => {
      this.flusher = undefined;
      if (this.flushOwed && !this.stopping) this.kickFlusher();
    });
  }

  /**
   * The flush behind: on a connection of its own, applies the flips deferred by every batch committed so far
   * (flushDeferredDerived), then hands those batches to the listeners; again while batches keep committing. A
   * failure (the database is down, a serialization failure) is retried with a pause doubling up to 30 s; the flips
   * stay in the database meanwhile, and a stop leaves them to the next start.
   */
  private async flushLoop(): Promise<void> {
    let pause = this.retry.min;
    let failures = 0;
    while (this.flushOwed) {
      const n = this.behind.length;
      this.flushOwed = false;
      try {
        await flushDeferredDerived(this.sql);
      } catch (err) {
        this.flushOwed = true;
        if (this.stopping) return;
        countProjectorFailure();
        const reason = `applying the derived tables of committed batches: ${(err as Error)?.message ?? String(err)}`;
        // shown by the status routes as the projector's failure: nothing counts as applied until this succeeds
        this.failure = { id: this.behind[0]?.batch[0].id ?? this.applied + 1, reason, at: new Date() };
        if (failures++ === 0) this.log.error({ err, retry_ms: pause }, `projector: ${reason} (retrying)`);
        else this.log.warn({ retry_ms: pause, reason }, 'projector: applying the derived tables of committed batches still fails');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, pause);
          timer.unref?.();
          const self = this;
          function done() {
            clearTimeout(timer);
            self.flusherWake = undefined;
            resolve();
          }
          this.flusherWake = done;
        });
        pause = Math.min(pause * 2, this.retry.max);
        continue;
      }
      if (failures) {
        this.log.info('projector: the derived tables of the committed batches are applied now');
        this.failure = undefined;
      }
      failures = 0;
      pause = this.retry.min;
      for (const b of this.behind.splice(0, n)) {
        this.counters.derivedBehind++;
        await this.dispatch(b.batch, b.results);
      }
    }
  }

  /** Waits until no deferred flip is owed; false when stopping first. */
  private async drained(): Promise<boolean> {
    while (this.flushOwed || this.flusher) {
      if (this.stopping) return false;
      this.kickFlusher();
      await this.flusher;
    }
    return true;
  }

  /** The next messages after the applied one, decoded, cut after the first one the push publisher records. */
  private async nextBatch(limit: number): Promise<Batch> {
    const rows = await pendingMessages(this.sql, this.committedId, limit);
    if (!rows.length) return [];
    const take: typeof rows = [];
    let chars = 0;
    for (const r of rows) {
      if (take.length && chars + r.size > this.maxBatchChars) break;
      take.push(r);
      chars += r.size;
    }
    const missing = take.filter((r) => !this.known.has(r.id)).map((r) => r.id);
    const bodies = await logBodies(this.sql, missing);
    const pooled = await this.decodeLogged(take, bodies);
    const batch: Batch = [];
    for (const r of take) {
      const k = this.known.get(r.id);
      let m: LoggedUpdate & { ackedAt?: number };
      if (k) m = k;
      else {
        const body = bodies.get(r.id);
        if (body === undefined) break; // not visible (cannot happen: ids are read from the same table)
        try {
          const d = pooled?.get(r.id);
          let update: ChainUpdate;
          if (!d) update = this.decode(r.path, body, r.receivedAt);
          else if (d.ok) update = d.update;
          else throw new Error('rejected' in d ? d.rejected : d.failed);
          m = { id: r.id, path: r.path, body, update };
        } catch (err) {
          if (batch.length) break; // apply what precedes it; this one fails on its own next time
          throw Object.assign(new Error(`logged message ${r.id} (${r.path}) no longer decodes: ${(err as Error).message}`), { cause: err });
        }
      }
      const outbox = isPushable(m.update) && (typeof this.pushOutbox === 'function' ? this.pushOutbox(m.update) : this.pushOutbox);
      batch.push({ ...m, outbox });
      if (outbox) break;
    }
    return batch;
  }

  /**
   * The decode pool's results for the rows read back from the log (by id), or undefined without a pool or for fewer
   * than two of them (one message is decoded in this thread at once). An unknown path is warned about as the
   * in-thread decoder does.
   */
  private async decodeLogged(rows: readonly PendingMessage[], bodies: ReadonlyMap<number, string>): Promise<Map<number, DecodeResult> | undefined> {
    if (!this.decodeMany) return undefined;
    const read = rows.filter((r) => bodies.has(r.id));
    if (read.length < 2) return undefined;
    const results = await this.decodeMany(read.map((r) => ({ path: r.path, body: bodies.get(r.id)!, receivedAt: r.receivedAt })));
    const out = new Map<number, DecodeResult>();
    read.forEach((r, i) => {
      const d = results[i];
      if (d?.ok && d.unknownPath) this.log.warn({ path: r.path }, 'unknown observer path: message stored raw');
      if (d) out.set(r.id, d);
    });
    return out;
  }

  /** One transaction for the batch; undefined when another projector had moved past this one's place. */
  private async apply(batch: Batch, sendAheadOff = false, behind = false): Promise<IngestResult[] | undefined> {
    const outcome = (await this.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      // a batch computes the derived tables once, for the net flips of its blocks (sql/0100_derived_batches.sql)
      const deferred = batch.length > 1;
      const committed = await lockProjector(t, deferred);
      if (committed !== this.committedId) return { moved: committed };
      // Pipelined (sendsWithoutWaiting): a message that does not depend on an answer is sent without waiting for
      // the previous one's, so PostgreSQL works while this process prepares the next statements; any other message
      // waits for everything sent before it and for its own answers. A failed statement fails the batch as before.
      const results: IngestResult[] = new Array(batch.length);
      // the messages sent since the last wait that completed (everything before them is settled)
      const inflight: Promise<unknown>[] = [];
      let tip: SentTip | undefined; // unknown until a block of this batch is answered
      let sentAhead = 0;
      try {
        for (let i = 0; i < batch.length; i++) {
          const m = batch[i];
          const sentTip = this.fastBlocks && !sendAheadOff ? tip : undefined;
          const ahead = sendsWithoutWaiting(m, sentTip);
          const applied = applyMessage(t, m, {
            pushOutbox: m.outbox,
            fastBlocks: this.fastBlocks,
            expectFast: ahead && m.update.kind === 'block',
            minedNext: minedByNextBlock(batch, i, sentTip),
          })
            .then((r) => (results[i] = r));
          inflight.push(applied);
          if (ahead) applied.catch(() => undefined); // awaited below: a rejection before then is not unhandled
          else {
            await Promise.all(inflight);
            inflight.length = 0;
          }
          if (m.update.kind === 'microblocks') tip = tipAfterMicroblocks(tip, m.update);
          if (m.update.kind === 'block') {
            const b = m.update.block;
            // a block sent ahead is the tip once it is applied; the general path makes a block canonical only when it
            // becomes the tip, and otherwise leaves the tip where it was
            if (ahead) sentAhead++;
            if (ahead || results[i].canonicalBlock === b.index_block_hash) tip = { index_block_hash: b.index_block_hash, block_height: b.block_height };
          }
        }
        await Promise.all(inflight);
      } catch (err) {
        // a message of several steps goes on sending statements after one sent before it fails, and those must reach
        // the transaction before its ROLLBACK (a statement sent on `t` after it would run outside any transaction, and
        // commit): wait until every message in flight has settled
        await Promise.allSettled(inflight);
        throw err;
      }
      this.counters.blocksSentAhead += sentAhead;
      if (deferred && !behind) await flushDerived(t);
      for (const h of this.applyingHooks) await h(t, batch.map((m, i) => ({ update: m.update, result: results[i] })));
      await markApplied(t, batch[batch.length - 1].id, !behind);
      return { results };
    })) as unknown as { moved?: number; results?: IngestResult[] };
    // `applied` moves once the listeners have had the batch (run()): GET /status never reports a message applied
    // that the push publisher has not yet been handed
    if (outcome.results) return outcome.results;
    // another projector (another process) applied these messages, or the state was reset: the database is right
    this.log.warn({ ours: this.committedId, theirs: outcome.moved }, 'projector: the log position moved under this projector');
    await this.drained();
    this.applied = outcome.moved ?? 0;
    this.committedId = this.applied;
    this.forgetApplied();
    return undefined;
  }

  /** Drops the decoded copies of the messages up to the last committed one. */
  private forgetApplied(): void {
    for (const [id, k] of this.known) {
      if (id > this.committedId) continue;
      this.knownChars -= k.body.length;
      this.known.delete(id);
    }
  }

  private async failed(id: number, err: unknown, pause: number): Promise<void> {
    countProjectorFailure();
    const reason = (err as Error)?.message ?? String(err);
    const first = this.failure?.id !== id || this.failure.reason !== reason;
    this.failure = { id, reason, at: new Date() };
    if (first) this.log.error({ err, id }, `projector stopped at message ${id}: ${reason} (the observer keeps logging; retrying)`);
    else this.log.warn({ id, retry_ms: pause }, `projector: message ${id} still fails: ${reason}`);
    try {
      await recordProjectorFailure(this.sql, id, reason);
    } catch {
      /* the database is what failed: the status shows this process's record */
    }
    await this.idle(pause);
  }

  /** Waits for a kick, a stop, or `ms` (default 1 s: messages appended by another process are found by polling). */
  private idle(ms = 1000): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private settle(): void {
    if (!this.waiters.length) return;
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.applied >= w.id || this.stopping) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }
}
