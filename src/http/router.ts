// A small router on a uWebSockets.js app. One `app.any('/*')` catch-all dispatches to routes kept in a
// segment trie (static segments win over `:params`, which win over a trailing `*`), so more specific
// native uWS routes registered elsewhere on the same app (socket.io's `/socket.io/`, `app.ws(...)`)
// still take precedence. Everything is copied out of the uWS request synchronously; the uWS response
// is written only inside `res.cork` and never after `onAborted` fired.
import type { Logger } from 'pino';
import { logger as defaultLogger } from '../logger.js';
import type { TemplatedApp, HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { uWS } from './uws.js';
import { readRequestBody, RequestAborted } from './body.js';
import {
  HttpError,
  JSON_CONTENT_TYPE,
  httpError,
  reasonPhrase,
  type HeaderValue,
  type HttpResponse,
} from './response.js';

export interface HttpRequest {
  /** Upper case: GET, POST, HEAD, ... */
  method: string;
  /** The path as sent (still percent-encoded), without the query string. */
  path: string;
  /** Decoded query; repeated parameters via `query.getAll(name)` / queryList(). */
  query: URLSearchParams;
  /** The raw query string without '?', '' when there is none. */
  rawQuery: string;
  /** Route parameters, URL-decoded. A trailing `*` in the pattern is available as params['*']. */
  params: Record<string, string>;
  /** Lower-case header names; repeated headers are joined with ', '. */
  headers: Record<string, string>;
  /** The request body (POST, PUT, PATCH, DELETE); undefined for other methods. */
  body?: Buffer;
  /** Client address (honours X-Forwarded-For per the router's trustProxy). */
  remoteAddress: string;
  /** The matched route pattern, e.g. '/extended/v1/tx/:tx_id'; undefined when no route matched. */
  route?: string;
  /** Free space for hooks (e.g. the authenticated API key) to hand data to handlers. */
  locals: Record<string, unknown>;
  /** performance.now() when the request head arrived (before its body was read). */
  receivedAt?: number;
}

export type Handler = (req: HttpRequest) => Promise<HttpResponse> | HttpResponse;
/** Runs before the handler; returning a response short-circuits (e.g. 401, 429). */
export type RequestHook = (req: HttpRequest) => Promise<HttpResponse | void> | HttpResponse | void;
/** Runs on every response before it is sent (also errors and not-found); may return a replacement. */
export type ResponseHook = (req: HttpRequest, res: HttpResponse) => HttpResponse | void;

export interface CorsOptions {
  /** Extra response headers the browser may read (access-control-expose-headers). */
  exposeHeaders?: string[];
  /** access-control-max-age for preflights, seconds (default 86400). */
  maxAge?: number;
}

export interface RouterOptions {
  /** `/a/b/` matches `/a/b` (default false). */
  ignoreTrailingSlash?: boolean;
  /** Default request body limit in bytes (default 1 MiB). Over it → 413. */
  bodyLimit?: number;
  /** `access-control-allow-origin: *` on every response and OPTIONS preflight answers (default true). */
  cors?: boolean | CorsOptions;
  /** Default: the process logger. Each request is logged at debug; handler errors at error. */
  logger?: Logger;
  /** false (default): remoteAddress is the socket address; true: leftmost X-Forwarded-For; n: n trusted hops. */
  trustProxy?: boolean | number;
  /** Turns a thrown non-HttpError into a response (e.g. database unreachable → 503); undefined → 500. */
  mapError?: (err: unknown, req: HttpRequest) => HttpResponse | undefined;
  /** true (default): a known path asked with another method is a 405 with `Allow`; false: a 404 like any unknown route. */
  methodNotAllowed?: boolean;
}

export interface RouteOptions {
  /** Body limit in bytes for this route (overrides the router's). */
  bodyLimit?: number;
}

interface Route {
  pattern: string;
  handler: Handler;
  bodyLimit: number | undefined;
}

interface TrieNode {
  statics: Map<string, TrieNode>;
  param: { name: string; node: TrieNode } | undefined;
  /** Routes for a trailing `*` at this position, by method. */
  wildcard: Map<string, Route> | undefined;
  routes: Map<string, Route>;
}

const newNode = (): TrieNode => ({ statics: new Map(), param: undefined, wildcard: undefined, routes: new Map() });

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ALL = '*';
const DEFAULT_BODY_LIMIT = 1024 * 1024;
/**
 * Largest request head (request line + headers) answered normally; over it → 431 with a JSON error. uWebSockets.js
 * 20.30 (this build reads no UWS_HTTP_MAX_HEADERS_SIZE) buffers at most 4 KB of a head that arrives in several TCP
 * segments and closes the connection without an answer past that (and past 50 headers): a head arriving whole is
 * parsed at any size. Keeping our limit under the native one makes every over-long head we get to see a 431.
 */
export const MAX_HEAD_BYTES = 4000;
const LISTEN_EXCLUSIVE_PORT = 1;


/** Per-request state shared by the body reader, the writer and onAborted. */
interface Exchange {
  res: UwsResponse;
  aborted: boolean;
  done: boolean;
  onAbort: (() => void) | undefined;
  /** counted out of Router.inFlight (answered or aborted) */
  settled?: boolean;
}

export class Router {
  readonly app: TemplatedApp;
  private readonly root = newNode();
  /** Every method some route was registered for ('*' for all()). */
  private readonly methods = new Set<string>();
  private readonly requestHooks: RequestHook[] = [];
  private readonly responseHooks: ResponseHook[] = [];
  private notFoundHandler: Handler = (req) =>
    httpError(404, `Route ${req.method}:${req.path}${req.rawQuery ? '?' + req.rawQuery : ''} not found`);
  private readonly ignoreTrailingSlash: boolean;
  private readonly bodyLimit: number;
  private readonly cors: CorsOptions | undefined;
  private readonly log: Logger;
  private readonly trustProxy: boolean | number;
  private readonly mapError: RouterOptions['mapError'];
  private open = 0;
  private drainWaiters: (() => void)[] = [];

  /** Requests received (possibly still uploading their body) and not yet answered or aborted. */
  get inFlight(): number {
    return this.open;
  }

  /** Resolves once no request is in flight (graceful shutdown), or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      t.unref?.();
      this.drainWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private settle(ex: Exchange): void {
    if (ex.settled) return;
    ex.settled = true;
    if (--this.open === 0) this.drainWaiters.splice(0).forEach((w) => w());
  }

  private readonly answers405: boolean;

  constructor(app: TemplatedApp, options: RouterOptions = {}) {
    this.app = app;
    this.ignoreTrailingSlash = options.ignoreTrailingSlash ?? false;
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    this.cors = options.cors === false ? undefined : options.cors === true || options.cors === undefined ? {} : options.cors;
    this.log = options.logger ?? defaultLogger;
    this.trustProxy = options.trustProxy ?? false;
    this.mapError = options.mapError;
    this.answers405 = options.methodNotAllowed ?? true;
    app.any('/*', (res, req) => {
      try {
        this.dispatch(res, req);
      } catch (err) {
        // Never let an exception escape into uWS (it would take the process down).
        this.log.error({ err }, 'HTTP dispatch failed');
        try {
          res.cork(() => res.writeStatus('500 Internal Server Error').end('', true));
        } catch {
          // already answered or aborted
        }
      }
    });
  }

  /**
   * Sends a native uWS pattern to this router too, so it wins over another native route with a less specific pattern
   * registered on the same app (uWS prefers a static segment to a wildcard): `/v2/prices/*` (BNS, served here) ahead
   * of the node proxy's `/v2/*`.
   */
  claim(pattern: string): this {
    this.app.any(pattern, (res, req) => {
      try {
        this.dispatch(res, req);
      } catch (err) {
        this.log.error({ err }, 'HTTP dispatch failed');
        try {
          res.cork(() => res.writeStatus('500 Internal Server Error').end('', true));
        } catch {
          // already answered or aborted
        }
      }
    });
    return this;
  }

  get(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add('GET', pattern, handler, options);
  }
  post(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add('POST', pattern, handler, options);
  }
  put(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add('PUT', pattern, handler, options);
  }
  patch(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add('PATCH', pattern, handler, options);
  }
  delete(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add('DELETE', pattern, handler, options);
  }
  /** Any method (method-specific routes on the same pattern win). */
  all(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.add(ALL, pattern, handler, options);
  }
  /** Replaces the default 404 `{statusCode, error, message}` reply. */
  notFound(handler: Handler): this {
    this.notFoundHandler = handler;
    return this;
  }
  onRequest(hook: RequestHook): this {
    this.requestHooks.push(hook);
    return this;
  }
  onResponse(hook: ResponseHook): this {
    this.responseHooks.push(hook);
    return this;
  }

  /**
   * Registers `handler` for `method` on `pattern`: '/a/:id/b' (params), '/v2/*' (the rest of the path,
   * params['*']). Throws on a duplicate or a malformed pattern.
   */
  add(method: string, pattern: string, handler: Handler, options?: RouteOptions): this {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${pattern}`);
    const segments = pattern.split('/').slice(1);
    if (this.ignoreTrailingSlash && segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
    let node = this.root;
    const route: Route = { pattern, handler, bodyLimit: options?.bodyLimit };
    method = method.toUpperCase();
    this.methods.add(method);
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      if (seg === '*') {
        if (i !== segments.length - 1) throw new Error(`'*' must be the last segment: ${pattern}`);
        node.wildcard ??= new Map();
        if (node.wildcard.has(method)) throw new Error(`duplicate route ${method} ${pattern}`);
        node.wildcard.set(method, route);
        return this;
      }
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`bad parameter name in ${pattern}`);
        if (node.param && node.param.name !== name) {
          throw new Error(`conflicting parameter names :${node.param.name} and :${name} in ${pattern}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(method)) throw new Error(`duplicate route ${method} ${pattern}`);
    node.routes.set(method, route);
    return this;
  }

  /** Every registered route as {method ('*' for all()), pattern}, e.g. to check an API description covers them. */
  routes(): { method: string; pattern: string }[] {
    const out: { method: string; pattern: string }[] = [];
    const walk = (node: TrieNode) => {
      for (const [method, r] of node.routes) out.push({ method, pattern: r.pattern });
      if (node.wildcard) for (const [method, r] of node.wildcard) out.push({ method, pattern: r.pattern });
      for (const child of node.statics.values()) walk(child);
      if (node.param) walk(node.param.node);
    };
    walk(this.root);
    return out;
  }

  /** Finds the route for `method` on the decoded path segments; fills `params`. */
  private match(method: string, segments: string[], params: Record<string, string>): Route | undefined {
    const pick = (routes: Map<string, Route> | undefined): Route | undefined => {
      if (!routes) return undefined;
      return routes.get(method) ?? (method === 'HEAD' ? routes.get('GET') : undefined) ?? routes.get(ALL);
    };
    const walk = (node: TrieNode, i: number): Route | undefined => {
      if (i === segments.length) {
        const r = pick(node.routes);
        if (r) return r;
        // '/v2/*' also matches '/v2' with params['*'] = ''
      } else {
        const seg = segments[i];
        const s = node.statics.get(seg);
        if (s) {
          const r = walk(s, i + 1);
          if (r) return r;
        }
        if (node.param && seg !== '') {
          const r = walk(node.param.node, i + 1);
          if (r) {
            params[node.param.name] = seg;
            return r;
          }
        }
      }
      const w = pick(node.wildcard);
      if (w) {
        params['*'] = segments.slice(i).join('/');
        return w;
      }
      return undefined;
    };
    return walk(this.root, 0);
  }

  /**
   * The methods some route answers on these path segments (HEAD wherever GET is), in a fixed order: a path with
   * none is unknown (404); a path with some that do not include the request's method is a 405 naming them.
   */
  allowedMethods(segments: string[]): string[] {
    const out = new Set<string>();
    for (const m of this.methods) {
      if (m === ALL) continue;
      if (this.match(m, segments, {})) out.add(m);
    }
    if (out.has('GET')) out.add('HEAD');
    const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
    return [...out].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
  }

  private dispatch(res: UwsResponse, uReq: UwsRequest): void {
    const started = performance.now();
    const ex: Exchange = { res, aborted: false, done: false, onAbort: undefined };
    this.open++;
    res.onAborted(() => {
      ex.aborted = true;
      this.settle(ex);
      ex.onAbort?.();
    });

    // Copy everything out of the uWS request now: it is invalid after this function returns.
    const method = uReq.getMethod().toUpperCase();
    const path = uReq.getUrl();
    const rawQuery = uReq.getQuery() ?? '';
    const headers: Record<string, string> = {};
    uReq.forEach((k, v) => {
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    });
    const req: HttpRequest = {
      method,
      path,
      query: new URLSearchParams(rawQuery),
      rawQuery,
      params: {},
      headers,
      body: undefined,
      remoteAddress: this.clientAddress(res, headers),
      route: undefined,
      locals: {},
      receivedAt: started,
    };

    let headBytes = method.length + path.length + (rawQuery ? rawQuery.length + 1 : 0) + 12; // "M /p?q HTTP/1.1\r\n"
    for (const k in headers) headBytes += k.length + headers[k].length + 4;
    if (headBytes > MAX_HEAD_BYTES) {
      const message = `request head (URL and headers) is ${headBytes} bytes, over the limit of ${MAX_HEAD_BYTES}: shorten the URL or the headers`;
      this.send(ex, req, httpError(431, message), started, true);
      return;
    }

    if (method === 'OPTIONS' && this.cors) {
      this.send(ex, req, this.preflight(req), started);
      return;
    }

    let route: Route | undefined;
    let segments: string[] | undefined;
    try {
      segments = this.segmentsOf(path);
    } catch {
      // fall through with segments undefined → 400
    }
    if (segments) route = this.match(method, segments, req.params);
    req.route = route?.pattern;

    let bodyPromise: Promise<Buffer> | undefined;
    if (BODY_METHODS.has(method)) {
      const limit = route?.bodyLimit ?? this.bodyLimit;
      const declared = headers['content-length'];
      if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
        this.send(ex, req, tooLarge(limit), started, true);
        return;
      }
      bodyPromise = readRequestBody(ex, limit);
      // Reading stops by itself on 413; do not let an early rejection go unhandled while hooks run.
      bodyPromise.catch(() => {});
    }

    const allowed = route || !segments || !this.answers405 ? undefined : this.allowedMethods(segments);
    this.run(ex, req, route, segments === undefined, bodyPromise, started, allowed?.length ? allowed : undefined).catch((err) => {
      this.log.error({ err, method, path }, 'HTTP reply failed');
    });
  }

  private async run(
    ex: Exchange,
    req: HttpRequest,
    route: Route | undefined,
    badPath: boolean,
    bodyPromise: Promise<Buffer> | undefined,
    started: number,
    /** set when no route matched the method but some match the path: a 405 with these in `Allow` */
    allowed?: string[],
  ): Promise<void> {
    let out: HttpResponse | undefined;
    let close = false;
    try {
      if (bodyPromise) req.body = await bodyPromise;
      if (badPath) throw new HttpError(400, 'Malformed percent-encoding in URL path');
      for (const hook of this.requestHooks) {
        const r = await hook(req);
        if (r) {
          out = r;
          break;
        }
      }
      out ??= await (route ? route.handler(req) : allowed ? methodNotAllowed(req, allowed) : this.notFoundHandler(req));
      if (!out || typeof out.status !== 'number') throw new Error(`handler for ${req.method} ${req.path} returned no response`);
    } catch (err) {
      if (err instanceof RequestAborted || ex.aborted) return;
      if (err instanceof HttpError) {
        out = err.toResponse();
        if (err.status === 413 && req.body === undefined && bodyPromise) close = true;
      } else {
        out = this.mapThrown(err, req);
      }
    }
    this.send(ex, req, out, started, close);
  }

  private mapThrown(err: unknown, req: HttpRequest): HttpResponse {
    try {
      const mapped = this.mapError?.(err, req);
      if (mapped) return mapped;
    } catch (mapErr) {
      this.log.error({ err: mapErr }, 'mapError failed');
    }
    this.log.error({ err, method: req.method, path: req.path, route: req.route }, 'unhandled error in HTTP handler');
    return httpError(500, 'Internal Server Error');
  }

  private preflight(req: HttpRequest): HttpResponse {
    const headers: Record<string, HeaderValue> = {
      'access-control-allow-methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
      'access-control-max-age': this.cors?.maxAge ?? 86400,
    };
    const requested = req.headers['access-control-request-headers'];
    if (requested) headers['access-control-allow-headers'] = requested;
    return { status: 204, headers };
  }

  private segmentsOf(path: string): string[] {
    let p = path;
    if (this.ignoreTrailingSlash && p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
    const raw = p.split('/');
    raw.shift(); // leading ''
    return raw.map((s) => (s.includes('%') ? decodeURIComponent(s) : s));
  }

  private clientAddress(res: UwsResponse, headers: Record<string, string>): string {
    let socketAddr = Buffer.from(res.getRemoteAddressAsText()).toString();
    if (socketAddr.startsWith('::ffff:')) socketAddr = socketAddr.slice(7);
    if (this.trustProxy === false || this.trustProxy === 0) return socketAddr;
    const xff = headers['x-forwarded-for'];
    if (!xff) return socketAddr;
    const chain = xff
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (chain.length === 0) return socketAddr;
    if (this.trustProxy === true) return chain[0];
    const all = [...chain, socketAddr];
    return all[Math.max(0, all.length - 1 - this.trustProxy)];
  }

  /** Serialises `out` and writes it (corked), unless the client is gone or a reply was already sent. */
  private send(ex: Exchange, req: HttpRequest, out: HttpResponse, started: number, close = false): void {
    for (const hook of this.responseHooks) {
      try {
        out = hook(req, out) ?? out;
      } catch (err) {
        this.log.error({ err }, 'response hook failed');
      }
    }
    let status = out.status;
    let headers = out.headers;
    let payload: string | Buffer;
    let contentType: string | undefined;
    try {
      ({ payload, contentType } = serialize(out.body));
    } catch (err) {
      this.log.error({ err, method: req.method, path: req.path }, 'cannot serialise HTTP response');
      const fallback = httpError(500, 'Internal Server Error');
      status = fallback.status;
      headers = undefined;
      ({ payload, contentType } = serialize(fallback.body));
    }
    if (ex.aborted || ex.done) return;
    ex.done = true;
    this.settle(ex);
    const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
    const headOnly = req.method === 'HEAD';
    ex.res.cork(() => {
      const res = ex.res;
      res.writeStatus(`${status} ${reasonPhrase(status)}`);
      let hasContentType = false;
      if (headers) {
        for (const key in headers) {
          const lower = key.toLowerCase();
          if (lower === 'content-length') continue; // uWS writes it
          if (lower === 'content-type') hasContentType = true;
          res.writeHeader(lower, String(headers[key]));
        }
      }
      if (!hasContentType && contentType && !noBody) res.writeHeader('content-type', contentType);
      if (this.cors) {
        res.writeHeader('access-control-allow-origin', '*');
        if (this.cors.exposeHeaders?.length) res.writeHeader('access-control-expose-headers', this.cors.exposeHeaders.join(', '));
      }
      if (noBody) res.endWithoutBody(undefined, close);
      else if (headOnly) res.endWithoutBody(Buffer.byteLength(payload), close);
      else res.end(payload, close);
    });
    if (this.log.isLevelEnabled('debug')) {
      this.log.debug(
        { method: req.method, path: req.path, status, ms: Math.round((performance.now() - started) * 100) / 100, ip: req.remoteAddress },
        'http request',
      );
    }
  }
}

