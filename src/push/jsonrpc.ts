/**
 * JSON-RPC 2.0 over a plain WebSocket at /extended/v1/ws (native uWS `app.ws`, not Socket.IO): subscribe /
 * unsubscribe to the reference's events (plus contract_event, address_mempool_update,
 * address_ft_balance_update and address_nft_event), notifications
 * `{"jsonrpc":"2.0","method":<event>,"params":<payload>,"cursor":"<seq>"}`. Any number of topics of one kind per
 * connection; batches; `params.cursor` on subscribe replays what that topic missed since the cursor, from PostgreSQL.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { isPrincipal, TX_ID_RE } from '../chain/principal.js';
import { BNS_NAME_RE, HOOK_UUID_RE, hookRoomUuid, rooms } from './topics.js';
import { messagesAfter, type PublishedMessage } from '../store/push-log.js';
import type { AccessControl } from '../auth/access.js';
import { PulseError } from '../errors.js';

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 429: 'Too Many Requests', 503: 'Service Unavailable' };

interface RpcUserData {
  rooms: Set<string>;
  /** requests of this connection, handled one after the other (a catch-up completes before the next reply) */
  queue: Promise<void>;
  /** over the slow-consumer limit at the previous check */
  over: boolean;
  /** the API key the connection was made with (a hook's topic is for its owner only) */
  keyName?: string;
}

type Json = Record<string, unknown>;

const EVENTS = [
  'block',
  'microblock',
  'mempool',
  'tx_update',
  'address_tx_update',
  'address_balance_update',
  'nft_event',
  'nft_asset_event',
  'nft_collection_event',
  'contract_event',
  'address_mempool_update',
  'address_ft_balance_update',
  'address_nft_event',
  'bns_name_update',
  'burn_block',
  'tenure',
  'hook',
] as const;

