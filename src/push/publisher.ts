/**
 * The publisher (runs where the observer runs): after each COMMIT the pipeline reports, builds the room messages,
 * appends them to push_messages (which assigns the resume cursors) and hands them to the sinks: the in-process
 * push server, or Redis (Socket.IO emitter + the JSON-RPC channel) for other processes. One change at a time, in
 * commit-notification order, so cursors grow in delivery order.
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { Emitter } from '@socket.io/redis-emitter';
import type { Sql } from '../store/connect.js';
import type { CommittedMessage, ObserverPipeline } from '../observer/pipeline.js';
import { buildMessages } from './messages.js';
import { appendMessages, cursorOf, type PublishedMessage } from './log.js';

/** Where published messages go. */
export interface PushSink {
  deliver(msgs: PublishedMessage[]): void;
}

/** Redis pub/sub channel carrying every published message (JSON array) to the api processes' JSON-RPC servers. */
export const PUSH_CHANNEL = 'stacks-pulse:push';

/** Publishes through Redis: Socket.IO rooms via @socket.io/redis-emitter, then the raw batch on PUSH_CHANNEL. */
export class RedisPushSink implements PushSink {
  private readonly emitter: Emitter;
  constructor(private readonly pub: Redis) {
    this.emitter = new Emitter(pub);
  }
  deliver(msgs: PublishedMessage[]): void {
    for (const m of msgs) this.emitter.to(m.room).emit(m.event, ...m.args, cursorOf(m));
    // same connection, issued after the emits: subscribers see the batch after its Socket.IO packets
    void this.pub.publish(PUSH_CHANNEL, JSON.stringify(msgs));
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
}

export class PushPublisher {
  private tail: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  published = 0;

  constructor(
    private readonly sql: Sql,
    private readonly sinks: PushSink[],
    private readonly log: Logger,
    private readonly opts: PushPublisherOptions = { snapshots: false },
  ) {}

  /**
   * Publishes each committed change in commit order, reading the chain as of that commit: the pipeline's listener
   * resolves once that state is secured (a snapshot is taken, or the publication is done), before the node gets its
   * 200 and can send the next message.
   */
  attach(pipeline: ObserverPipeline): void {
    pipeline.onCommitted((m) => (this.opts.snapshots ? this.publishFromSnapshot(m) : this.publishInline(m)));
  }

  /** Resolves when every reported change has been published. */
  idle(): Promise<unknown> {
    return this.tail;
  }

  private publishInline(m: CommittedMessage): Promise<unknown> {
    const done = this.tail.then(() => this.publish(m, this.sql));
    this.tail = done.catch((err) => this.log.error({ err, path: m.path }, 'push publication failed'));
    return this.tail;
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
        await tx`SELECT 1`; // the snapshot is taken at the first statement
        taken();
        await prev;
        await this.publish(m, tx as unknown as Sql);
      })
      .catch((err) => this.log.error({ err, path: m.path }, 'push publication failed'))
      .finally(() => {
        taken();
        this.inFlight--;
        this.waiting.shift()?.();
      });
    this.tail = job;
    await snapshot;
  }

  /** Builds (reading the chain through `chain`), appends and delivers the messages of one change. */
  async publish(m: CommittedMessage, chain: Sql = this.sql): Promise<PublishedMessage[]> {
    if (m.result.eventId === null) return [];
    const msgs = await buildMessages(chain, m, this.sql);
    const published = await appendMessages(this.sql, m.result.eventId, msgs);
    if (!published.length) return published;
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
}
