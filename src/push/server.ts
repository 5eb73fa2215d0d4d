/**
 * The push server of an API process: Socket.IO on the API's uWS app (`io.attachApp`, path /socket.io/, websocket +
 * polling, CORS open) and the JSON-RPC WebSocket. Messages arrive either in-process (deliver(), called by the local
 * publisher) or, with Redis, through @socket.io/redis-adapter (Socket.IO rooms) and the PUSH_CHANNEL subscription
 * (JSON-RPC, resume bookkeeping) on the adapter's own subscriber connection, so both arrive in publication order.
 */
import { Server, type Socket } from 'socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Sql } from '../store/connect.js';
import { invalidRooms, isValidRoom, splitRoomList } from './topics.js';
import { cursorOf, lastSeq, messagesAfter, type PublishedMessage } from './log.js';
import { JsonRpcServer } from './jsonrpc.js';
import { PUSH_CHANNEL, type PushSink } from './publisher.js';

export interface PushServerOptions {
  sql: Sql;
  log: Logger;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  /** Redis connections (publisher + subscriber) for the adapter; omitted: in-process only */
  redis?: { pub: Redis; sub: Redis };
  /** unsent bytes after which a client is disconnected as a slow consumer (default 8 MiB) */
  maxBufferedBytes?: number;
}

export interface PushMetrics {
  socketConnections: number;
  rpcConnections: number;
  slowConsumerDisconnects: number;
  delivered: number;
}

const CURSOR_RE = /^\d{1,19}$/;

export class PushServer implements PushSink {
  readonly io: Server;
  readonly rpc: JsonRpcServer;
  private seen = 0n;
  private slow = 0;
  private delivered = 0;
  private readonly maxBuffered: number;
  private readonly ready: Promise<void>;

  constructor(
    app: TemplatedApp,
    private readonly opts: PushServerOptions,
  ) {
    this.maxBuffered = opts.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.io = new Server({
      path: '/socket.io/',
      transports: ['websocket', 'polling'],
      cors: { origin: '*' },
      pingInterval: opts.pingIntervalMs,
      pingTimeout: opts.pingTimeoutMs,
      serveClient: false,
    });
    // uWS skips (silently drops) publishes to sockets over maxBackpressure: keep it far above our own limit, which
    // disconnects the client instead (see checkBackpressure).
    this.io.attachApp(app, { maxBackpressure: 64 * 1024 * 1024 } as never);
    if (opts.redis) this.io.adapter(createAdapter(opts.redis.pub, opts.redis.sub));
    this.rpc = new JsonRpcServer(app, {
      sql: opts.sql,
      log: opts.log,
      maxBufferedBytes: this.maxBuffered,
      onSlowConsumer: () => this.slow++,
    });
    this.rpc.lastSeen = () => this.seen;

    this.io.use((socket, next) => {
      const invalid = invalidRooms(splitRoomList(socket.handshake.query.subscriptions));
      if (invalid.length) return next(new Error(`Invalid topic: ${invalid.join(', ')}`));
      const cursor = (socket.handshake.auth as { cursor?: unknown } | undefined)?.cursor;
      if (cursor !== undefined && !(typeof cursor === 'string' && CURSOR_RE.test(cursor))) {
        return next(new Error('Invalid cursor: expected the decimal string of a message cursor'));
      }
      next();
    });
    this.io.on('connection', (socket) => this.onConnection(socket));

    // messages this process delivers live: all of them, in order (the resume bookkeeping needs every cursor)
    this.ready = lastSeq(opts.sql).then((s) => {
      if (BigInt(s) > this.seen) this.seen = BigInt(s);
    });
    if (opts.redis) {
      const sub = opts.redis.sub;
      void sub.subscribe(PUSH_CHANNEL);
      sub.on('message', (channel: string, text: string) => {
        if (channel !== PUSH_CHANNEL) return;
        try {
          this.onRemoteBatch(JSON.parse(text) as PublishedMessage[]);
        } catch (err) {
          opts.log.error({ err }, 'bad push batch from Redis');
        }
      });
    }
  }