class RpcError extends PulseError {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const invalidParams = (data: string) => new RpcError(-32602, 'Invalid params', data);

/** `params` of subscribe/unsubscribe → the room and the reply's `result`. */
function topicOf(params: Json | undefined): { room: string; result: Json } {
  const event = params?.event;
  if (event === undefined || event === null || event === '') throw invalidParams('subscription requests must include an event name');
  if (typeof event !== 'string' || !(EVENTS as readonly string[]).includes(event)) {
    throw invalidParams('subscription request must use a valid event name');
  }
  const str = (k: string) => (typeof params?.[k] === 'string' ? (params[k] as string) : '');
  switch (event) {
    case 'block':
    case 'microblock':
    case 'mempool':
      return { room: event, result: {} };
    case 'nft_event':
      return { room: rooms.nftEvent, result: {} };
    case 'burn_block':
      return { room: rooms.burnBlock, result: {} };
    case 'tenure':
      return { room: rooms.tenure, result: {} };
    case 'tx_update': {
      const raw = str('tx_id');
      if (!TX_ID_RE.test(raw)) throw invalidParams('invalid tx_id');
      const txId = (raw.startsWith('0x') ? raw : '0x' + raw).toLowerCase();
      return { room: rooms.transaction(txId), result: { tx_id: txId } };
    }
    case 'address_tx_update':
    case 'address_balance_update':
    case 'address_mempool_update': {
      const address = str('address');
      if (!isPrincipal(address)) throw invalidParams('invalid address');
      const room =
        event === 'address_tx_update'
          ? rooms.addressTransaction(address)
          : event === 'address_balance_update'
            ? rooms.addressStxBalance(address)
            : rooms.addressMempool(address);
      return { room, result: { address } };
    }
    case 'address_ft_balance_update':
    case 'address_nft_event': {
      const address = str('address');
      if (!isPrincipal(address)) throw invalidParams('invalid address');
      const room = event === 'address_ft_balance_update' ? rooms.addressFtBalance(address) : rooms.addressNftEvent(address);
      return { room, result: { address } };
    }
    case 'nft_asset_event': {
      const asset = str('asset_identifier');
      const value = str('value');
      if (!asset.includes('::')) throw invalidParams('invalid asset_identifier');
      if (!/^0x[0-9a-fA-F]+$/.test(value)) throw invalidParams('invalid value');
      return { room: rooms.nftAssetEvent(asset, value), result: { asset_identifier: asset, value } };
    }
    case 'nft_collection_event': {
      const asset = str('asset_identifier');
      if (!asset.includes('::')) throw invalidParams('invalid asset_identifier');
      return { room: rooms.nftCollectionEvent(asset), result: { asset_identifier: asset } };
    }
    case 'bns_name_update': {
      const name = str('name');
      if (!BNS_NAME_RE.test(name)) throw invalidParams('invalid name');
      return { room: rooms.bnsName(name), result: { name } };
    }
    case 'hook': {
      const uuid = str('uuid').toLowerCase();
      if (!HOOK_UUID_RE.test(uuid)) throw invalidParams('invalid uuid');
      return { room: rooms.hook(uuid), result: { uuid } };
    }
    case 'contract_event': {
      const id = str('contract_id');
      if (!isPrincipal(id) || !id.includes('.')) throw invalidParams('invalid contract_id');
      return { room: rooms.contractEvent(id), result: { contract_id: id } };
    }
  }
  throw invalidParams('subscription request must use a valid event name');
}

/** A published message as a JSON-RPC notification (method and params), or undefined when it has none. */
export function notificationOf(m: PublishedMessage): { method: string; params: unknown } | undefined {
  if (m.event === 'reorg') return { method: 'reorg', params: m.args[0] };
  const colon = m.room.indexOf(':');
  const kind = colon < 0 ? m.room : m.room.slice(0, colon);
  switch (kind) {
    case 'block':
    case 'microblock':
    case 'mempool':
      return { method: kind, params: m.args[0] };
    case 'nft-event':
      return { method: 'nft_event', params: m.args[0] };
    case 'burn-block':
      return { method: 'burn_block', params: m.args[0] };
    case 'tenure':
      return { method: 'tenure', params: m.args[0] };
    case 'transaction':
      return { method: 'tx_update', params: m.args[0] };
    case 'nft-asset-event':
      return { method: 'nft_asset_event', params: m.args[2] };
    case 'nft-collection-event':
      return { method: 'nft_collection_event', params: m.args[1] };
    case 'address-transaction': {
      const [address, t] = m.args as [string, { tx: Json } & Json];
      return {
        method: 'address_tx_update',
        params: { address, tx_id: t.tx.tx_id, tx_status: t.tx.tx_status, tx_type: t.tx.tx_type, ...t },
      };
    }
    case 'address-stx-balance': {
      const [address, balance] = m.args as [string, Json];
      return { method: 'address_balance_update', params: { address, ...balance } };
    }
    case 'address-mempool': {
      const [address, tx] = m.args as [string, Json];
      return { method: 'address_mempool_update', params: { address, ...tx } };
    }
    case 'contract-event': {
      const [contract_id, event] = m.args as [string, Json];
      return { method: 'contract_event', params: { contract_id, ...event } };
    }
    case 'address-ft-balance': {
      const [address, balances] = m.args as [string, Json];
      return { method: 'address_ft_balance_update', params: { address, ...balances } };
    }
    case 'address-nft-event': {
      const [address, event] = m.args as [string, Json];
      return { method: 'address_nft_event', params: { address, ...event } };
    }
    case 'bns-name': {
      const [name, info] = m.args as [string, Json | null];
      return { method: 'bns_name_update', params: { name, info } };
    }
    case 'hook':
      return { method: 'hook', params: m.args[0] };
  }
  return undefined;
}

export function notificationText(m: PublishedMessage): string | undefined {
  const n = notificationOf(m);
  return n && JSON.stringify({ jsonrpc: '2.0', method: n.method, params: n.params, cursor: m.seq });
}

export interface JsonRpcServerOptions {
  sql: Sql;
  log: Logger;
  /** bytes of unsent data after which a connection is closed as a slow consumer */
  maxBufferedBytes: number;
  onSlowConsumer?: () => void;
  /** rate limits / API keys for new connections, checked in the upgrade (refused: an HTTP 401/429 answer) */
  access?: AccessControl;
  onRefused?: () => void;
  /** the API key name owning a hook (undefined: no such hook): who may subscribe to its topic */
  hookOwner?: (uuid: string) => Promise<string | undefined>;
  /** a room got its first subscriber on this process (resolves once it is recorded: interest.ts) / lost its last */
  onRoomCreated?: (room: string) => Promise<void>;
  onRoomDeleted?: (room: string) => void;
}

export class JsonRpcServer {
  private readonly byRoom = new Map<string, Set<WebSocket<RpcUserData>>>();
  private readonly all = new Set<WebSocket<RpcUserData>>();

