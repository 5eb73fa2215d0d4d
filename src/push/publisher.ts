/**
 * The publisher (runs where the observer runs): after each COMMIT the pipeline reports, builds the room messages,
 * appends them to push_messages (which assigns the resume cursors) and hands them to the sinks: the in-process
 * push server, or Redis (Socket.IO emitter + the JSON-RPC channel) for other processes. One change at a time, in
 * commit-notification order, so cursors grow in delivery order.
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { Emitter } from '@socket.io/redis-emitter';
import { createShardedAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import { messageToUpdate } from '../observer/to-update.js';
import { isObserverPath, normalizeObserverPath, validateObserverMessage } from '../observer/schemas.js';
import type { IngestResult } from '../store/ingest/result.js';
import type { Sql } from '../store/sql.js';
import type { ObserverPipeline } from '../observer/pipeline.js';
import type { CommittedMessage } from '../projector/projector.js';
import { buildMessages, cursorOf, PayloadMemo, type PushMessage } from './messages.js';
import { buildTokenMessages } from './token-rooms.js';
import { ALL_ROOMS, type RoomFilter } from './interest.js';
import { isPushable } from '../chain/types.js';
import { appendMessages, dropUnpublished, takeSnapshot, unpublishedChanges, type PublishedMessage } from '../store/push-log.js';
import { rooms } from './topics.js';
import { isUnavailable } from '../store/faults.js';
import { primaryCommitLsn } from '../store/replica.js';

/** Where published messages go. */
export interface PushSink {
  deliver(msgs: PublishedMessage[]): void;
}

/**
 * Redis names of one deployment (REDIS_KEY_PREFIX): the pub/sub channel carrying every published batch (JSON array)
 * to the api processes (JSON-RPC delivery, resume bookkeeping), and the Socket.IO adapter's key / channel prefix.
 */
export function redisNames(prefix: string): { pushChannel: string; adapterKey: string } {
  return { pushChannel: `${prefix}:push`, adapterKey: `${prefix}:socket.io` };
}

/**
 * Publishes through Redis: the raw batch on the push channel, then its Socket.IO packets via @socket.io/redis-emitter,
 * on the same connection, so every api process sees a batch (and can check its cursors for a gap) before the packets
 * its adapter broadcasts. Give it a connection with `enableOfflineQueue: false`: while Redis is down a publication
 * fails at once (reported to `onError`, never thrown) instead of being replayed late; PostgreSQL keeps every message
 * and the api processes make their clients resume from it (see PushServer).
 */
export class RedisPushSink implements PushSink {
  private readonly emitter: Emitter;
  private readonly channel: string;
  constructor(
    private readonly pub: Redis,
    prefix: string,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    const names = redisNames(prefix);
    // the emitter ignores the promise of its PUBLISH: catch its rejection here (no unhandled rejection)
    const client = { publish: (channel: string, msg: string | Buffer) => pub.publish(channel, msg).catch(onError) };
    this.emitter = new Emitter(client, { key: names.adapterKey });
    this.channel = names.pushChannel;
  }
  deliver(msgs: PublishedMessage[]): void {
    this.pub.publish(this.channel, JSON.stringify(msgs)).catch(this.onError);
    for (const m of msgs) this.emitter.to(m.room).emit(m.event, ...m.args, cursorOf(m));
  }
}

/**
 * Publishes for api processes on the sharded adapter (PUSH_REDIS_ADAPTER=sharded). @socket.io/redis-emitter speaks
 * only the classic adapter's protocol, so the packets go out through a Socket.IO server without clients (no HTTP)
 * on the sharded adapter itself (SPUBLISH); the batch goes first on the push channel, on the same connection.
 */
export class ShardedRedisPushSink implements PushSink {
  private readonly io: Server;
  private readonly channel: string;
  constructor(
    private readonly pub: Redis,
    sub: Redis,
    prefix: string,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    const names = redisNames(prefix);
    this.io = new Server({ serveClient: false });
    this.io.adapter(createShardedAdapter(pub, sub, { channelPrefix: names.adapterKey, subscriptionMode: 'static' }));
    this.channel = names.pushChannel;
  }
  deliver(msgs: PublishedMessage[]): void {
    // batch first, then the packets (SPUBLISH is issued synchronously by the adapter, on the same connection)
    this.pub.publish(this.channel, JSON.stringify(msgs)).catch(this.onError);
    for (const m of msgs) this.io.to(m.room).emit(m.event, ...m.args, cursorOf(m));
  }
  close(): Promise<void> {
    return new Promise((resolve) => void this.io.close(() => resolve()));
  }
}

