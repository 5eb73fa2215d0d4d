/**
 * The push server of an API process: Socket.IO on the API's uWS app (`io.attachApp`, path /socket.io/, websocket +
 * polling, CORS open) and the JSON-RPC WebSocket. Messages arrive either in-process (deliver(), called by the local
 * publisher) or, with Redis, through @socket.io/redis-adapter (Socket.IO rooms) and the push channel subscription
 * (JSON-RPC, resume bookkeeping) on the adapter's own subscriber connection, so both arrive in publication order
 * (each batch before its Socket.IO packets).
 *
 * Redis pub/sub loses what is published while a connection is down; PostgreSQL (push_messages) is the only source of
 * truth. When this process's subscription was interrupted (subscriber 'close'/'end'/'reconnecting', then 'ready'), or
 * a batch's first cursor does not follow the last one delivered, every local client is made to resume: Socket.IO
 * transports are closed (the client reconnects by itself with its last cursor), JSON-RPC connections are closed with
 * 1012 (the client reconnects and re-subscribes with params.cursor).
 */
import { Server, type Socket } from 'socket.io';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Sql } from '../store/sql.js';
import type { AccessControl } from '../auth/access.js';
import { hookRoomUuid, invalidRooms, isValidRoom, splitRoomList } from './topics.js';
import { hookOwner } from '../store/hooks.js';
import { lastSeq, messagesAfter, type PublishedMessage } from '../store/push-log.js';
import { cursorOf } from './messages.js';
import { JsonRpcServer } from './jsonrpc.js';
import type { InterestRecorder } from './interest.js';
import { redisNames, type PushSink } from './publisher.js';
import { ReplicaGate } from './replica-gate.js';
import { primaryCommitLsn, type ReplicaMonitor } from '../store/replica.js';
import { countPushMessages, countSlowClientDisconnect } from '../metrics.js';

/** What a connection carries beside its rooms. */
interface SocketData {
  /** the API key the connection was made with (hook rooms are for their owner only) */
  keyName?: string;
}

export interface PushServerOptions {
  sql: Sql;
  log: Logger;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  /** Redis connections (publisher + subscriber) for the adapter; omitted: in-process only */
  redis?: { pub: Redis; sub: Redis; prefix: string; adapter: 'classic' | 'sharded' };
  /**
   * A client whose unsent data is over this many bytes (default 8 MiB) at two consecutive checks (every
   * `backpressureCheckMs`, default 1 s) is disconnected as a slow consumer: a burst that a reader drains within a
   * check interval is not punished.
   */
  maxBufferedBytes?: number;
  backpressureCheckMs?: number;
  /** rate limits / API keys for new connections (src/auth); omitted: every connection is accepted */
  access?: AccessControl;
  /** records the rooms this process's clients follow (interest.ts); omitted: nothing is recorded */
  interest?: InterestRecorder;
  /**
   * The read replica this process's REST API reads: every message is held until the replica has replayed it
   * (replica-gate.ts), and resumes read push_messages from the replica. Socket.IO packets are then emitted by this
   * process from the push channel's batches, not taken from the Redis adapter (which would deliver them at once).
   */
  replica?: { sql: Sql; monitor: ReplicaMonitor; maxHeld: number };
  /**
   * At start-up, how long to wait for the push channel subscription and (reading a replica) for the replica to replay
   * the primary's position before taking the starting cursor anyway (default 10 s; see startingCursor)
   */
  startWaitMs?: number;
}

/** Counters of one api process (GET /extended/v1/status/push). */
export interface PushMetrics {
  socket_connections: number;
  rpc_connections: number;
  /** messages this process received for delivery (each goes to every subscriber of its room) */
  messages_delivered: number;
  /** newest cursor this process delivered */
  last_cursor: string;
  /** clients disconnected because their send buffer passed max_buffered_bytes */
  slow_consumer_disconnects: number;
  max_buffered_bytes: number;
  /** connections refused by the rate limits or an invalid API key */
  connections_refused: number;
  /** reconnections with a cursor, and the messages replayed to them from PostgreSQL */
  resumes: number;
  messages_replayed: number;
  /** times every client was made to resume (Redis subscription interrupted, or a gap in the push channel's cursors) */
  forced_resyncs: number;
  redis_adapter: 'classic' | 'sharded' | null;
}

