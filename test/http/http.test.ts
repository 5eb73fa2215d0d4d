import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../src/logger.js';
import { Router, listen, type Listening } from '../../src/http/router.js';
import { HttpError, httpError, json, redirect } from '../../src/http/response.js';
import { queryList, queryObject } from '../../src/http/query.js';
import type { TemplatedApp } from 'uWebSockets.js';
import { assertNativeUws, uWS } from '../../src/http/uws.js';

/** Collects pino lines so a test can see what was logged. */
function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger('debug', stream) };
}

/** Raw HTTP/1.1 exchange over a socket: writes `data`, returns everything read until the server closes or `ms` pass. */
function rawExchange(port: number, data: string | Buffer, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(got);
    }, ms);
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      if (got) resolve(got);
      else reject(e);
    });
    sock.write(data);
  });
}

let app: TemplatedApp;
let server: Listening;
let base: string;
const logs = captureLogs();
const slow = { started: 0, finished: 0 };
let echoCalls = 0;

let app2: TemplatedApp;
let server2: Listening;
let base2: string;

beforeAll(async () => {
  assertNativeUws();
  app = uWS.App();
  const router = new Router(app, { logger: logs.logger, bodyLimit: 64 * 1024, cors: { exposeHeaders: ['x-extra'] } });
  router
    .get('/extended/v1/tx/multiple', (req) =>
      json(200, {
        list: queryList(req.query, 'tx_id'),
        split: queryList(req.query, 'tx_id', { splitCommas: true }),
        object: queryObject(req.query),
        rawQuery: req.rawQuery,
      }),
    )
    .get('/extended/v1/tx/:tx_id', (req) => json(200, { tx_id: req.params.tx_id, path: req.path, route: req.route }))
    .get('/items/:a/sub/:b', (req) => json(200, req.params))
    .get('/files/*', (req) => json(200, { rest: req.params['*'] }))
    .get('/bad-request', () => {
      throw new HttpError(400, 'limit must be at most 30', { code: 'X1' }, { 'x-extra': 'yes' });
    })
    .get('/crash', () => {
      throw new Error('kaboom sync');
    })
    .get('/crash-async', async () => {
      await delay(5);
      throw new Error('kaboom async');
    })
    .get('/not-json', () => json(200, { n: 10n }))
    .get('/text', () => ({ status: 200, body: 'hello' }))
    .get('/nothing', () => ({ status: 204 }))
    .get('/moved', () => redirect(302, '/extended/v1/tx/0xabc'))
    .get('/teapot', () => httpError(418, 'short and stout'))
    .get('/whoami', (req) => json(200, { ip: req.remoteAddress, ua: req.headers['user-agent'], locals: req.locals }))
    .get('/slow', async () => {
      slow.started++;
      await delay(300);
      slow.finished++;
      return json(200, { slow: true });
    })
    .post('/echo', (req) => {
      echoCalls++;
      return json(200, { length: req.body!.length, text: req.body!.toString('utf8'), type: req.headers['content-type'] });
    }, { bodyLimit: 1024 })
    .post('/big', (req) => json(200, { length: req.body!.length }))
    .onRequest((req) => {
      if (req.headers['x-deny']) return httpError(401, 'denied');
      req.locals.seen = true;
    })
    .onResponse((req, res) => (req.path === '/text' ? { ...res, headers: { ...res.headers, 'x-extra': 'added' } } : undefined));
  server = await listen(app, '127.0.0.1', 0);
  base = `http://127.0.0.1:${server.port}`;

  app2 = uWS.App();
  new Router(app2, { ignoreTrailingSlash: true, cors: false, trustProxy: 1 })
    .get('/extended', () => json(200, { status: 'ready' }))
    .get('/a/:id', (req) => json(200, { id: req.params.id }))
    .get('/whoami', (req) => json(200, { ip: req.remoteAddress }))
    .post('/new_block/', (req) => json(200, { bytes: req.body!.length }));
  server2 = await listen(app2, '127.0.0.1', 0);
  base2 = `http://127.0.0.1:${server2.port}`;
});

