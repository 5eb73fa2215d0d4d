/** Push clients for tests: a Socket.IO client that records every message, and a JSON-RPC WebSocket client. */
import { io as connect, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';

export interface Recorded {
  event: string;
  args: unknown[];
  cursor: string;
}

export function cursorOfArgs(args: unknown[]): string {
  return String((args.at(-1) as { cursor?: string } | undefined)?.cursor);
}

/** A Socket.IO client (websocket transport, no automatic reconnection) recording every message. */
export async function recordingSocket(
  url: string,
  opts: { rooms?: string[]; auth?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<{ socket: Socket; got: Recorded[]; sync(): Promise<void> }> {
  const socket = connect(url, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    query: opts.rooms ? { subscriptions: opts.rooms.join(',') } : undefined,
    auth: opts.auth,
    extraHeaders: opts.headers,
  });
  const got: Recorded[] = [];
  socket.onAny((event: string, ...args: unknown[]) => got.push({ event, args, cursor: cursorOfArgs(args) }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    socket,
    got,
    /** one round trip: every message sent before it has arrived */
    async sync() {
      await socket.timeout(10_000).emitWithAck('subscribe', 'block');
    },
  };
}

/** A JSON-RPC 2.0 WebSocket client of /extended/v1/ws. */
export async function rpcClient(url: string, headers?: Record<string, string>) {
  const ws = new WebSocket(url, { headers });
  const inbox: Record<string, unknown>[] = [];
  ws.on('message', (data) => inbox.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
  });
  let n = 0;
  const call = async (method: string, params: Record<string, unknown>) => {
    const id = `c${++n}`;
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const reply = inbox.find((m) => m.id === id);
      if (reply) return reply;
      if (Date.now() > deadline) throw new Error(`no reply to ${method}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return {
    ws,
    inbox,
    call,
    /** notifications received so far */
    notifications: () => inbox.filter((m) => typeof m.method === 'string') as { method: string; params: unknown; cursor: string }[],
    /** one round trip behind everything sent so far */
    sync: () => call('unsubscribe', { event: 'microblock' }),
  };
}