export interface PushPublisherOptions {
  /**
   * Build each change's messages in a REPEATABLE READ snapshot taken right after its COMMIT, so the observer answers
   * the node without waiting for the publication (PostgreSQL). false: build before the answer (PGlite, one
   * connection).
   */
  snapshots: boolean;
  /** snapshots held open at most (each holds a pooled connection) before the pipeline waits */
  maxInFlight?: number;
  /** rooms to build messages for (default: every room); see interest.ts */
  rooms?: RoomFilter;
  /**
   * Stamp each published batch with the primary's WAL position after its COMMIT (PostgreSQL only), so api processes
   * reading a replica hold it until the replica has replayed it (src/store/replica.ts).
   */
  lsn?: boolean;
}

export class PushPublisher {
  private tail: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly memo = new PayloadMemo();
  /** the token rooms' last payloads (src/push/token-rooms.ts) */
  private readonly tokenMemo = new PayloadMemo();
  private readonly rooms: RoomFilter;
  published = 0;
  /** committed changes left unpublished because no room was followed */
  skipped = 0;

  constructor(
    private readonly sql: Sql,
    private readonly sinks: PushSink[],
    private readonly log: Logger,
    private readonly opts: PushPublisherOptions = { snapshots: false },
  ) {
    this.rooms = opts.rooms ?? ALL_ROOMS;
  }

  /**
   * Publishes each committed change in commit order, reading the chain as of that commit: the pipeline's listener
   * resolves once that state is secured (a snapshot is taken, or the publication is done), before the node gets its
   * 200 and can send the next message.
   */
  attach(pipeline: ObserverPipeline): void {
    // nobody follows any room: the change is not published at all (no outbox row, no snapshot, nothing built)
    pipeline.pushOutbox = () => this.rooms.wantsAny();
    pipeline.onCommitted((m) => {
      if (!isPushable(m.update)) return undefined;
      if (!m.outbox) {
        this.skipped++;
        // the change's payloads go by uncomputed: remembered ones may be outdated
        this.memo.clear();
        this.tokenMemo.clear();
        return undefined;
      }
      return this.opts.snapshots ? this.publishFromSnapshot(m) : this.publishInline(m);
    });
  }

  /**
   * Publishes what a previous run committed but did not publish (it died between COMMIT and publication, or the
   * publication failed): every push_outbox row, oldest first, built from the current database (the snapshot of
   * that commit is gone, so a payload may show a newer state than it had then). Call before the observer listens.
   */
  recover(): Promise<number> {
    const job = this.tail.then(() => this.recoverNow());
    this.tail = job.catch((err) => this.log.error({ err }, 'push recovery failed'));
    return job;
  }

  private async recoverNow(): Promise<number> {
    const rows = await unpublishedChanges<IngestResult>(this.sql);
    let n = 0;
    for (const r of rows) {
      const path = normalizeObserverPath(r.path);
      const v = isObserverPath(path) ? validateObserverMessage(path, JSON.parse(r.body)) : undefined;
      if (!v?.ok) {
        await dropUnpublished(this.sql, r.event_id);
        continue;
      }
      const update = messageToUpdate(v, Math.floor(Date.now() / 1000));
      n += (await this.publish({ path, update, result: { ...r.result, eventId: Number(r.event_id) }, outbox: true })).length;
    }
    if (rows.length) this.log.warn({ changes: rows.length, messages: n }, 'push: published changes left unpublished by a previous run');
    return n;
  }

  /** Resolves when every reported change has been published. */
  idle(): Promise<unknown> {
    return this.tail;
  }

  private publishInline(m: CommittedMessage): Promise<unknown> {
    const done = this.tail.then(() => this.publish(m, this.sql));
    this.tail = done.catch((err) => this.publicationFailed(err, m.path));
    return this.tail;
  }

