/**
 * Hooks end to end: the real service, a generated chain with forks, real receiver HTTP servers. Every scope's
 * deliveries (applies minus rollbacks, deduplicated by delivery id) must equal a brute-force SQL filter over the stored
 * canonical chain; receivers that answer 500 or never answer get everything later, in order; history from start_block
 * joins the live stream with no gap and no duplicate; pause/resume and expiry; the management API's errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { ChainGenerator } from '../../load/generator/index.js';
import { createKey } from '../../src/auth/keys.js';
import { replay, startTestService, type TestService } from '../helpers/service.js';
import type { FixtureLine } from '../helpers/fixtures.js';
import { recordingSocket, rpcClient } from '../helpers/push-clients.js';

interface Received {
  deliveryId: string;
  apply: { hash: string; txs: string[] }[];
  rollback: { hash: string; txs: string[] }[];
}

/** A receiver: one path per hook; a path can be made to answer 500 or to never answer. */
class Receiver {
  readonly got = new Map<string, Received[]>();
  /** the raw bodies received, per hook */
  readonly bodies = new Map<string, string[]>();
  readonly secrets = new Map<string, string>();
  readonly down = new Set<string>();
  readonly hang = new Set<string>();
  badSignatures = 0;
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const name = (req.url ?? '/').slice(1);
        if (this.hang.has(name)) return; // never answers: the service's timeout gives up
        if (this.down.has(name)) {
          res.writeHead(500).end('down');
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        const secret = this.secrets.get(name);
        const expected = secret ? 'sha256=' + createHmac('sha256', secret).update(body).digest('hex') : undefined;
        if (req.headers['x-stacks-pulse-signature'] !== expected) {
          this.badSignatures++;
          res.writeHead(401).end();
          return;
        }
        this.bodies.set(name, [...(this.bodies.get(name) ?? []), body]);
        const p = JSON.parse(body) as {
          delivery_id: string;
          apply: { block_identifier: { hash: string }; transactions: { transaction_identifier: { hash: string } }[] }[];
          rollback: { block_identifier: { hash: string }; transactions: { transaction_identifier: { hash: string } }[] }[];
        };
        const blocks = (l: typeof p.apply) => l.map((b) => ({ hash: b.block_identifier.hash, txs: b.transactions.map((t) => t.transaction_identifier.hash) }));
        const list = this.got.get(name) ?? [];
        list.push({ deliveryId: p.delivery_id, apply: blocks(p.apply), rollback: blocks(p.rollback) });
        this.got.set(name, list);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  /** What a hook holds now: applies minus rollbacks, each delivery id once; checks order on the way. */
  state(name: string): Map<string, Set<string>> {
    const held = new Map<string, Set<string>>();
    const seen = new Set<string>();
    let last = 0;
    for (const d of this.got.get(name) ?? []) {
      if (seen.has(d.deliveryId)) continue;
      seen.add(d.deliveryId);
      expect(Number(d.deliveryId), `${name}: deliveries in order`).toBeGreaterThan(last);
      last = Number(d.deliveryId);
      for (const b of d.rollback) {
        const txs = held.get(b.hash);
        expect(txs, `${name}: rollback of a block it holds`).toBeDefined();
        for (const t of b.txs) txs!.delete(t);
        if (!txs!.size) held.delete(b.hash);
      }
      for (const b of d.apply) {
        const txs = held.get(b.hash) ?? new Set<string>();
        for (const t of b.txs) {
          expect(txs.has(t), `${name}: ${t} applied twice`).toBe(false);
          txs.add(t);
        }
        held.set(b.hash, txs);
      }
    }
    return held;
  }
}

async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('hooks', () => {
  let svc: TestService;
  let key: string;
  let otherKey: string;
  const receiver = new Receiver();
  const lines: FixtureLine[] = [];

  beforeAll(async () => {
    await receiver.start();
    svc = await startTestService({ HOOKS_RETRY_MIN_MS: '100', HOOKS_RETRY_MAX_MS: '400', HOOKS_TIMEOUT_MS: '1000', HOOKS_MAX_PER_KEY: '20' });
    key = (await createKey(svc.db.sql, 'hooks-owner')).key;
    otherKey = (await createKey(svc.db.sql, 'hooks-other')).key;
    const gen = new ChainGenerator({ blocks: 48, txsPerBlock: 6, seed: 'hooks', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 4 });
    for await (const m of gen.messages()) lines.push({ id: String(lines.length + 1), timestamp: '', path: m.path, body: m.body });
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
  }, 300_000);

  afterAll(async () => {
    await svc?.stop();
    await receiver.close();
  });

  const api = (path: string, init: RequestInit & { key?: string | null } = {}) =>
    fetch(svc.api + path, {
      ...init,
      headers: { 'content-type': 'application/json', ...(init.key === null ? {} : { 'x-api-key': init.key ?? key }), ...(init.headers as Record<string, string>) },
    });

  async function create(name: string, ifThis: object, opts: object = {}, as = key): Promise<{ uuid: string; secret: string }> {
    const res = await api('/extended/v1/hooks', {
      method: 'POST',
      key: as,
      body: JSON.stringify({ chain: 'stacks', name, version: 1, networks: { testnet: { if_this: ifThis, then_that: { http_post: { url: `${receiver.url}/${name}`, authorization_header: 'Bearer t' } }, ...opts } } }),
    });
    const body = (await res.json()) as { uuid: string; secret: string; message?: string };
    expect(res.status, body.message).toBe(201);
    receiver.secrets.set(name, body.secret);
    return body;
  }

  it('delivers every scope as a brute-force filter of the canonical chain finds it, across forks, outages and history', async () => {
    const sql = svc.db.sql;
    const half = Math.floor(lines.length / 2);
    expect((await replay(svc.observer, lines.slice(0, half))).every((s) => s === 200)).toBe(true);

    // predicates on what the first half holds
    const [call] = await sql<{ c: string; f: string }[]>`
      SELECT contract_call_contract_id AS c, api->'contract_call'->>'function_name' AS f FROM txs WHERE tx_type = 'contract_call' AND canonical LIMIT 1`;
    const [print] = await sql<{ c: string }[]>`SELECT contract_id AS c FROM events WHERE event_type = 'smart_contract_log' AND canonical LIMIT 1`;
    const [ft] = await sql<{ a: string }[]>`SELECT asset_identifier AS a FROM events WHERE event_type = 'fungible_token_asset' LIMIT 1`;
    const [nft] = await sql<{ a: string }[]>`SELECT asset_identifier AS a FROM events WHERE event_type = 'non_fungible_token_asset' LIMIT 1`;
    const [tx] = await sql<{ t: string }[]>`SELECT tx_id AS t FROM txs WHERE canonical AND tx_type = 'token_transfer' LIMIT 1`;
    expect(call && print && ft && nft && tx).toBeTruthy();

    type Brute = () => Promise<{ h: string; t: string }[]>;
    const canonicalTxs = sql`t.canonical AND t.microblock_canonical`;
    const eventsOf = (cond: ReturnType<typeof sql>) => sql<{ h: string; t: string }[]>`
      SELECT DISTINCT e.index_block_hash AS h, e.tx_id AS t FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE ${canonicalTxs} AND ${cond}`;
    const hooks: { name: string; ifThis: object; opts?: object; brute: Brute }[] = [
      { name: 'txid', ifThis: { scope: 'txid', equals: tx.t }, brute: () => sql`SELECT index_block_hash AS h, tx_id AS t FROM txs t WHERE ${canonicalTxs} AND tx_id = ${tx.t}` },
      {
        name: 'height',
        ifThis: { scope: 'block_height', higher_than: 20 },
        brute: () => sql`SELECT index_block_hash AS h, tx_id AS t FROM txs t WHERE ${canonicalTxs} AND block_height > 20`,
      },
      {
        name: 'call',
        ifThis: { scope: 'contract_call', contract_identifier: call.c, method: call.f },
        brute: () => sql`SELECT index_block_hash AS h, tx_id AS t FROM txs t WHERE ${canonicalTxs} AND contract_call_contract_id = ${call.c} AND api->'contract_call'->>'function_name' = ${call.f}`,
      },
      {
        name: 'deploy',
        ifThis: { scope: 'contract_deployment', deployer: '*' },
        brute: () => sql`SELECT index_block_hash AS h, tx_id AS t FROM txs t WHERE ${canonicalTxs} AND tx_type = 'smart_contract' AND status = 'success'`,
      },
      {
        name: 'print',
        ifThis: { scope: 'print_event', contract_identifier: print.c, contains: 'ping' },
        brute: () => eventsOf(sql`e.event_type = 'smart_contract_log' AND e.contract_id = ${print.c} AND strpos(e.api->'contract_log'->'value'->>'repr', 'ping') > 0`),
      },
      {
        name: 'regex',
        ifThis: { scope: 'print_event', contract_identifier: '*', matches_regex: '\\(n u[0-9]*7\\)' },
        brute: () => eventsOf(sql`e.event_type = 'smart_contract_log' AND e.api->'contract_log'->'value'->>'repr' ~ '\\(n u[0-9]*7\\)'`),
      },
      {
        name: 'ft',
        ifThis: { scope: 'ft_event', asset_identifier: ft.a, actions: ['transfer', 'burn'] },
        brute: () => eventsOf(sql`e.event_type = 'fungible_token_asset' AND e.asset_identifier = ${ft.a} AND e.asset_event_type IN ('transfer', 'burn')`),
      },
      {
        name: 'nft',
        ifThis: { scope: 'nft_event', asset_identifier: nft.a, actions: ['mint'] },
        brute: () => eventsOf(sql`e.event_type = 'non_fungible_token_asset' AND e.asset_identifier = ${nft.a} AND e.asset_event_type = 'mint'`),
      },
      {
        name: 'stx',
        ifThis: { scope: 'stx_event', actions: ['transfer'] },
        opts: { start_block: 10, end_block: 40 },
        brute: () => eventsOf(sql`e.event_type = 'stx_asset' AND e.asset_event_type = 'transfer' AND e.block_height BETWEEN 10 AND 40`),
      },
    ];
    // receivers that are down (500) or never answer while the second half arrives
    receiver.down.add('call');
    receiver.hang.add('ft');
    for (const h of hooks) await create(h.name, h.ifThis, { start_block: 1, ...h.opts });
    const paused = hooks.find((h) => h.name === 'nft')!;
    const uuidOf = async (name: string) => {
      const list = (await (await api('/extended/v1/hooks?limit=50')).json()) as { results: { uuid: string; name: string; status: string }[] };
      return list.results.find((r) => r.name === name)!;
    };
    const nftHook = await uuidOf(paused.name);
    expect((await api(`/extended/v1/hooks/${nftHook.uuid}/pause`, { method: 'POST' })).status).toBe(200);
    const expiring = await create('expiring', { scope: 'stx_event', actions: ['transfer'] }, { expire_after_occurrence: 3 });

    expect((await replay(svc.observer, lines.slice(half))).every((s) => s === 200)).toBe(true);
    // the paused hook received nothing while paused
    await until('evaluator caught up', async () => (await sql`SELECT 1 FROM hook_chain`).length === 0 && (await sql`SELECT 1 FROM hooks WHERE from_seq IS NULL`).length === 0);
    const pausedCount = receiver.got.get('nft')?.length ?? 0;
    expect(pausedCount).toBe(0);
    // the failing receivers have attempts recorded with their errors
    const callHook = await uuidOf('call');
    await until('a failed attempt of the down receiver', async () => {
      const d = (await (await api(`/extended/v1/hooks/${callHook.uuid}/deliveries`)).json()) as { results: { attempts: { status_code: number | null; error: string | null }[] }[] };
      return d.results.some((r) => r.attempts.some((a) => a.status_code === 500 && /500/.test(a.error ?? '')));
    });
    const ftHook = await uuidOf('ft');
    await until('a timed-out attempt', async () => {
      const d = (await (await api(`/extended/v1/hooks/${ftHook.uuid}/deliveries`)).json()) as { results: { attempts: { error: string | null }[] }[] };
      return d.results.some((r) => r.attempts.some((a) => /no answer within/.test(a.error ?? '')));
    });
    // back up; resume
    receiver.down.clear();
    receiver.hang.clear();
    expect((await api(`/extended/v1/hooks/${nftHook.uuid}/resume`, { method: 'POST' })).status).toBe(200);
    await until('every delivery made', async () => (await sql`SELECT 1 FROM hook_deliveries WHERE status = 'pending' LIMIT 1`).length === 0);

    let rollbacks = 0;
    for (const h of hooks) {
      const expected = new Map<string, Set<string>>();
      for (const r of await h.brute()) {
        const s = expected.get(r.h) ?? new Set<string>();
        s.add(r.t);
        expected.set(r.h, s);
      }
      const got = receiver.state(h.name);
      expect([...got.entries()].map(([b, t]) => [b, [...t].sort()]).sort(), h.name).toEqual([...expected.entries()].map(([b, t]) => [b, [...t].sort()]).sort());
      expect(expected.size, `${h.name} matched something`).toBeGreaterThan(0);
      rollbacks += (receiver.got.get(h.name) ?? []).filter((d) => d.rollback.length).length;
    }
    expect(rollbacks, 'forks produced rollbacks').toBeGreaterThan(0);
    expect(receiver.badSignatures).toBe(0);

    // expiry: exactly 3 blocks applied, then expired
    const exp = (receiver.got.get('expiring') ?? []).filter((d, i, all) => all.findIndex((x) => x.deliveryId === d.deliveryId) === i);
    expect(exp.filter((d) => d.apply.length).length).toBe(3);
    // no start_block: evaluated from the first block (as Chainhook does), so the first three blocks with a transfer
    const firstThree = await sql<{ h: string }[]>`
      SELECT DISTINCT e.index_block_hash AS h, e.block_height FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE t.canonical AND t.microblock_canonical AND e.event_type = 'stx_asset' AND e.asset_event_type = 'transfer'
      ORDER BY e.block_height LIMIT 3`;
    expect(exp.flatMap((d) => d.apply.map((b) => b.hash))).toEqual(firstThree.map((r) => r.h));
    const expHook = (await (await api(`/extended/v1/hooks/${expiring.uuid}`)).json()) as { status: string; occurrences: number };
    expect(expHook).toMatchObject({ status: 'expired', occurrences: 3 });
  }, 600_000);

  it('pushes each payload to the room hook:<uuid>, for the key that created the hook only', async () => {
    // the first payload is attempted (and pushed) before anyone can subscribe: its receiver fails until we follow
    receiver.down.add('sock');
    const hook = await create('sock', { scope: 'stx_event', actions: ['transfer'] }, { start_block: 1 });
    const room = `hook:${hook.uuid}`;
    const wsUrl = svc.api.replace('http', 'ws') + '/extended/v1/ws';

    // another key, no key, an unknown hook: refused, on both protocols
    await expect(recordingSocket(svc.api, { rooms: [room], auth: { apiKey: otherKey } })).rejects.toThrow(/Not authorized/);
    await expect(recordingSocket(svc.api, { rooms: [room] })).rejects.toThrow(/Not authorized/);
    const stranger = await recordingSocket(svc.api, { auth: { apiKey: otherKey } });
    expect(await stranger.socket.timeout(10_000).emitWithAck('subscribe', room)).toMatch(/Not authorized/);
    stranger.socket.disconnect();
    const strangerRpc = await rpcClient(wsUrl, { 'x-api-key': otherKey });
    expect(await strangerRpc.call('subscribe', { event: 'hook', uuid: hook.uuid })).toMatchObject({ error: { code: -32001 } });
    strangerRpc.ws.close();
    const owner = await recordingSocket(svc.api, { auth: { apiKey: key } });
    expect(await owner.socket.timeout(10_000).emitWithAck('subscribe', 'hook:00000000-0000-4000-8000-000000000000')).toMatch(/Not authorized/);

    // the owner, on Socket.IO (subscribe) and JSON-RPC
    expect(await owner.socket.timeout(10_000).emitWithAck('subscribe', room)).toBeNull();
    const rpc = await rpcClient(wsUrl, { 'x-api-key': key });
    expect(await rpc.call('subscribe', { event: 'hook', uuid: hook.uuid })).toMatchObject({ result: { uuid: hook.uuid } });
    receiver.down.delete('sock');
    const hookId = Number((await svc.db.sql<{ id: string }[]>`SELECT id FROM hooks WHERE uuid = ${hook.uuid}`)[0].id);
    // its history is evaluated (from_seq set) and every delivery it made is delivered; a hook just created has none yet
    await until('the hook delivered everything', async () => {
      const [h] = await svc.db.sql<{ evaluated: boolean; made: boolean; pending: boolean }[]>`
        SELECT from_seq IS NOT NULL AS evaluated,
          EXISTS (SELECT 1 FROM hook_deliveries WHERE hook_id = ${hookId}) AS made,
          EXISTS (SELECT 1 FROM hook_deliveries WHERE hook_id = ${hookId} AND status = 'pending') AS pending
        FROM hooks WHERE id = ${hookId}`;
      return h.evaluated && h.made && !h.pending;
    });
    const bodies = (receiver.bodies.get('sock') ?? []).map((b) => JSON.parse(b) as { delivery_id: string });
    const sent = bodies.filter((b, i) => bodies.findIndex((x) => x.delivery_id === b.delivery_id) === i);
    expect(sent.length).toBeGreaterThan(2);
    // every payload after the first (which went out before the subscriptions), identical and in order
    const expected = sent.slice(1);
    await until('the socket got the payloads', async () => owner.got.filter((m) => m.event === room).length >= expected.length);
    await until('the JSON-RPC client got the payloads', async () => rpc.notifications().filter((n) => n.method === 'hook').length >= expected.length);
    const onSocket = owner.got.filter((m) => m.event === room).map((m) => m.args[0] as { delivery_id: string });
    const onRpc = rpc.notifications().filter((n) => n.method === 'hook').map((n) => n.params as { delivery_id: string });
    const tail = (l: { delivery_id: string }[]) => l.filter((p) => Number(p.delivery_id) > Number(sent[0].delivery_id));
    expect(tail(onSocket)).toEqual(expected);
    expect(tail(onRpc)).toEqual(expected);
    // each message carries a resume cursor
    expect(owner.got.find((m) => m.event === room)!.cursor).toMatch(/^\d+$/);
    owner.socket.disconnect();
    rpc.ws.close();
  }, 180_000);

  it('validates specifications and keeps keys apart', async () => {
    const spec = (ifThis: object, url = `${receiver.url}/x`) =>
      JSON.stringify({ chain: 'stacks', name: 'x', networks: { testnet: { if_this: ifThis, then_that: { http_post: { url } } } } });
    const bad = async (body: string, field: RegExp) => {
      const res = await api('/extended/v1/hooks', { method: 'POST', body });
      const b = (await res.json()) as { message: string };
      expect(res.status, b.message).toBe(400);
      expect(b.message).toMatch(field);
    };
    await bad(spec({ scope: 'contract_call', contract_identifier: 'nope', method: 'x' }), /contract_identifier/);
    await bad(spec({ scope: 'print_event', contract_identifier: '*', matches_regex: '(a)\\1' }), /matches_regex/);
    await bad(spec({ scope: 'stx_event', actions: ['fly'] }), /actions/);
    await bad(spec({ scope: 'stx_event', actions: ['mint'] }, 'ftp://example.com/'), /url/);
    await bad(spec({ scope: 'stx_event', actions: ['mint'] }, 'http://user:pw@example.com/'), /url/);
    await bad(spec({ scope: 'block_height', equals: 1, higher_than: 2 }), /if_this/);
    // no key: 401; another key: not found, not listed
    expect((await api('/extended/v1/hooks', { key: null })).status).toBe(401);
    const mine = await create('mine', { scope: 'stx_event', actions: ['mint'] });
    expect((await api(`/extended/v1/hooks/${mine.uuid}`, { key: otherKey })).status).toBe(404);
    expect((await api(`/extended/v1/hooks/${mine.uuid}`, { key: otherKey, method: 'DELETE' })).status).toBe(404);
    const others = (await (await api('/extended/v1/hooks', { key: otherKey })).json()) as { total: number };
    expect(others.total).toBe(0);
    // the secret is shown once
    const shown = (await (await api(`/extended/v1/hooks/${mine.uuid}`)).json()) as Record<string, unknown>;
    expect(shown).not.toHaveProperty('secret');
    expect(JSON.stringify(shown)).not.toContain(mine.secret);
    // the per-key limit
    for (let i = 0; i < 20; i++) {
      const res = await api('/extended/v1/hooks', { method: 'POST', key: otherKey, body: spec({ scope: 'stx_event', actions: ['mint'] }) });
      await res.arrayBuffer();
      if (i < 20) expect(res.status).toBe(201);
    }
    expect((await api('/extended/v1/hooks', { method: 'POST', key: otherKey, body: spec({ scope: 'stx_event', actions: ['mint'] }) })).status).toBe(409);
    expect((await api(`/extended/v1/hooks/${mine.uuid}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(`/extended/v1/hooks/${mine.uuid}`)).status).toBe(404);
  }, 300_000);
});
