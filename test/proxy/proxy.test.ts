/**
 * The /v2 node RPC proxy against real small HTTP servers playing Stacks nodes: round robin, failover, a node
 * coming back after a /v2/info probe, a hanging node (504), bodies over the limit (413), headers in both
 * directions, retry rules, pool status, and a 100 MB answer streamed through a separate service process whose
 * memory stays far below the answer's size.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { uWS } from '../../src/http/uws.js';
import { Router, listen, type Listening } from '../../src/http/router.js';
import { createLogger } from '../../src/logger.js';
import { installNodeProxy, type NodeProxy } from '../../src/proxy/index.js';
import { buildService, rssOf, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

type Mode = 'ok' | 'hang' | 'error500' | 'reset' | 'infoFails';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** A fake Stacks node: echoes requests as JSON, answers /v2/info, and can hang, fail, reset or be shut down. */
class FakeNode {
  server!: http.Server;
  port = 0;
  mode: Mode = 'ok';
  seen: Seen[] = [];
  private sockets = new Set<net.Socket>();
  constructor(readonly name: string) {}

  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body });
        if (req.url === '/v2/info') {
          if (this.mode === 'infoFails' || this.mode === 'error500') {
            res.writeHead(500).end('{}');
          } else if (this.mode === 'hang') {
            /* never answer */
          } else {
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ peer_version: 1, node: this.name }));
          }
          return;
        }
        if (this.mode === 'hang') return;
        if (this.mode === 'reset') {
          req.socket.destroy();
          return;
        }
        if (this.mode === 'error500') {
          res.writeHead(500, { 'content-type': 'text/plain', 'x-node': this.name }).end(`node ${this.name} failed`);
          return;
        }
        if (req.url!.startsWith('/v2/custom')) {
          res.writeHead(202, 'Accepted Nicely', [
            'content-type', 'application/octet-stream',
            'x-node', this.name,
            'set-cookie', 'a=1',
            'set-cookie', 'b=2',
            'x-echo-sha256', createHash('sha256').update(body).digest('hex'),
            'connection', 'keep-alive, x-private-hop',
            'x-private-hop', 'must not pass',
            'content-length', String(body.length),
          ]);
          res.end(body);
          return;
        }
        const payload = JSON.stringify({ node: this.name, method: req.method, url: req.url, length: body.length });
        res.writeHead(200, { 'content-type': 'application/json', 'x-node': this.name }).end(payload);
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Closes the listener and every connection: the port now refuses connections. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  proxied(): Seen[] {
    return this.seen.filter((s) => s.url !== '/v2/info');
  }
  probes(): number {
    return this.seen.filter((s) => s.url === '/v2/info').length;
  }
}

interface Proxy {
  base: string;
  proxy: NodeProxy;
  close(): void;
}

const log = createLogger('silent');
const cleanups: (() => unknown)[] = [];

async function startProxy(urls: string[], opts: { bodyLimit?: number; timeoutMs?: number } = {}): Promise<Proxy> {
  const app = uWS.App();
  const router = new Router(app, { ignoreTrailingSlash: true, logger: log });
  router.get('/extended', () => ({ status: 200, body: { rest: true } }));
  const proxy = installNodeProxy(app, router, {
    urls,
    bodyLimit: opts.bodyLimit ?? 64 * 1024,
    timeoutMs: opts.timeoutMs ?? 400,
    pool: { backoffBaseMs: 150, backoffMaxMs: 600, probeTimeoutMs: 300 },
    log,
  });
  const listening: Listening = await listen(app, '127.0.0.1', 0);
  const p = {
    base: `http://127.0.0.1:${listening.port}`,
    proxy,
    close() {
      listening.close();
      proxy.close();
      (app as unknown as { close(): void }).close();
    },
  };
  cleanups.push(() => p.close());
  return p;
}