  private retryTimer: NodeJS.Timeout | undefined;
  private retryPause = 250;

  /**
   * A publication that failed keeps its push_outbox row. When the database was what failed (a lost connection, a
   * restart), the row is published again once the database answers (retried with a pause doubling up to 30 s), not
   * only at the next start. Messages already appended are not sent twice (push_messages is keyed by event and ord).
   */
  private publicationFailed(err: unknown, path: string): void {
    this.log.error({ err, path }, 'push publication failed');
    if (isUnavailable(err)) this.publishLeftLater();
  }

  private publishLeftLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      const job = this.tail.then(() => this.recoverNow());
      this.tail = job.then(
        () => (this.retryPause = 250),
        (err: unknown) => {
          this.log.warn({ err }, 'push: publishing what a database failure left unpublished failed; retrying');
          this.retryPause = Math.min(this.retryPause * 2, 30_000);
          if (isUnavailable(err)) this.publishLeftLater();
        },
      );
    }, this.retryPause);
    this.retryTimer.unref();
  }

  private async publishFromSnapshot(m: CommittedMessage): Promise<void> {
    const max = this.opts.maxInFlight ?? 4;
    while (this.inFlight >= max) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    let taken!: () => void;
    const snapshot = new Promise<void>((r) => (taken = r));
    const prev = this.tail;
    const job = this.sql
      .begin('isolation level repeatable read read only', async (tx) => {
        await takeSnapshot(tx as unknown as Sql);
        taken();
        await prev;
        await this.publish(m, tx as unknown as Sql);
      })
      .catch((err) => this.publicationFailed(err, m.path))
      .finally(() => {
        taken();
        this.inFlight--;
        this.waiting.shift()?.();
      });
    this.tail = job;
    await snapshot;
  }

  /**
   * Publishes one hook payload to the room hook:<uuid> (when someone follows it), after what was published before.
   * Stored in push_messages under the negated delivery id (event ids are positive), so it is resumable by cursor and
   * a second publication of the same delivery (after a restart) is not sent twice.
   */
  publishHookPayload(uuid: string, deliveryId: number, payload: unknown): Promise<unknown> {
    const room = rooms.hook(uuid);
    if (!this.rooms.wants(room)) return Promise.resolve();
    const job = this.tail.then(() => this.deliverStored(-deliveryId, [{ room, event: room, args: [payload] }]));
    this.tail = job.catch((err) => this.log.error({ err, hook: uuid }, 'push publication of a hook payload failed'));
    return this.tail;
  }

  /** Appends messages under `eventId` and hands those newly appended to the sinks. */
  private async deliverStored(eventId: number, msgs: PushMessage[], ordOffset = 0, final = true): Promise<PublishedMessage[]> {
    let published = await appendMessages(this.sql, eventId, msgs, { ordOffset, final });
    if (!published.length) return published;
    if (this.opts.lsn) {
      // read after the append's COMMIT, which follows the projection's: the position covers both
      const lsn = await primaryCommitLsn(this.sql);
      published = published.map((p) => ({ ...p, lsn }));
    }
    this.published += published.length;
    for (const s of this.sinks) {
      try {
        s.deliver(published);
      } catch (err) {
        this.log.error({ err }, 'push sink failed');
      }
    }
    return published;
  }

  /** Builds (reading the chain through `chain`), appends and delivers the messages of one change. */
  async publish(m: CommittedMessage, chain: Sql = this.sql): Promise<PublishedMessage[]> {
    const eventId = m.result.eventId;
    if (eventId === null) return [];
    const all: PublishedMessage[] = [];
    let ord = 0;
    const flush = async (built: PushMessage[], final: boolean) => {
      const msgs = built.filter((x) => this.rooms.wants(x.room));
      const published = await this.deliverStored(eventId, msgs, ord, final);
      ord += msgs.length;
      all.push(...published);
    };
    // a block's own message goes out before the tx / address messages are built
    const rest = await buildMessages(chain, m, this.sql, (early) => flush(early, false), { rooms: this.rooms, memo: this.memo });
    rest.push(...(await buildTokenMessages(chain, m, this.sql, { rooms: this.rooms, memo: this.tokenMemo })));
    await flush(rest, true);
    return all;
  }
}
