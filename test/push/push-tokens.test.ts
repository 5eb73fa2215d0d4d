/**
 * The token push rooms (src/push/token-rooms.ts): `address-ft-balance:<principal>` and `address-nft-event:<principal>`
 * over Socket.IO and JSON-RPC, on a generated chain with forks and microblock streams; resume by cursor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { getOk } from '../helpers/http.js';
import { recordingSocket, rpcClient } from '../helpers/push-clients.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { GeneratedMessage } from '../../load/generator/types.js';
import { isValidRoom } from '../../src/push/topics.js';

const opts = { blocks: 30, txsPerBlock: 10, seed: 'push-tokens', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 3 };

/** The chain's messages and the principal with the most FT and NFT events in it (same seed, same chain). */
async function chain(): Promise<{ messages: GeneratedMessage[]; principal: string }> {
  const messages: GeneratedMessage[] = [];
  const score = new Map<string, { ft: number; nft: number }>();
  for await (const m of new ChainGenerator(opts).messages()) {
    messages.push(m);
    if (m.path !== '/new_block' && m.path !== '/new_microblocks') continue;
    const body = JSON.parse(m.body) as { events?: Record<string, any>[] };
    for (const e of body.events ?? []) {
      const kind = String(e.type).startsWith('ft_') ? 'ft' : String(e.type).startsWith('nft_') ? 'nft' : undefined;
      if (!kind) continue;
      const data = e[e.type as string] as { sender?: string; recipient?: string };
      for (const p of [data.sender, data.recipient]) {
        if (!p) continue;
        const s = score.get(p) ?? { ft: 0, nft: 0 };
        s[kind]++;
        score.set(p, s);
      }
    }
  }
  const best = [...score.entries()].filter(([, s]) => s.ft > 0 && s.nft > 0).sort((a, b) => b[1].ft + b[1].nft - (a[1].ft + a[1].nft))[0];
  return { messages, principal: best[0] };
}

const withoutCursor = (x: unknown) => {
  const { cursor: _c, ...rest } = x as Record<string, unknown>;
  return rest;
};

describe('token push rooms', () => {
  let svc: TestService;
  let principal: string;
  let socket: Awaited<ReturnType<typeof recordingSocket>>;
  let rpc: Awaited<ReturnType<typeof rpcClient>>;
  const url = () => svc.api.replace('http', 'ws') + '/extended/v1/ws';

  beforeAll(async () => {
    const c = await chain();
    principal = c.principal;
    svc = await startTestService();
    socket = await recordingSocket(svc.api, { rooms: [`address-ft-balance:${principal}`, `address-nft-event:${principal}`] });
    rpc = await rpcClient(url());
    expect((await rpc.call('subscribe', { event: 'address_ft_balance_update', address: principal })).result).toEqual({ address: principal });
    expect((await rpc.call('subscribe', { event: 'address_nft_event', address: principal })).result).toEqual({ address: principal });
    for (const m of c.messages) {
      const res = await fetch(svc.observer + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    await svc.service.pipeline!.idle();
    await svc.service.push!.publisher!.idle();
    await socket.sync();
    await rpc.sync();
  }, 300_000);
  afterAll(async () => {
    socket?.socket.disconnect();
    rpc?.ws.close();
    await svc?.stop();
  });

  it('room names: principals only', () => {
    expect(isValidRoom(`address-ft-balance:${principal}`)).toBe(true);
    expect(isValidRoom('address-nft-event:SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.some-contract')).toBe(true);
    expect(isValidRoom('address-ft-balance:notaprincipal')).toBe(false);
    expect(isValidRoom('address-nft-event:')).toBe(false);
  });

  it('address-ft-balance: only changes, the last one equal to the REST balances', async () => {
    const got = socket.got.filter((m) => m.event === `address-ft-balance:${principal}`);
    expect(got.length).toBeGreaterThan(1);
    const payloads = got.map((m) => JSON.stringify(withoutCursor(m.args[1])));
    for (let i = 1; i < payloads.length; i++) expect(payloads[i]).not.toBe(payloads[i - 1]);
    for (const m of got) expect(m.args[0]).toBe(principal);
    const rest = await getOk(svc, `/extended/v1/address/${principal}/balances?unanchored=true`);
    expect(withoutCursor(got.at(-1)!.args[1])).toEqual({ fungible_tokens: rest.fungible_tokens });
  });

  it("address-nft-event: every canonical anchored NFT event of the principal, each naming it", async () => {
    const got = socket.got.filter((m) => m.event === `address-nft-event:${principal}`);
    for (const m of got) {
      const ev = m.args[1] as { sender: string | null; recipient: string | null };
      expect([ev.sender, ev.recipient]).toContain(principal);
    }
    const canonical = await svc.db.sql<{ k: string }[]>`
      SELECT tx_id || ':' || event_index AS k FROM events
      WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical AND index_block_hash <> ''
        AND block_height > 1 AND (sender = ${principal} OR recipient = ${principal})`;
    expect(canonical.length).toBeGreaterThan(0);
    const pushed = new Set(got.map((m) => {
      const ev = m.args[1] as { tx_id: string; event_index: number };
      return `${ev.tx_id}:${ev.event_index}`;
    }));
    for (const { k } of canonical) expect(pushed.has(k), k).toBe(true);
  });

  it('JSON-RPC: the same messages as notifications with a cursor; params.cursor replays the room', async () => {
    const ns = rpc.notifications();
    const ft = ns.filter((n) => n.method === 'address_ft_balance_update');
    const nft = ns.filter((n) => n.method === 'address_nft_event');
    expect(ft.length).toBe(socket.got.filter((m) => m.event === `address-ft-balance:${principal}`).length);
    expect(nft.length).toBe(socket.got.filter((m) => m.event === `address-nft-event:${principal}`).length);
    for (const n of [...ft, ...nft]) {
      expect((n.params as { address: string }).address).toBe(principal);
      expect(n.cursor).toMatch(/^\d+$/);
    }
    // a new connection resuming from the start gets the room's whole history, in order
    const again = await rpcClient(url());
    try {
      expect((await again.call('subscribe', { event: 'address_nft_event', address: principal, cursor: '0' })).error).toBeUndefined();
      await again.sync();
      expect(again.notifications().map((n) => n.cursor)).toEqual(nft.map((n) => n.cursor));
    } finally {
      again.ws.close();
    }
    expect((await rpc.call('subscribe', { event: 'address_ft_balance_update', address: 'nope' })).error).toEqual({ code: -32602, message: 'Invalid params', data: 'invalid address' });
  });

  it('Socket.IO: auth.cursor replays both rooms from PostgreSQL', async () => {
    const rooms = [`address-ft-balance:${principal}`, `address-nft-event:${principal}`];
    const live = socket.got.filter((m) => rooms.includes(m.event));
    const again = await recordingSocket(svc.api, { rooms, auth: { cursor: '0' } });
    try {
      await again.sync();
      const replayed = again.got.filter((m) => rooms.includes(m.event));
      expect(replayed.map((m) => [m.event, m.cursor])).toEqual(live.map((m) => [m.event, m.cursor]));
    } finally {
      again.socket.disconnect();
    }
  });
});