const CURSOR_RE = /^\d{1,19}$/;
/** uWS's own limit (maxBackpressure): past it the connection is closed at once, whatever the check interval. */
const HARD_LIMIT = 64 * 1024 * 1024;
export const SLOW_CONSUMER_REASON = 'slow consumer: send buffer over limit, reconnect with your last cursor';

export class PushServer implements PushSink {
  readonly io: Server;
  readonly rpc: JsonRpcServer;
  private seen = 0n;
  /** `seen` was read from push_messages: from now on a batch must follow it (otherwise something was lost) */
  private synced = false;
  /** Redis: Socket.IO packets of batches already counted into `seen` that the adapter has not broadcast yet */
  private pendingPackets = 0;
  private readonly packetWaiters: (() => void)[] = [];
  /** Redis: the subscriber connection went down since its last 'ready' */
  private interrupted = false;
  /** sockets told to resume (transport closing): they join no room any more */
  private readonly kicked = new WeakSet<Socket>();
  private readonly counts = { slow: 0, delivered: 0, refused: 0, resumes: 0, replayed: 0, resyncs: 0 };
  private readonly maxBuffered: number;
  private readonly ready: Promise<void>;
  private readonly backpressureTimer: NodeJS.Timeout;
  /** clients over the limit at the previous check */
  private overLimit = new Set<string>();
  /** reading a replica: messages wait here until it has replayed them */
  private readonly gate: ReplicaGate | undefined;
  /** where push_messages is read (resumes, the last cursor): the replica when there is one */
  private readonly logSql: Sql;