  constructor(
    app: TemplatedApp,
    private readonly opts: JsonRpcServerOptions,
  ) {
    app.ws<RpcUserData>('/extended/v1/ws', {
      idleTimeout: 120,
      sendPingsAutomatically: true,
      maxPayloadLength: 1024 * 1024,
      maxBackpressure: 64 * 1024 * 1024,
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => {
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        const upgrade = (keyName?: string) =>
          res.upgrade<RpcUserData>({ rooms: new Set(), queue: Promise.resolve(), over: false, keyName }, key, protocol, extensions, context);
        const access = this.opts.access;
        if (!access) return upgrade(undefined);
        // req is only valid during this call: read what the check needs first
        const forwardedFor = req.getHeader('x-forwarded-for') || undefined;
        const apiKey = req.getHeader('x-api-key') || undefined;
        const ip = access.clientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor);
        let aborted = false;
        res.onAborted(() => (aborted = true));
        const refuse = (status: number, headers: Record<string, string>, body: unknown) => {
          this.opts.onRefused?.();
          res.cork(() => {
            res.writeStatus(`${status} ${STATUS_TEXT[status] ?? 'Error'}`);
            res.writeHeader('content-type', 'application/json; charset=utf-8');
            for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
            res.end(JSON.stringify(body));
          });
        };
        access.checkConnection(ip, apiKey).then(
          (d) => {
            if (aborted) return;
            if (d.allowed) res.cork(() => upgrade(d.keyName));
            else refuse(d.status, d.headers, d.body);
          },
          (err: unknown) => {
            this.opts.log.error({ err }, 'connection access check failed');
            if (!aborted) refuse(503, {}, { error: 'Service unavailable: the API key store is unreachable' });
          },
        );
      },
      open: (ws) => {
        this.all.add(ws);
      },
      message: (ws, message) => {
        const text = Buffer.from(message).toString('utf8');
        const ud = ws.getUserData();
        ud.queue = ud.queue.then(() => this.onMessage(ws, text)).catch((err) => this.opts.log.error({ err }, 'JSON-RPC request failed'));
      },
      close: (ws) => {
        this.all.delete(ws);
        for (const r of ws.getUserData().rooms) this.leave(ws, r);
      },
    });
  }

  get connections(): number {
    return this.all.size;
  }

  /** Rooms at least one connection follows. */
  roomNames(): Iterable<string> {
    return [...this.byRoom].filter(([, subs]) => subs.size > 0).map(([room]) => room);
  }

  /** Sends each message to the connections subscribed to its room. */
  deliver(msgs: PublishedMessage[]): void {
    for (const m of msgs) {
      const subs = this.byRoom.get(m.room);
      if (!subs?.size) continue;
      const text = notificationText(m);
      if (!text) continue;
      for (const ws of subs) this.send(ws, text);
    }
  }

  close(): void {
    for (const ws of [...this.all]) ws.end(1001, 'server shutting down');
  }

  /** Closes every connection with 1012: the client reconnects and re-subscribes with its last cursor. */
  resumeAll(): void {
    for (const ws of [...this.all]) {
      this.all.delete(ws);
      ws.end(1012, 'push stream interrupted: reconnect and re-subscribe with your last cursor');
    }
  }

  private send(ws: WebSocket<RpcUserData>, text: string): void {
    if (!this.all.has(ws)) return;
    ws.send(text, false);
  }

  /** Closes connections whose unsent data stayed over the limit since the previous check (PushServer's timer). */
  checkBackpressure(): void {
    for (const ws of this.all) {
      const ud = ws.getUserData();
      const over = ws.getBufferedAmount() > this.opts.maxBufferedBytes;
      if (over && ud.over) {
        this.opts.onSlowConsumer?.();
        this.all.delete(ws);
        // 1013 "try again later": the client resumes with its last cursor
        ws.end(1013, 'slow consumer: send buffer over limit, reconnect with your last cursor');
      } else ud.over = over;
    }
  }

  /** Joins; a room new to this process is recorded (the promise resolves then). */
  private join(ws: WebSocket<RpcUserData>, room: string): Promise<void> | undefined {
    ws.getUserData().rooms.add(room);
    let s = this.byRoom.get(room);
    let created: Promise<void> | undefined;
    if (!s) {
      this.byRoom.set(room, (s = new Set()));
      created = this.opts.onRoomCreated?.(room);
    }
    s.add(ws);
    return created;
  }

  private leave(ws: WebSocket<RpcUserData>, room: string) {
    ws.getUserData().rooms.delete(room);
    const s = this.byRoom.get(room);
    s?.delete(ws);
    if (s && !s.size) {
      this.byRoom.delete(room);
      this.opts.onRoomDeleted?.(room);
    }
  }