async function nodes(...names: string[]): Promise<FakeNode[]> {
  const out = await Promise.all(names.map((n) => new FakeNode(n).start()));
  for (const n of out) cleanups.push(() => n.stop().catch(() => {}));
  return out;
}

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await delay(25);
  }
}

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('/v2 proxy: load balancing', () => {
  it('forwards every /v2 path round robin over the nodes, with method, path and query', async () => {
    const [a, b, c] = await nodes('a', 'b', 'c');
    const p = await startProxy([a.url, b.url, c.url]);
    const served: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await getJson(`${p.base}/v2/accounts/SP000000000000000000002Q6VF78?proof=0&tip=${i}`);
      expect(r.status).toBe(200);
      expect(r.body.method).toBe('GET');
      expect(r.body.url).toBe(`/v2/accounts/SP000000000000000000002Q6VF78?proof=0&tip=${i}`);
      served.push(r.body.node);
    }
    expect(served).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    const post = await getJson(`${p.base}/v2/contracts/call-read/SP000000000000000000002Q6VF78.pox-4/get-pox-info`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sender: 'SP000000000000000000002Q6VF78', arguments: [] }),
    });
    expect(post.status).toBe(200);
    expect(post.body).toMatchObject({ node: 'a', method: 'POST', url: '/v2/contracts/call-read/SP000000000000000000002Q6VF78.pox-4/get-pox-info' });
    expect(post.body.length).toBe(JSON.stringify({ sender: 'SP000000000000000000002Q6VF78', arguments: [] }).length);
    // The REST router still answers its own paths next to the proxy.
    expect((await getJson(`${p.base}/extended`)).body).toEqual({ rest: true });
  });

  it('passes headers through both ways, minus hop-by-hop ones, and the body byte for byte', async () => {
    const [a] = await nodes('a');
    const p = await startProxy([a.url]);
    const body = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
    const res = await new Promise<http.IncomingMessage & { body: Buffer }>((resolve, reject) => {
      const req = http.request(
        `${p.base}/v2/custom/tx?x=1`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/octet-stream',
            'x-custom': 'yes',
            'accept-language': 'fr',
            connection: 'keep-alive, x-hop',
            'x-hop': 'drop me',
            'x-api-key': 'sp_secret_must_not_reach_the_node',
            'x-forwarded-for': '203.0.113.9',
          },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve(Object.assign(r, { body: Buffer.concat(chunks) })));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(res.statusCode).toBe(202);
    expect(res.statusMessage).toBe('Accepted Nicely');
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['x-node']).toBe('a');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['x-private-hop']).toBeUndefined();
    expect(res.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'date')).toHaveLength(1);
    expect(res.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-length')).toHaveLength(1);
    expect(res.headers['content-length']).toBe(String(body.length));
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['x-echo-sha256']).toBe(createHash('sha256').update(body).digest('hex'));
    expect(res.body.equals(body)).toBe(true);
    const seen = a.proxied()[0];
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/v2/custom/tx?x=1');
    expect(seen.headers['x-custom']).toBe('yes');
    expect(seen.headers['accept-language']).toBe('fr');
    expect(seen.headers['content-type']).toBe('application/octet-stream');
    expect(seen.headers['content-length']).toBe(String(body.length));
    expect(seen.headers['x-hop']).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(seen.headers.host).toBe(`127.0.0.1:${a.port}`);
    expect(seen.body.equals(body)).toBe(true);
  });

  it('answers HEAD and 204-style replies without a body and CORS preflights itself', async () => {
    const [a] = await nodes('a');
    const p = await startProxy([a.url]);
    const head = await fetch(`${p.base}/v2/pox`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-node')).toBe('a');
    expect(await head.text()).toBe('');
    const pre = await fetch(`${p.base}/v2/transactions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type, x-api-key');
    expect(a.proxied().map((s) => s.method)).toEqual(['HEAD']);
  });
});

describe('/v2 proxy: failures', () => {
  it('fails a GET over to another node when one refuses, marks it down and shows it in the pool status', async () => {
    const [a, b] = await nodes('a', 'b');
    await a.stop(); // a's port now refuses
    const p = await startProxy([a.url, b.url]);
    for (let i = 0; i < 4; i++) {
      const r = await getJson(`${p.base}/v2/pox`);
      expect(r.status).toBe(200);
      expect(r.body.node).toBe('b');
    }
    const st = await getJson(`${p.base}/extended/v1/status/nodes`);
    expect(st.status).toBe(200);
    expect(st.body.total).toBe(2);
    expect(st.body.up).toBe(1);
    const [sa, sb] = st.body.nodes;
    expect(sa).toMatchObject({ url: a.url, status: 'down' });
    expect(sa.last_error).toMatch(/connection refused|ECONNREFUSED/); // the request's error, or a later probe's
    expect(sa.consecutive_failures).toBeGreaterThanOrEqual(1);
    expect(typeof sa.last_error_at).toBe('string');
    expect(typeof sa.next_probe_at).toBe('string');
    expect(sb).toMatchObject({ url: b.url, status: 'up', last_error: null });
    expect(sb.latency_ms).toBeGreaterThan(0);
    expect(sb.requests).toBe(4);
  });

  it('retries a POST on another node only when the connection was refused', async () => {
    const [a, b] = await nodes('a', 'b');
    const p = await startProxy([a.url, b.url]);
    await a.stop();
    const refused = await getJson(`${p.base}/v2/transactions`, { method: 'POST', body: 'tx-1' });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ node: 'b', method: 'POST', length: 4 });

    // A node that takes the POST and breaks the connection: the POST may have been applied, so no retry.
    const [c, d] = await nodes('c', 'd');
    c.mode = 'reset';
    const p2 = await startProxy([c.url, d.url]);
    const reset = await getJson(`${p2.base}/v2/transactions`, { method: 'POST', body: 'tx-2' });
    expect(reset.status).toBe(502);
    expect(reset.body).toMatchObject({ statusCode: 502, error: 'Bad Gateway' });
    expect(d.proxied()).toHaveLength(0);
    // The same failure on a GET is retried once on the other node.
    const [e, f] = await nodes('e', 'f');
    e.mode = 'reset';
    const p3 = await startProxy([e.url, f.url]);
    const get = await getJson(`${p3.base}/v2/pox`);
    expect(get.status).toBe(200);
    expect(get.body.node).toBe('f');
  });

  it('answers 504 for a hanging node, without retrying a POST, and retries a GET once elsewhere', async () => {
    const [slow] = await nodes('slow');
    slow.mode = 'hang';
    const p = await startProxy([slow.url], { timeoutMs: 300 });
    const t0 = Date.now();
    const r = await getJson(`${p.base}/v2/transactions`, { method: 'POST', body: 'x' });
    expect(r.status).toBe(504);
    expect(r.body).toMatchObject({ statusCode: 504, error: 'Gateway Timeout' });
    expect(r.body.message).toMatch(/did not answer in time/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(p.proxy.pool.nodes[0].up).toBe(false);

    const [h, ok] = await nodes('h', 'ok');
    h.mode = 'hang';
    const p2 = await startProxy([h.url, ok.url], { timeoutMs: 300 });
    const g = await getJson(`${p2.base}/v2/pox`);
    expect(g.status).toBe(200);
    expect(g.body.node).toBe('ok');
    expect(h.proxied()).toHaveLength(1);
    const st = (await getJson(`${p2.base}/extended/v1/status/nodes`)).body;
    expect(st.nodes[0]).toMatchObject({ status: 'down' });
    expect(st.nodes[0].last_error).toMatch(/no response within 300 ms/);
  });

  it('passes a 5xx answer through unchanged but takes the node out of rotation', async () => {
    const [a, b] = await nodes('a', 'b');
    a.mode = 'error500';
    const p = await startProxy([a.url, b.url]);
    const res = await fetch(`${p.base}/v2/pox`);
    expect(res.status).toBe(500);
    expect(res.headers.get('x-node')).toBe('a');
    expect(await res.text()).toBe('node a failed');
    for (let i = 0; i < 3; i++) expect((await getJson(`${p.base}/v2/pox`)).body.node).toBe('b');
    expect(a.proxied()).toHaveLength(1);
  });

  it('brings a node back only after a GET /v2/info probe succeeds, with growing back-off while it fails', async () => {
    const [a, b] = await nodes('a', 'b');
    const port = a.port;
    const p = await startProxy([a.url, b.url]);
    await a.stop();
    expect((await getJson(`${p.base}/v2/pox`)).body.node).toBe('b');
    const node = p.proxy.pool.nodes[0];
    expect(node.up).toBe(false);
    // Refused probes keep it down with a growing back-off (150, 300, 600 ms).
    await waitFor(() => node.consecutiveFailures >= 3, 3000);
    expect(node.up).toBe(false);
    for (let i = 0; i < 4; i++) expect((await getJson(`${p.base}/v2/pox`)).body.node).toBe('b');

    // The node restarts but its /v2/info still fails: still down.
    const back = new FakeNode('a');
    back.mode = 'infoFails';
    await back.start(port);
    cleanups.push(() => back.stop().catch(() => {}));
    await waitFor(() => back.probes() >= 1, 3000);
    expect(node.up).toBe(false);
    expect(back.proxied()).toHaveLength(0);

    // Healthy again: the next probe brings it back and round robin includes it.
    back.mode = 'ok';
    await waitFor(() => node.up, 3000);
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) served.add((await getJson(`${p.base}/v2/pox`)).body.node);
    expect([...served].sort()).toEqual(['a', 'b']);
    const firstProxied = back.seen.findIndex((s) => s.url !== '/v2/info');
    const lastProbeBefore = back.seen.slice(0, firstProxied).filter((s) => s.url === '/v2/info').length;
    expect(lastProbeBefore).toBeGreaterThanOrEqual(2);
    const st = (await getJson(`${p.base}/extended/v1/status/nodes`)).body;
    expect(st.up).toBe(2);
    expect(st.nodes[0]).toMatchObject({ status: 'up', consecutive_failures: 0, next_probe_at: null });
  });

  it('answers 503 when no node is available or none is configured', async () => {
    const [a] = await nodes('a');
    await a.stop();
    const p = await startProxy([a.url]);
    const first = await getJson(`${p.base}/v2/pox`);
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
    const again = await getJson(`${p.base}/v2/pox`);
    expect(again.status).toBe(503);
    expect(again.body.message).toBe('No Stacks node is available');
    expect(again.headers.get('retry-after')).toBe('5');
    const none = await startProxy([]);
    const r = await getJson(`${none.base}/v2/info`);
    expect(r.status).toBe(503);
    expect(r.body.message).toMatch(/STACKS_NODE_RPC_URLS/);
  });

  it('refuses bodies over the limit with 413, declared or streamed, without contacting a node', async () => {
    const [a] = await nodes('a');
    const p = await startProxy([a.url], { bodyLimit: 1000 });
    const declared = await getJson(`${p.base}/v2/transactions`, { method: 'POST', body: Buffer.alloc(1001, 1) });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'Request body is larger than 1000 bytes' });
    // chunked upload without content-length
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${p.base}/v2/transactions`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        let s = '';
        res.on('data', (d) => (s += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: s }));
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write(Buffer.alloc(300, 2));
      req.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).statusCode).toBe(413);
    const atLimit = await getJson(`${p.base}/v2/transactions`, { method: 'POST', body: Buffer.alloc(1000, 1) });
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.length).toBe(1000);
    expect(a.proxied()).toHaveLength(1);
  });
});