  metrics(): PushMetrics {
    return {
      socketConnections: this.io.of('/').sockets.size,
      rpcConnections: this.rpc.connections,
      slowConsumerDisconnects: this.slow,
      delivered: this.delivered,
    };
  }

  /** In-process delivery (the publisher runs in this process and there is no Redis). */
  deliver(msgs: PublishedMessage[]): void {
    for (const m of msgs) this.io.to(m.room).emit(m.event, ...m.args, cursorOf(m));
    this.afterBatch(msgs);
  }

  /** A batch that reached this process through Redis: its Socket.IO packets were already broadcast by the adapter. */
  private onRemoteBatch(msgs: PublishedMessage[]): void {
    this.afterBatch(msgs);
  }

  private afterBatch(msgs: PublishedMessage[]): void {
    const last = msgs.at(-1);
    if (last && BigInt(last.seq) > this.seen) this.seen = BigInt(last.seq);
    this.delivered += msgs.length;
    this.rpc.deliver(msgs);
    this.checkBackpressure();
  }

  /** Disconnects websocket clients whose unsent data passed the limit (they resume by cursor). */
  private checkBackpressure(): void {
    for (const socket of this.io.of('/').sockets.values()) {
      const transport = socket.conn.transport as unknown as { name: string; socket?: { getBufferedAmount?: () => number } };
      const buffered = transport.name === 'websocket' ? (transport.socket?.getBufferedAmount?.() ?? 0) : 0;
      const polling = (socket.conn as unknown as { writeBuffer?: unknown[] }).writeBuffer?.length ?? 0;
      if (buffered > this.maxBuffered || polling > 10_000) {
        this.slow++;
        this.opts.log.warn({ id: socket.id, buffered }, 'slow consumer disconnected');
        socket.emit('slow-consumer', 'slow consumer: send buffer over limit, reconnect with your last cursor');
        socket.disconnect(true);
      }
    }
  }

  private onConnection(socket: Socket): void {
    const list = splitRoomList(socket.handshake.query.subscriptions);
    const cursor = (socket.handshake.auth as { cursor?: string } | undefined)?.cursor;
    if (cursor !== undefined) {
      void this.resume(socket, list, cursor).catch((err) => {
        this.opts.log.error({ err }, 'resume failed');
        socket.disconnect(true);
      });
    } else if (list.length) {
      void socket.join(list);
    }
    socket.on('subscribe', (room: unknown, ack?: unknown) => {
      const cb = typeof ack === 'function' ? (ack as (e: string | null) => void) : undefined;
      if (typeof room !== 'string' || !isValidRoom(room)) {
        cb?.(`Invalid topic: ${String(room)}`);
        return;
      }
      void socket.join(room);
      cb?.(null);
    });
    socket.on('unsubscribe', (...rooms: unknown[]) => {
      for (const r of rooms) if (typeof r === 'string') void socket.leave(r);
    });
  }

  /**
   * Replays from PostgreSQL what `rooms` received after `cursor`, then joins them. No gap, no duplicate: messages
   * up to `seen` (delivered live by this process) are replayed; the rooms are joined, in the same tick, only once
   * the replay has caught up with `seen`, so every later message arrives live and none twice.
   */
  private async resume(socket: Socket, list: string[], cursor: string): Promise<void> {
    await this.ready;
    let sent = BigInt(cursor);
    for (;;) {
      const target = this.seen;
      if (sent >= target) {
        if (socket.connected && list.length) void socket.join(list);
        return;
      }
      const msgs = (await messagesAfter(this.opts.sql, sent.toString(), list)).filter((m) => BigInt(m.seq) <= target);
      for (const m of msgs) socket.emit(m.event, ...m.args, cursorOf(m));
      sent = msgs.length === 10_000 ? BigInt(msgs.at(-1)!.seq) : target;
    }
  }

  close(): Promise<void> {
    this.rpc.close();
    return new Promise((resolve) => {
      this.io.close(() => resolve());
      // io.close waits for nothing more on uWS; resolve regardless
      setTimeout(resolve, 100).unref();
    });
  }
}