  private async onMessage(ws: WebSocket<RpcUserData>, text: string): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.send(ws, JSON.stringify({ jsonrpc: '2.0', id: null, error: { message: 'Parse error', code: -32700, data: text } }));
      return;
    }
    if (Array.isArray(parsed)) {
      if (!parsed.length) {
        this.send(ws, JSON.stringify(errorReply(null, new RpcError(-32600, 'Invalid request', parsed))));
        return;
      }
      const after: (() => Promise<void>)[] = [];
      const recorded: Promise<void>[] = [];
      const replies: Json[] = [];
      for (const r of parsed) {
        const reply = await this.handle(ws, r, after, recorded);
        if (reply !== undefined) replies.push(reply);
      }
      await Promise.all(recorded);
      if (replies.length) this.send(ws, JSON.stringify(replies));
      for (const f of after) await f();
      return;
    }
    const after: (() => Promise<void>)[] = [];
    const recorded: Promise<void>[] = [];
    const reply = await this.handle(ws, parsed, after, recorded);
    // a subscription is acknowledged once its room is recorded (a publisher elsewhere then builds its messages)
    await Promise.all(recorded);
    if (reply) this.send(ws, JSON.stringify(reply));
    for (const f of after) await f();
  }

  /** One request: its reply (undefined for a notification); catch-up work to run after the reply goes to `after`. */
  private async handle(ws: WebSocket<RpcUserData>, req: unknown, after: (() => Promise<void>)[], recorded: Promise<void>[]): Promise<Json | undefined> {
    const r = req as Json;
    const id = r && typeof r === 'object' && !Array.isArray(r) && ('id' in r) ? (r.id as unknown) : undefined;
    try {
      if (!r || typeof r !== 'object' || Array.isArray(r) || r.jsonrpc !== '2.0') throw new RpcError(-32600, 'Invalid request', req);
      if (typeof r.method !== 'string') {
        if ('result' in r || 'error' in r) throw new RpcError(-32600, 'Invalid request', 'unexpected success msg from client');
        throw new RpcError(-32600, 'Invalid request', req);
      }
      if (r.method !== 'subscribe' && r.method !== 'unsubscribe') throw new RpcError(-32601, 'Method not found');
      const params = (r.params && typeof r.params === 'object' ? r.params : undefined) as Json | undefined;
      const { room, result } = topicOf(params);
      if (r.method === 'subscribe') {
        const uuid = hookRoomUuid(room);
        if (uuid !== undefined) await this.authorizeHook(ws, uuid);
        const cursor = params?.cursor;
        if (cursor !== undefined && !(typeof cursor === 'string' && /^\d+$/.test(cursor))) throw invalidParams('invalid cursor');
        if (typeof cursor === 'string') after.push(() => this.catchUp(ws, room, cursor));
        else {
          const p = this.join(ws, room);
          if (p) recorded.push(p);
        }
      } else {
        this.leave(ws, room);
      }
      return id === undefined ? undefined : { jsonrpc: '2.0', id, result };
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      // a request without a usable id is answered with id null
      const isObj = !!r && typeof r === 'object' && !Array.isArray(r);
      const replyId = err.code === -32600 && !(isObj && ('result' in r || 'error' in r)) ? null : (id ?? null);
      if (id === undefined && err.code !== -32600) return undefined;
      return errorReply(replyId as string | number | null, err);
    }
  }

  /** A hook's topic is for the connection made with the API key that created the hook (unknown hook: the same). */
  private async authorizeHook(ws: WebSocket<RpcUserData>, uuid: string): Promise<void> {
    const keyName = ws.getUserData().keyName;
    let owner: string | undefined;
    try {
      owner = keyName === undefined ? undefined : await this.opts.hookOwner?.(uuid);
    } catch (err) {
      this.opts.log.error({ err }, 'hook topic authorization failed');
      throw new RpcError(-32003, 'Service unavailable', 'the database is unreachable: try again');
    }
    if (owner === undefined || owner !== keyName) {
      throw new RpcError(-32001, 'Unauthorized', `hook ${uuid}: connect with the x-api-key of the key that created the hook`);
    }
  }

  /** Replays the room's messages after `cursor`, then joins it (no gap, no duplicate: see PushServer.resume). */
  private async catchUp(ws: WebSocket<RpcUserData>, room: string, cursor: string): Promise<void> {
    let sent = BigInt(cursor);
    for (;;) {
      const target = this.lastSeen();
      if (sent >= target) {
        if (this.all.has(ws)) void this.join(ws, room);
        return;
      }
      const msgs = (await messagesAfter(this.opts.sql, sent.toString(), [room])).filter((m) => BigInt(m.seq) <= target);
      for (const m of msgs) {
        const text = notificationText(m);
        if (text) this.send(ws, text);
      }
      sent = target;
    }
  }

  /** Set by the push server: the newest cursor this process has delivered live. */
  lastSeen: () => bigint = () => 0n;
}

function errorReply(id: string | number | null, err: RpcError): Json {
  const error: Json = { message: err.message, code: err.code };
  if (err.data !== undefined) error.data = err.data;
  return { jsonrpc: '2.0', id, error };
}