function serialize(body: HttpResponse['body']): { payload: string | Buffer; contentType: string | undefined } {
  if (body === undefined) return { payload: '', contentType: undefined };
  if (typeof body === 'string') return { payload: body, contentType: 'text/plain; charset=utf-8' };
  if (Buffer.isBuffer(body)) return { payload: body, contentType: 'application/octet-stream' };
  const s = JSON.stringify(body);
  if (s === undefined) throw new TypeError('response body is not JSON-serialisable');
  return { payload: s, contentType: JSON_CONTENT_TYPE };
}

/** 405 for a known path asked with a method it does not answer; `Allow` lists the ones it does. */
function methodNotAllowed(req: HttpRequest, allowed: string[]): HttpResponse {
  const list = allowed.join(', ');
  return httpError(405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${list}`, undefined, { allow: list });
}

function tooLarge(limit: number): HttpResponse {
  return httpError(413, `Request body is larger than ${limit} bytes`);
}

export function createRouter(app: TemplatedApp, options?: RouterOptions): Router {
  return new Router(app, options);
}

export interface Listening {
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting connections (open keep-alive connections finish on their own; app.close() ends all). */
  close(): void;
}

/** Listens on host:port (0 → a free port) with an exclusive port; rejects when the port cannot be bound. */
export function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const cb = (socket: unknown) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
        return;
      }
      let closed = false;
      resolve({
        port: uWS.us_socket_local_port(socket as never),
        close() {
          if (closed) return;
          closed = true;
          uWS.us_listen_socket_close(socket as never);
        },
      });
    };
    // listen(host, port, options, cb) exists in the native binding though the typings omit it.
    (app.listen as unknown as (h: string, p: number, o: number, c: (s: unknown) => void) => void)(
      host,
      port,
      LISTEN_EXCLUSIVE_PORT,
      cb,
    );
  });
}