  constructor(
    app: TemplatedApp,
    private readonly opts: PushServerOptions,
  ) {
    this.maxBuffered = opts.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.logSql = opts.replica?.sql ?? opts.sql;
    if (opts.replica) this.gate = new ReplicaGate(opts.replica.monitor, (msgs) => this.releaseBatch(msgs), { maxHeld: opts.replica.maxHeld });
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
    // Past it uWS closes the connection (closeOnBackpressureLimit) rather than drop a message: the client resumes.
    this.io.attachApp(app, { maxBackpressure: HARD_LIMIT, closeOnBackpressureLimit: 1 } as never);
    this.backpressureTimer = setInterval(() => this.checkBackpressure(), opts.backpressureCheckMs ?? 1000);
    this.backpressureTimer.unref();
    const names = opts.redis ? redisNames(opts.redis.prefix) : undefined;
    if (opts.redis && names && !this.gate) {
      this.io.adapter(
        opts.redis.adapter === 'sharded'
          ? createShardedAdapter(opts.redis.pub, opts.redis.sub, { channelPrefix: names.adapterKey, subscriptionMode: 'static' })
          : createAdapter(opts.redis.pub, opts.redis.sub, { key: names.adapterKey }),
      );
    }
    const rec = opts.interest;
    if (rec) {
      // Socket.IO rooms of this process (the adapter's own bookkeeping; every socket's private room is not a valid room)
      const adapter = this.io.of('/').adapter;
      adapter.on('create-room', (room: string) => {
        if (isValidRoom(room)) void rec.add(room);
      });
      adapter.on('delete-room', (room: string) => {
        if (isValidRoom(room)) rec.remove(room);
      });
    }
    this.rpc = new JsonRpcServer(app, {
      sql: this.logSql,
      log: opts.log,
      maxBufferedBytes: this.maxBuffered,
      onSlowConsumer: () => {
        this.counts.slow++;
        countSlowClientDisconnect();
      },
      access: opts.access,
      onRefused: () => this.counts.refused++,
      hookOwner: (uuid) => hookOwner(opts.sql, uuid),
      onRoomCreated: rec ? (room) => rec.add(room) : undefined,
      onRoomDeleted: rec ? (room) => rec.remove(room) : undefined,
    });
    this.rpc.lastSeen = () => this.seen;

    this.io.use((socket, next) => {
      const list = splitRoomList(socket.handshake.query.subscriptions);
      const invalid = invalidRooms(list);
      if (invalid.length) return next(new Error(`Invalid topic: ${invalid.join(', ')}`));
      const auth = socket.handshake.auth as { cursor?: unknown } | undefined;
      // a JSON number is accepted like its decimal string (auth: { cursor: 1 } ≡ { cursor: '1' })
      if (auth && typeof auth.cursor === 'number' && Number.isSafeInteger(auth.cursor) && auth.cursor >= 0) {
        auth.cursor = String(auth.cursor);
      }
      const cursor = auth?.cursor;
      if (cursor !== undefined && !(typeof cursor === 'string' && CURSOR_RE.test(cursor))) {
        return next(new Error('Invalid cursor: expected a message cursor (a non-negative integer, as a number or a decimal string)'));
      }
      // a hook's room is for the key that created the hook: checked after the key, before anything is recorded
      const hookRooms = list.filter((r) => hookRoomUuid(r) !== undefined);
      // the handshake's rooms are recorded before the client is told it is connected
      const record = () => (rec && list.length ? rec.record(list) : undefined);
      if (!opts.access && !hookRooms.length) {
        const recorded = record();
        if (recorded) void recorded.then(() => next());
        else next();
        return;
      }
      const checked = hookRooms.length
        ? (opts.access ? this.checkAccess(socket) : Promise.resolve(undefined)).then(async (denied) => {
            if (denied) return denied;
            const refused = await this.hookRoomRefused(socket, hookRooms);
            if (refused) return Object.assign(new Error(refused), { data: { status: 403 } });
            await record();
            return undefined;
          })
        : Promise.all([this.checkAccess(socket), record()]).then(([denied]) => denied);
      checked.then((denied) => next(denied), (err: unknown) => {
        opts.log.error({ err }, 'connection access check failed');
        next(Object.assign(new Error('Service unavailable: the API key store is unreachable'), { data: { status: 503 } }));
      });
    });
    this.io.on('connection', (socket) => this.onConnection(socket));

    // messages this process delivers live: all of them, in order (the resume bookkeeping needs every cursor)
    let subscribed: Promise<unknown> = Promise.resolve();
    if (opts.redis && names) {
      // Redis down at start: ioredis subscribes once it connects, and the 'ready' handler below then resyncs
      const wait = opts.startWaitMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      subscribed = Promise.race([
        opts.redis.sub.subscribe(names.pushChannel).catch((err: unknown) => opts.log.warn({ err }, 'push: subscribing to the push channel failed')),
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            opts.log.warn({ ms: wait }, 'push: the push channel subscription is not active yet; starting without it');
            resolve();
          }, wait);
          timer.unref?.();
        }),
      ]).finally(() => clearTimeout(timer));
    }
    this.ready = subscribed
      .then(() => this.startingCursor())
      .then((s) => {
        if (BigInt(s) > this.seen) this.seen = BigInt(s);
        this.synced = true;
      });
    if (opts.redis && names) {
      const sub = opts.redis.sub;
      // Each batch comes before its packets (one per message). The adapter's listeners were added first (same
      // event, same tick): once this counts a packet, the adapter has broadcast it. Resumes join their rooms only
      // when every packet of the batches counted into `seen` has been broadcast.
      const broadcastPrefix = `${names.adapterKey}#/#`;
      const onPacket = (channel: string) => {
        if (channel.startsWith(broadcastPrefix) && this.pendingPackets > 0 && --this.pendingPackets === 0) this.packetsDone();
      };
      const onDown = () => {
        this.interrupted = true;
        // the packets still expected were lost with the connection
        this.pendingPackets = 0;
        this.packetsDone();
      };
      sub.on('close', onDown);
      sub.on('end', onDown);
      sub.on('reconnecting', onDown);
      // 'ready' is emitted after ioredis has re-sent the subscriptions
      sub.on('ready', () => {
        if (!this.interrupted) return;
        this.interrupted = false;
        this.resync().catch((err) => opts.log.error({ err }, 'push resync after a Redis interruption failed'));
      });
      sub.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer) => onPacket(channel.toString()));
      sub.on('smessageBuffer', (channel: Buffer) => onPacket(channel.toString()));
      sub.on('message', (channel: string, text: string) => {
        if (channel !== names.pushChannel) return;
        try {
          this.onRemoteBatch(JSON.parse(text) as PublishedMessage[]);
        } catch (err) {
          opts.log.error({ err }, 'bad push batch from Redis');
        }
      });
    }
  }

  /**
   * The last cursor this process counts as delivered when it starts, read once its push channel subscription is
   * active: every later message reaches it live, every earlier one is in push_messages where this process reads it.
   * Reading a replica, that is only true once the replica has replayed what the primary had committed when the
   * subscription became active: a message published just before (and so never received) would otherwise be in neither
   * path, and a resuming client would get it only when the next message revealed the gap. So the primary's position of
   * that moment is read and waited for (bounded by `startWaitMs`; an unreachable primary or a replica that does not
   * get there in time falls back to the replica's own last cursor, and the gap check covers the rest as before).
   */
  private async startingCursor(): Promise<string> {
    const replica = this.opts.replica;
    if (replica) {
      try {
        const lsn = await primaryCommitLsn(this.opts.sql);
        if (!replica.monitor.replayed(lsn)) {
          replica.monitor.expect(lsn);
          replica.monitor.hold(1);
          try {
            const deadline = Date.now() + (this.opts.startWaitMs ?? 10_000);
            while (!replica.monitor.replayed(lsn) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          } finally {
            replica.monitor.hold(-1);
          }
          if (!replica.monitor.replayed(lsn)) {
            this.opts.log.warn({ lsn }, 'push: the read replica did not replay the primary\'s position in time; starting from its own last cursor');
          }
        }
      } catch (err) {
        this.opts.log.warn({ err }, 'push: the primary is unreachable; starting from the read replica\'s last cursor');
      }
    }
    return lastSeq(this.logSql);
  }

  /** Rooms at least one client of this process follows (Socket.IO and JSON-RPC; a room counted once). */
  roomCount(): number {
    const rooms = new Set<string>();
    for (const room of this.io.of('/').adapter.rooms.keys()) if (isValidRoom(room)) rooms.add(room);
    for (const room of this.rpc.roomNames()) rooms.add(room);
    return rooms.size;
  }

  metrics(): PushMetrics {
    return {
      socket_connections: this.io.of('/').sockets.size,
      rpc_connections: this.rpc.connections,
      messages_delivered: this.counts.delivered,
      last_cursor: this.seen.toString(),
      slow_consumer_disconnects: this.counts.slow,
      max_buffered_bytes: this.maxBuffered,
      connections_refused: this.counts.refused,
      resumes: this.counts.resumes,
      messages_replayed: this.counts.replayed,
      forced_resyncs: this.counts.resyncs,
      // reading a replica, the adapter is not attached: this process emits the push channel's batches itself
      redis_adapter: this.opts.redis && !this.gate ? this.opts.redis.adapter : null,
    };
  }

  /** In-process delivery (the publisher runs in this process and there is no Redis). */
  deliver(msgs: PublishedMessage[]): void {
    if (this.gate) {
      this.gate.push(msgs);
      return;
    }
    for (const m of msgs) this.io.to(m.room).emit(m.event, ...m.args, cursorOf(m));
    this.afterBatch(msgs);
  }

  /**
   * A batch that reached this process through Redis; its Socket.IO packets follow. A batch that does not follow the
   * last cursor delivered means messages were lost (or this one is stale): every client resumes, before the packets.
   */
  private onRemoteBatch(msgs: PublishedMessage[]): void {
    if (!msgs.length) return;
    if (this.gate) {
      this.gate.push(msgs);
      return;
    }
    if (this.synced && BigInt(msgs[0].seq) !== this.seen + 1n) {
      this.opts.log.warn({ last: this.seen.toString(), next: msgs[0].seq }, 'push: gap in the push channel, clients resume');
      this.resumeAll();
    }
    this.pendingPackets += msgs.length;
    this.afterBatch(msgs);
  }

  /**
   * A batch the replica has replayed (reading a replica): emitted to this process's clients. Messages already covered
   * by a resync are skipped; a batch that does not follow the last cursor delivered (messages published before this
   * process subscribed, or lost on the push channel) makes every client resume from the replica first.
   */
  private releaseBatch(msgs: PublishedMessage[]): void {
    const fresh = msgs.filter((m) => BigInt(m.seq) > this.seen);
    if (!fresh.length) return;
    if (this.synced && BigInt(fresh[0].seq) !== this.seen + 1n) {
      this.opts.log.warn({ last: this.seen.toString(), next: fresh[0].seq }, 'push: gap before a replayed batch, clients resume');
      this.resumeAll();
    }
    for (const m of fresh) this.io.to(m.room).emit(m.event, ...m.args, cursorOf(m));
    this.afterBatch(fresh);
  }

  /** Messages held until the read replica replays them (0 without a replica). */
  get heldMessages(): number {
    return this.gate?.waiting ?? 0;
  }

  /** Messages dropped from the replica gate because too many were held (their clients resumed by cursor). */
  get droppedMessages(): number {
    return this.gate?.dropped ?? 0;
  }

  /** The Redis connections are up (undefined: no Redis). */
  redisReady(): boolean | undefined {
    if (!this.opts.redis) return undefined;
    return this.opts.redis.sub.status === 'ready' && this.opts.redis.pub.status === 'ready';
  }

  private packetsDone(): void {
    this.packetWaiters.splice(0).forEach((w) => w());
  }

  /** After the subscription was interrupted: `seen` catches up with push_messages, then every client resumes. */
  private async resync(): Promise<void> {
    await this.ready;
    const s = BigInt(await lastSeq(this.logSql));
    if (s > this.seen) this.seen = s;
    this.opts.log.warn({ last: this.seen.toString() }, 'push: Redis subscription was interrupted, clients resume');
    this.resumeAll();
  }

  /**
   * Makes every local client resume from its last cursor: Socket.IO sockets leave their rooms now (no packet reaches
   * them any more) and their transport is closed (the client reconnects by itself, with its cursor); JSON-RPC
   * connections are closed with 1012.
   */
  resumeAll(): void {
    this.counts.resyncs++;
    for (const socket of this.io.of('/').sockets.values()) {
      this.kicked.add(socket);
      for (const room of [...socket.rooms]) if (room !== socket.id) void socket.leave(room);
      socket.conn.close();
    }
    this.rpc.resumeAll();
  }

  private afterBatch(msgs: PublishedMessage[]): void {
    const last = msgs.at(-1);
    if (last && BigInt(last.seq) > this.seen) this.seen = BigInt(last.seq);
    this.counts.delivered += msgs.length;
    countPushMessages(msgs.length);
    this.rpc.deliver(msgs);
  }

  /** Rate limits / API key of a new Socket.IO connection (counts as one request). */
  private async checkAccess(socket: Socket): Promise<Error | undefined> {
    const access = this.opts.access!;
    const h = socket.handshake.headers;
    const header = (name: string) => {
      const v = h[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const authKey = (socket.handshake.auth as { apiKey?: unknown } | undefined)?.apiKey;
    const apiKey = header('x-api-key') ?? (typeof authKey === 'string' ? authKey : undefined);
    const d = await access.checkConnection(access.clientIp(socket.handshake.address, header('x-forwarded-for')), apiKey);
    if (d.allowed) {
      (socket.data as SocketData).keyName = d.keyName;
      return undefined;
    }
    this.counts.refused++;
    // the client gets it as connect_error: err.message, err.data = { status, headers }
    return Object.assign(new Error(d.body.message), { data: { status: d.status, headers: d.headers } });
  }

  /**
   * Why the socket may not follow these hook rooms (undefined: it may): a hook's payloads go only to a connection
   * made with the API key that created the hook. An unknown hook gets the same answer (no hint that it exists).
   */
  private async hookRoomRefused(socket: Socket, hookRooms: string[]): Promise<string | undefined> {
    const keyName = (socket.data as SocketData).keyName;
    for (const room of hookRooms) {
      const owner = keyName === undefined ? undefined : await hookOwner(this.opts.sql, hookRoomUuid(room)!);
      if (owner === undefined || owner !== keyName) {
        return `Not authorized for ${room}: connect with the API key that created the hook (x-api-key header or auth.apiKey)`;
      }
    }
    return undefined;
  }

  /** Disconnects clients whose unsent data stayed over the limit since the previous check (they resume by cursor). */
  private checkBackpressure(): void {
    this.rpc.checkBackpressure();
    const over = new Set<string>();
    for (const socket of this.io.of('/').sockets.values()) {
      const transport = socket.conn.transport as unknown as { name: string; socket?: { getBufferedAmount?: () => number } };
      let buffered = transport.name === 'websocket' ? (transport.socket?.getBufferedAmount?.() ?? 0) : 0;
      // polling (or packets waiting for a websocket drain): engine.io's own queue
      for (const p of (socket.conn as unknown as { writeBuffer?: { data?: unknown }[] }).writeBuffer ?? []) {
        buffered += typeof p.data === 'string' ? p.data.length : ((p.data as { byteLength?: number } | undefined)?.byteLength ?? 0);
      }
      if (buffered <= this.maxBuffered) continue;
      if (!this.overLimit.has(socket.id)) {
        over.add(socket.id);
      } else {
        this.counts.slow++;
        countSlowClientDisconnect();
        this.opts.log.warn({ id: socket.id, buffered }, 'slow consumer disconnected');
        socket.emit('slow-consumer', SLOW_CONSUMER_REASON);
        socket.disconnect(true);
      }
    }
    this.overLimit = over;
  }

  private onConnection(socket: Socket): void {
    const list = splitRoomList(socket.handshake.query.subscriptions);
    const cursor = (socket.handshake.auth as { cursor?: string } | undefined)?.cursor;
    // requests made while a resume replays are answered once it has caught up (an ack means "you are live")
    let resuming: Promise<void> | undefined;
    if (cursor !== undefined) {
      this.counts.resumes++;
      resuming = this.resume(socket, list, cursor).catch((err) => {
        this.opts.log.error({ err }, 'resume failed');
        socket.disconnect(true);
      });
    } else if (list.length) {
      void socket.join(list);
    }
    socket.on('subscribe', async (room: unknown, ack?: unknown) => {
      const cb = typeof ack === 'function' ? (ack as (e: string | null) => void) : undefined;
      if (typeof room !== 'string' || !isValidRoom(room)) {
        cb?.(`Invalid topic: ${String(room)}`);
        return;
      }
      if (hookRoomUuid(room) !== undefined) {
        let refused: string | undefined;
        try {
          refused = await this.hookRoomRefused(socket, [room]);
        } catch (err) {
          this.opts.log.error({ err }, 'hook room authorization failed');
          refused = 'Service unavailable: the database is unreachable';
        }
        if (refused) {
          cb?.(refused);
          return;
        }
      }
      if (resuming) await resuming;
      // recorded before the ack: from then on a publisher in any process builds this room's messages
      await this.opts.interest?.record([room]);
      if (this.kicked.has(socket)) return;
      void socket.join(room);
      cb?.(null);
    });
    socket.on('unsubscribe', (...rooms: unknown[]) => {
      for (const r of rooms) if (typeof r === 'string') void socket.leave(r);
    });
  }

  /** Resolves when the pending packets have been broadcast (or after `ms`, should they never come). */
  private packetsBroadcast(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.packetWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /**
   * Replays from PostgreSQL what `rooms` received after `cursor`, then joins them. No gap, no duplicate: messages
   * up to `seen` (delivered live by this process) are replayed; the rooms are joined, in the same tick, only once
   * the replay has caught up with `seen` and every packet of the batches up to `seen` has been broadcast, so every
   * later message arrives live and none twice.
   */
  private async resume(socket: Socket, list: string[], cursor: string): Promise<void> {
    await this.ready;
    let sent = BigInt(cursor);
    for (;;) {
      if (this.pendingPackets > 0) {
        await this.packetsBroadcast(1000);
        if (this.pendingPackets > 0) this.pendingPackets = 0; // packets that never came: nothing more to wait for
        continue;
      }
      const target = this.seen;
      if (sent >= target) {
        if (socket.connected && !this.kicked.has(socket) && list.length) void socket.join(list);
        return;
      }
      const msgs = (await messagesAfter(this.logSql, sent.toString(), list)).filter((m) => BigInt(m.seq) <= target);
      for (const m of msgs) socket.emit(m.event, ...m.args, cursorOf(m));
      this.counts.replayed += msgs.length;
      sent = msgs.length === 10_000 ? BigInt(msgs.at(-1)!.seq) : target;
    }
  }

  close(): Promise<void> {
    clearInterval(this.backpressureTimer);
    this.rpc.close();
    return new Promise((resolve) => {
      this.io.close(() => resolve());
      // io.close waits for nothing more on uWS; resolve regardless
      setTimeout(resolve, 100).unref();
    });
  }
}