afterAll(() => {
  server?.close();
  server2?.close();
});

describe('uWS binding', () => {
  it('is the native binding and listen() reports the real port', () => {
    expect(() => assertNativeUws()).not.toThrow();
    expect(server.port).toBeGreaterThan(0);
    expect(server2.port).not.toBe(server.port);
  });

  it('refuses a port that is already taken', async () => {
    await expect(listen(uWS.App(), '127.0.0.1', server.port)).rejects.toThrow(String(server.port));
  });
});

describe('routing', () => {
  it('passes URL-decoded params, the raw path and the route pattern', async () => {
    const r = await fetch(`${base}/extended/v1/tx/0xa%20b%2Fc`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await r.json()).toEqual({ tx_id: '0xa b/c', path: '/extended/v1/tx/0xa%20b%2Fc', route: '/extended/v1/tx/:tx_id' });
    const r2 = await fetch(`${base}/items/x%3Ay/sub/%E2%82%AC`);
    expect(await r2.json()).toEqual({ a: 'x:y', b: '€' });
  });

  it('prefers a static segment over a parameter', async () => {
    const r = await fetch(`${base}/extended/v1/tx/multiple?tx_id=0xa&tx_id=0xb,0xc&other=1`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      list: ['0xa', '0xb,0xc'],
      split: ['0xa', '0xb', '0xc'],
      object: { tx_id: ['0xa', '0xb,0xc'], other: '1' },
      rawQuery: 'tx_id=0xa&tx_id=0xb,0xc&other=1',
    });
  });

  it('decodes query values', async () => {
    const r = await fetch(`${base}/extended/v1/tx/multiple?tx_id=a%2Cb+c`);
    const body = await r.json();
    expect(body.list).toEqual(['a,b c']);
    expect(body.object).toEqual({ tx_id: 'a,b c' });
  });

  it('gives the rest of the path to a trailing wildcard', async () => {
    expect(await (await fetch(`${base}/files/a/b/c.txt`)).json()).toEqual({ rest: 'a/b/c.txt' });
    expect(await (await fetch(`${base}/files`)).json()).toEqual({ rest: '' });
  });

  it('answers unknown routes with a 404 JSON error', async () => {
    const r = await fetch(`${base}/nope/really?x=1`);
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await r.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'Route GET:/nope/really?x=1 not found' });
  });

  it('answers a known path asked with a wrong method with 405, Allow and a JSON error naming both', async () => {
    // a path template with a parameter
    const p = await fetch(`${base}/extended/v1/tx/0xabc`, { method: 'PUT', body: '{}' });
    expect(p.status).toBe(405);
    expect(p.headers.get('allow')).toBe('GET, HEAD');
    expect(await p.json()).toEqual({
      statusCode: 405,
      error: 'Method Not Allowed',
      message: 'Method PUT is not allowed on /extended/v1/tx/0xabc; allowed: GET, HEAD',
    });
    // two parameters; a trailing wildcard; a POST-only route asked with GET
    const two = await fetch(`${base}/items/x/sub/y`, { method: 'DELETE' });
    expect([two.status, two.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const wild = await fetch(`${base}/files/a/b.txt`, { method: 'POST', body: 'x' });
    expect([wild.status, wild.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const echo = await fetch(`${base}/echo`);
    expect([echo.status, echo.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await echo.json()).message).toBe('Method GET is not allowed on /echo; allowed: POST');
    // an unknown path stays a 404, whatever the method
    const unknown = await fetch(`${base}/extended/v1/tx/0xabc/nope`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
    expect((await unknown.json()).message).toBe('Route POST:/extended/v1/tx/0xabc/nope not found');
  });

  it('does not match an empty parameter', async () => {
    expect((await fetch(`${base}/items//sub/b`)).status).toBe(404);
  });

  it('answers 400 for malformed percent-encoding in the path', async () => {
    const r = await fetch(`${base}/extended/v1/tx/%E0%A4%A`);
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('treats a trailing slash as a different path by default', async () => {
    expect((await fetch(`${base}/items/1/sub/2/`)).status).toBe(404);
  });

  it('ignores trailing slashes when the router is told to', async () => {
    expect(await (await fetch(`${base2}/extended/`)).json()).toEqual({ status: 'ready' });
    expect(await (await fetch(`${base2}/extended`)).json()).toEqual({ status: 'ready' });
    expect(await (await fetch(`${base2}/a/7/`)).json()).toEqual({ id: '7' });
    // a pattern registered with a trailing slash matches both forms too
    const a = await fetch(`${base2}/new_block`, { method: 'POST', body: 'abc' });
    const b = await fetch(`${base2}/new_block/`, { method: 'POST', body: 'abcd' });
    expect([await a.json(), await b.json()]).toEqual([{ bytes: 3 }, { bytes: 4 }]);
  });
});

describe('replies', () => {
  it('sends a thrown HttpError as its JSON error with extra fields and headers', async () => {
    const r = await fetch(`${base}/bad-request`);
    expect(r.status).toBe(400);
    expect(r.headers.get('x-extra')).toBe('yes');
    expect(await r.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'limit must be at most 30', code: 'X1' });
  });

  it('turns thrown errors into a logged 500 and keeps serving', async () => {
    for (const path of ['/crash', '/crash-async', '/not-json']) {
      const r = await fetch(`${base}${path}`);
      expect(r.status).toBe(500);
      expect(await r.json()).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' });
    }
    const errors = logs.lines.filter((l) => l.level === 50);
    const messages = errors.map((l) => (l.err as { message?: string } | undefined)?.message);
    expect(messages).toContain('kaboom sync');
    expect(messages).toContain('kaboom async');
    expect((await fetch(`${base}/extended/v1/tx/0x1`)).status).toBe(200);
  });

  it('uses the reason phrase of any status and plain text for strings', async () => {
    const t = await fetch(`${base}/teapot`);
    expect(t.status).toBe(418);
    expect(await t.json()).toEqual({ statusCode: 418, error: "I'm a Teapot", message: 'short and stout' });
    const s = await fetch(`${base}/text`);
    expect(s.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(s.headers.get('x-extra')).toBe('added'); // onResponse hook
    expect(await s.text()).toBe('hello');
    const n = await fetch(`${base}/nothing`);
    expect(n.status).toBe(204);
    expect(n.headers.get('content-type')).toBeNull();
    expect(await n.text()).toBe('');
  });

  it('redirects with a location header', async () => {
    const r = await fetch(`${base}/moved`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/extended/v1/tx/0xabc');
  });

  it('answers HEAD for GET routes with headers and no body', async () => {
    const get = await fetch(`${base}/extended/v1/tx/0xhead`);
    const getBody = await get.text();
    const head = await fetch(`${base}/extended/v1/tx/0xhead`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)));
    expect(await head.text()).toBe('');
    expect((await fetch(`${base}/nope`, { method: 'HEAD' })).status).toBe(404);
  });

  it('runs request hooks before handlers and lets them short-circuit', async () => {
    const denied = await fetch(`${base}/whoami`, { headers: { 'x-deny': '1' } });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'denied' });
    const ok = await fetch(`${base}/whoami`, { headers: { 'user-agent': 'probe/1', 'x-forwarded-for': '9.9.9.9' } });
    expect(await ok.json()).toEqual({ ip: '127.0.0.1', ua: 'probe/1', locals: { seen: true } });
  });

  it('takes the client address from X-Forwarded-For only through trusted hops', async () => {
    const r = await fetch(`${base2}/whoami`, { headers: { 'x-forwarded-for': '1.2.3.4, 5.6.7.8' } });
    expect(await r.json()).toEqual({ ip: '5.6.7.8' });
    expect(await (await fetch(`${base2}/whoami`)).json()).toEqual({ ip: '127.0.0.1' });
  });
});

describe('CORS', () => {
  it('allows any origin on responses, errors included', async () => {
    for (const path of ['/extended/v1/tx/0x1', '/nope', '/crash']) {
      const r = await fetch(`${base}${path}`, { headers: { origin: 'https://example.com' } });
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('access-control-expose-headers')).toBe('x-extra');
    }
  });

  it('answers preflight requests', async () => {
    const r = await fetch(`${base}/extended/v1/tx/0x1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key, content-type' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-methods')).toContain('GET');
    expect(r.headers.get('access-control-allow-headers')).toBe('x-api-key, content-type');
  });

  it('can be turned off', async () => {
    const r = await fetch(`${base2}/extended`);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    // no preflight answer: OPTIONS is just a method this path does not answer
    const o = await fetch(`${base2}/extended`, { method: 'OPTIONS' });
    expect([o.status, o.headers.get('allow'), o.headers.get('access-control-allow-methods')]).toEqual([405, 'GET, HEAD', null]);
  });
});

describe('request bodies', () => {
  it('reads the body', async () => {
    const payload = JSON.stringify({ hello: 'wörld', n: 'x'.repeat(900) });
    const r = await fetch(`${base}/echo`, { method: 'POST', body: payload, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ length: Buffer.byteLength(payload), text: payload, type: 'application/json' });
  });

  it('reads a body that arrives in many chunks', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < 3; i++) {
          controller.enqueue(chunk);
          await delay(10);
        }
        controller.close();
      },
    });
    const r = await fetch(`${base}/big`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await r.json()).toEqual({ length: 3 * chunk.length });
  });

  it('answers 413 when Content-Length is over the route limit, without calling the handler', async () => {
    const before = echoCalls;
    const r = await fetch(`${base}/echo`, { method: 'POST', body: 'x'.repeat(2000) });
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'Request body is larger than 1024 bytes' });
    expect(echoCalls).toBe(before);
  });

  it('answers 413 and closes when a chunked body grows over the limit', async () => {
    const before = echoCalls;
    const chunk = 'y'.repeat(600);
    const body = `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(3) + '0\r\n\r\n';
    const out = await rawExchange(
      server.port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n${body}`,
    );
    expect(out.startsWith('HTTP/1.1 413 Payload Too Large\r\n')).toBe(true);
    expect(out).toContain('"message":"Request body is larger than 1024 bytes"');
    expect(echoCalls).toBe(before);
  });

  it('uses the router-wide limit on routes without their own', async () => {
    const r = await fetch(`${base}/big`, { method: 'POST', body: Buffer.alloc(64 * 1024 + 1) });
    expect(r.status).toBe(413);
    const ok = await fetch(`${base}/big`, { method: 'POST', body: Buffer.alloc(64 * 1024) });
    expect(await ok.json()).toEqual({ length: 64 * 1024 });
  });
});

describe('aborted requests', () => {
  it('survives a client that leaves while the handler is still working', async () => {
    const before = { ...slow };
    const sock = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await delay(50);
    sock.destroy();
    await delay(400);
    expect(slow.started).toBe(before.started + 1);
    expect(slow.finished).toBe(before.finished + 1);
    const r = await fetch(`${base}/slow`);
    expect(await r.json()).toEqual({ slow: true });
  });

  it('survives a client that leaves in the middle of its body', async () => {
    const before = echoCalls;
    const sock = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n' + 'z'.repeat(100));
    await delay(50);
    sock.destroy();
    await delay(50);
    expect(echoCalls).toBe(before);
    const r = await fetch(`${base}/echo`, { method: 'POST', body: 'ok' });
    expect(await r.json()).toMatchObject({ length: 2, text: 'ok' });
    expect(echoCalls).toBe(before + 1);
  });
});

describe('router setup', () => {
  it('rejects duplicate routes and conflicting parameter names', () => {
    const r = new Router(uWS.App());
    r.get('/a/:id', () => json(200, {}));
    expect(() => r.get('/a/:id', () => json(200, {}))).toThrow(/duplicate/);
    expect(() => r.get('/a/:other/x', () => json(200, {}))).toThrow(/conflicting/);
    expect(() => r.get('/a/*/x', () => json(200, {}))).toThrow(/last segment/);
    expect(() => r.get('a', () => json(200, {}))).toThrow(/start with/);
  });
});