describe('/v2 proxy: client going away', () => {
  it('closes the node connection when the client aborts mid-answer', async () => {
    let closedEarly = false;
    let headersSent!: () => void;
    const started = new Promise<void>((r) => (headersSent = r));
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('x'.repeat(1024)), 10);
      res.on('close', () => {
        clearInterval(t);
        if (!res.writableEnded) closedEarly = true;
      });
      headersSent();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const p = await startProxy([`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`]);
    const ac = new AbortController();
    const res = await fetch(`${p.base}/v2/stream`, { signal: ac.signal });
    expect(res.status).toBe(200);
    await started;
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await waitFor(() => closedEarly, 3000);
    // the node is not blamed for the client leaving
    expect(p.proxy.pool.nodes[0].up).toBe(true);
  });
});

/** Serves `size` bytes (byte i = i % 251) honouring back-pressure; counts what it has written so far. */
class BigNode {
  server!: http.Server;
  sent = 0;
  port = 0;
  async start(size: number): Promise<this> {
    this.server = http.createServer((req, res) => {
      if (req.url === '/v2/info') return void res.end('{}');
      this.sent = 0;
      const chunked = req.url!.includes('chunked');
      res.writeHead(200, chunked ? { 'content-type': 'application/octet-stream' } : { 'content-type': 'application/octet-stream', 'content-length': size });
      const pump = () => {
        while (this.sent < size) {
          const n = Math.min(64 * 1024, size - this.sent);
          const block = Buffer.allocUnsafe(n); // a fresh buffer: res.write keeps a reference until it is flushed
          for (let i = 0; i < n; i++) block[i] = (this.sent + i) % 251;
          const ok = res.write(block);
          this.sent += n;
          if (!ok) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }
  stop() {
    this.server.closeAllConnections();
    return new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('/v2 proxy: streaming a 100 MB answer through a service process', () => {
  const SIZE = 100 * 1024 * 1024;
  let build: Build;
  let db: TestDatabase;
  let big: BigNode;
  let svc: ChildService;

  beforeAll(async () => {
    [build, db, big] = await Promise.all([buildService(), createTestDatabase(), new BigNode().start(SIZE)]);
    svc = await spawnService(build.main, 'api', {
      DATABASE_URL: db.url,
      STACKS_NODE_RPC_URLS: `http://127.0.0.1:${big.port}`,
      RATE_LIMIT_ANON_RPM: '0',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await big?.stop();
    await db?.drop();
    build?.remove();
  });

  for (const variant of ['content-length', 'chunked']) {
    it(`streams with back-pressure (${variant}): a paused reader holds the node back and the proxy's RSS stays low`, async () => {
      // warm up, then take the baseline
      for (let i = 0; i < 3; i++) await (await fetch(`${svc.api}/extended/v1/status/nodes`)).text();
      await delay(200);
      const baseline = rssOf(svc.pid);
      let peak = baseline;
      let pausePeak = 0;
      const sampler = setInterval(() => {
        try {
          peak = Math.max(peak, rssOf(svc.pid));
        } catch {
          /* exited */
        }
      }, 20);
      try {
        const result = await new Promise<{ received: number; sum: number; sentDuringPause: number; status: number; te?: string }>((resolve, reject) => {
          const req = http.get(`${svc.api}/v2/big${variant === 'chunked' ? '-chunked' : ''}`, { agent: false }, (res) => {
            let received = 0;
            let sum = 0;
            let pos = 0;
            let mismatch = -1;
            res.pause();
            setTimeout(() => {
              const sentDuringPause = big.sent;
              pausePeak = peak;
              res.on('data', (c: Buffer) => {
                received += c.length;
                for (let i = 0; i < c.length; i += 4093) {
                  if (mismatch < 0 && c[i] !== (pos + i) % 251) mismatch = pos + i;
                  sum = (sum + c[i]) % 1_000_000_007;
                }
                pos += c.length;
              });
              res.on('end', () => {
                if (mismatch >= 0) reject(new Error(`byte ${mismatch} differs`));
                else resolve({ received, sum, sentDuringPause, status: res.statusCode!, te: res.headers['transfer-encoding'] });
              });
              res.resume();
            }, 1500);
          });
          req.on('error', reject);
        });
        const mb = (n: number) => Math.round(n / 1024 / 1024);
        const info = `baseline ${mb(baseline)} MB, peak while paused ${mb(pausePeak)} MB, peak ${mb(peak)} MB, node sent ${mb(result.sentDuringPause)} MB while paused`;
        expect(result.status).toBe(200);
        expect(result.received).toBe(SIZE);
        if (variant === 'chunked') expect(result.te).toBe('chunked');
        // While the client did not read, the proxy stopped reading from the node: only socket buffers' worth moved
        // (four loopback sockets whose buffers Linux autotunes up to several MB each: 29 MB seen on a loaded machine),
        // far from the 100 MB an unchecked proxy would pull.
        expect(result.sentDuringPause, info).toBeLessThan(40 * 1024 * 1024);
        // Nothing piled up in the proxy while the reader was paused ...
        expect(pausePeak - baseline, info).toBeLessThan(24 * 1024 * 1024);
        // ... and the whole transfer moved through it without holding the answer: buffering it whole would grow the
        // RSS by at least 100 MB; what remains is allocator/GC slack from churning 64 KB chunks (the same on every run).
        expect(peak - baseline, info).toBeLessThan(64 * 1024 * 1024);
      } finally {
        clearInterval(sampler);
      }
    }, 300_000);
  }
});
