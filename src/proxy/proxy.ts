// `/v2/*` → the node pool. A native uWS route (it takes precedence over the REST router's catch-all), so the
// node's answer is streamed back with uWS back-pressure (tryEnd/write + onWritable, pausing the node's socket)
// instead of being buffered whole. Request bodies are buffered (up to the body limit) so a refused POST can be
// re-sent to another node.
//
// Retry rules: a GET/HEAD that failed before any response byte (refused, reset, timed out) is retried once on
// another node; any other method only when the connection was refused (nothing was sent). A reused keep-alive
// socket the node had already closed is re-tried once without counting against the node.
// Errors: no node available / refused → 503, node timeout → 504, node broke the connection → 502, body over the
// limit → 413; all `{statusCode, error, message}`.
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { TemplatedApp, HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { errorBody, reasonPhrase, JSON_CONTENT_TYPE, HttpError } from '../http/response.js';
import { readRequestBody, RequestAborted } from '../http/body.js';
import { isUnavailable } from '../store/faults.js';
import { RATE_LIMIT_EXPOSED_HEADERS, clientIp, type AccessControl, type AccessHeaders } from '../auth/access.js';
import { NodePool, nodePath, type PoolNode } from './pool.js';
import { PulseError } from '../errors.js';

export const DEFAULT_PROXY_TIMEOUT_MS = 30_000;

export interface ProxyOptions {
  pool: NodePool;
  /** Request body limit in bytes (PROXY_BODY_LIMIT). */
  bodyLimit: number;
  /** Time a node has to send its response headers (default 30 s); then 504 (or a retry for a GET). */
  timeoutMs?: number;
  /** Rate limits and keys; undefined: none. */
  access?: AccessControl;
  /** For the client address when there is no access control (rate limiting uses access's own). */
  trustProxy?: boolean | number;
  /** access-control-allow-origin: * and preflight answers (default true, as the REST router). */
  cors?: boolean;
  log: Logger;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and headers the proxy sets itself.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const REQUEST_DROP = new Set([...HOP_BY_HOP, 'host', 'content-length', 'expect', 'x-api-key']);
// uWS writes content-length / transfer-encoding and its own Date header itself.
const RESPONSE_DROP = new Set([...HOP_BY_HOP, 'content-length', 'date']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRY_ALWAYS = new Set(['GET', 'HEAD']);

type FailureKind = 'refused' | 'timeout' | 'stale' | 'error';

type Attempt =
  | { ok: true; res: IncomingMessage; latencyMs: number }
  | { ok: false; kind: FailureKind; reason: string };

class UpstreamTimeout extends PulseError {
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

interface Exchange {
  res: UwsResponse;
  aborted: boolean;
  /** Status line written (nothing else may be sent as an error any more). */
  started: boolean;
  finished: boolean;
  onAbort: (() => void) | undefined;
}

interface ProxyRequest {
  method: string;
  /** path + '?' + query as sent */
  target: string;
  headers: [string, string][];
  socketAddress: string;
  ip: string;
  body: Buffer | undefined;
}

/** Registers `/v2/*` on the app; returns nothing (the pool is closed by its owner). */
export function registerNodeProxy(app: TemplatedApp, opts: ProxyOptions): void {
  const handler = (res: UwsResponse, req: UwsRequest) => {
    try {
      handle(res, req, opts);
    } catch (err) {
      opts.log.error({ err }, 'proxy dispatch failed');
      try {
        res.cork(() => res.writeStatus('500 Internal Server Error').end('', true));
      } catch {
        /* already answered */
      }
    }
  };
  app.any('/v2/*', handler);
}

function handle(res: UwsResponse, uReq: UwsRequest, opts: ProxyOptions): void {
  const ex: Exchange = { res, aborted: false, started: false, finished: false, onAbort: undefined };
  res.onAborted(() => {
    ex.aborted = true;
    ex.onAbort?.();
  });
  const cors = opts.cors ?? true;
  const method = uReq.getMethod().toUpperCase();
  const url = uReq.getUrl();
  const query = uReq.getQuery() ?? '';
  const headers: [string, string][] = [];
  uReq.forEach((k, v) => headers.push([k, v]));
  const header = (name: string): string | undefined => {
    const found = headers.filter(([k]) => k === name).map(([, v]) => v);
    return found.length ? found.join(', ') : undefined;
  };
  let socketAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (socketAddress.startsWith('::ffff:')) socketAddress = socketAddress.slice(7);
  const xff = header('x-forwarded-for');
  const ip = opts.access ? opts.access.clientIp(socketAddress, xff) : clientIp(socketAddress, xff, opts.trustProxy ?? false);

  if (method === 'OPTIONS' && cors) {
    const h: Record<string, string> = {
      'access-control-allow-methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
      'access-control-max-age': '86400',
    };
    const requested = header('access-control-request-headers');
    if (requested) h['access-control-allow-headers'] = requested;
    sendStatus(ex, 204, h, cors);
    return;
  }

  const declared = header('content-length');
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > opts.bodyLimit) {
    sendJson(ex, 413, `Request body is larger than ${opts.bodyLimit} bytes`, {}, cors, true);
    return;
  }
  const hasBody =
    BODY_METHODS.has(method) || (declared !== undefined && declared !== '0') || header('transfer-encoding') !== undefined;
  const bodyPromise = hasBody ? readRequestBody(ex, opts.bodyLimit) : Promise.resolve(undefined);
  bodyPromise.catch(() => {});

  const preq: ProxyRequest = {
    method,
    target: url + (query ? '?' + query : ''),
    headers,
    socketAddress,
    ip,
    body: undefined,
  };
  run(ex, preq, header('x-api-key'), hasBody, bodyPromise, opts, cors).catch((err) => {
    opts.log.error({ err, method, path: url }, 'proxy request failed');
    if (!ex.started) sendJson(ex, 500, 'Internal Server Error', {}, cors);
    else closeQuietly(ex);
  });
}

async function run(
  ex: Exchange,
  preq: ProxyRequest,
  apiKey: string | undefined,
  hasBody: boolean,
  bodyPromise: Promise<Buffer | undefined>,
  opts: ProxyOptions,
  cors: boolean,
): Promise<void> {
  let limitHeaders: AccessHeaders = {};
  if (opts.access) {
    let d;
    try {
      d = await opts.access.check(preq.ip, apiKey);
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      sendJson(ex, 503, 'database unavailable, try again later', { 'retry-after': '5' }, cors);
      return;
    }
    if (!d.allowed) {
      // a body still arriving is not read: close the connection after the answer
      sendJson(ex, d.status, d.body.message, withExpose(d.headers), cors, hasBody);
      return;
    }
    limitHeaders = withExpose(d.headers);
  }
  try {
    preq.body = await bodyPromise;
  } catch (err) {
    if (err instanceof RequestAborted || ex.aborted) return;
    if (err instanceof HttpError && err.status === 413) {
      sendJson(ex, 413, err.message, limitHeaders, cors, true);
      return;
    }
    throw err;
  }
  if (ex.aborted) return;
  await forward(ex, preq, limitHeaders, opts, cors);
}

function withExpose(h: AccessHeaders): AccessHeaders {
  return Object.keys(h).length ? { ...h, 'access-control-expose-headers': RATE_LIMIT_EXPOSED_HEADERS.join(', ') } : h;
}

async function forward(ex: Exchange, preq: ProxyRequest, extra: AccessHeaders, opts: ProxyOptions, cors: boolean): Promise<void> {
  const { pool, log } = opts;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS;
  if (pool.nodes.length === 0) {
    sendJson(ex, 503, 'No Stacks node is configured (STACKS_NODE_RPC_URLS)', extra, cors);
    return;
  }
  const tried = new Set<PoolNode>();
  let retried = false;
  let staleRetried = false;
  let last: Extract<Attempt, { ok: false }> | undefined;
  for (;;) {
    if (ex.aborted) return;
    const node = pool.pick(tried);
    if (!node) {
      if (last) sendFailure(ex, last, extra, cors);
      else sendJson(ex, 503, 'No Stacks node is available', { ...extra, 'retry-after': '5' }, cors);
      return;
    }
    node.requests++;
    const attempt = await sendUpstream(ex, node, preq, timeoutMs);
    if (attempt.ok) {
      const status = attempt.res.statusCode ?? 502;
      if (status >= 500) pool.failed(node, `status ${status} on ${preq.method} ${preq.target.split('?')[0]}`);
      else pool.succeeded(node, attempt.latencyMs);
      if (log.isLevelEnabled('debug')) {
        log.debug({ method: preq.method, path: preq.target.split('?')[0], node: node.publicUrl, status, ms: Math.round(attempt.latencyMs) }, 'proxied');
      }
      streamBack(ex, attempt.res, preq.method, extra, cors, log);
      return;
    }
    if (ex.aborted) return;
    if (attempt.kind === 'stale' && !staleRetried) {
      // The node closed an idle keep-alive socket just as we reused it: try again on a fresh connection.
      staleRetried = true;
      continue;
    }
    last = attempt;
    pool.failed(node, attempt.reason);
    tried.add(node);
    log.warn({ node: node.publicUrl, method: preq.method, path: preq.target.split('?')[0], reason: attempt.reason }, 'Stacks node request failed');
    const retryable = !retried && (RETRY_ALWAYS.has(preq.method) || attempt.kind === 'refused');
    if (!retryable) {
      sendFailure(ex, attempt, extra, cors);
      return;
    }
    retried = true;
  }
}

function sendFailure(ex: Exchange, f: Extract<Attempt, { ok: false }>, extra: AccessHeaders, cors: boolean): void {
  if (f.kind === 'timeout') sendJson(ex, 504, `The Stacks node did not answer in time (${f.reason})`, extra, cors);
  else if (f.kind === 'refused') sendJson(ex, 503, `No Stacks node is available (${f.reason})`, { ...extra, 'retry-after': '5' }, cors);
  else sendJson(ex, 502, `The Stacks node failed to answer (${f.reason})`, extra, cors);
}

function forwardHeaders(preq: ProxyRequest): OutgoingHttpHeaders {
  const connectionTokens = new Set<string>();
  for (const [k, v] of preq.headers) {
    if (k === 'connection') for (const t of v.split(',')) connectionTokens.add(t.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of preq.headers) {
    if (REQUEST_DROP.has(k) || connectionTokens.has(k)) continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const xff = out['x-forwarded-for'];
  out['x-forwarded-for'] = xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${preq.socketAddress}` : preq.socketAddress;
  if (preq.body !== undefined) out['content-length'] = String(preq.body.length);
  return out;
}

function sendUpstream(ex: Exchange, node: PoolNode, preq: ProxyRequest, timeoutMs: number): Promise<Attempt> {
  return new Promise<Attempt>((resolve) => {
    const started = performance.now();
    let settled = false;
    const settle = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(a);
    };
    let upReq: ReturnType<PoolNode['module']['request']>;
    try {
      upReq = node.module.request(
        {
          protocol: node.base.protocol,
          hostname: node.base.hostname,
          port: node.base.port || undefined,
          path: nodePath(node, preq.target),
          method: preq.method,
          headers: forwardHeaders(preq),
          agent: node.agent,
          auth: node.base.username ? `${decodeURIComponent(node.base.username)}:${decodeURIComponent(node.base.password)}` : undefined,
        },
        (upRes) => settle({ ok: true, res: upRes, latencyMs: performance.now() - started }),
      );
    } catch (err) {
      // e.g. characters http.request refuses in the path
      settled = true;
      resolve({ ok: false, kind: 'error', reason: (err as Error).message });
      return;
    }
    const timer = setTimeout(() => upReq.destroy(new UpstreamTimeout(`no response within ${timeoutMs} ms`)), timeoutMs);
    upReq.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      if (err instanceof UpstreamTimeout) settle({ ok: false, kind: 'timeout', reason: err.message });
      else if (err.code === 'ECONNREFUSED') settle({ ok: false, kind: 'refused', reason: 'connection refused' });
      else if (err.code === 'ECONNRESET' && upReq.reusedSocket) settle({ ok: false, kind: 'stale', reason: 'connection reset' });
      else settle({ ok: false, kind: 'error', reason: err.code ?? err.message });
    });
    ex.onAbort = () => upReq.destroy(new RequestAborted());
    upReq.end(preq.body);
  });
}

/** Writes the node's status and headers, then streams its body with back-pressure. */
function streamBack(ex: Exchange, upRes: IncomingMessage, method: string, extra: AccessHeaders, cors: boolean, log: Logger): void {
  const res = ex.res;
  const abortUpstream = () => upRes.destroy();
  if (ex.aborted) {
    abortUpstream();
    return;
  }
  ex.onAbort = abortUpstream;
  const status = upRes.statusCode ?? 502;
  const rawLength = upRes.headers['content-length'];
  const chunked = /chunked/i.test(String(upRes.headers['transfer-encoding'] ?? ''));
  const total = !chunked && rawLength !== undefined && /^\d+$/.test(rawLength) ? Number(rawLength) : undefined;
  const noBody = method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);

  const connectionTokens = new Set(
    String(upRes.headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const finish = () => {
    ex.finished = true;
    ex.onAbort = undefined;
  };

  res.cork(() => {
    ex.started = true;
    res.writeStatus(`${status} ${upRes.statusMessage || reasonPhrase(status)}`);
    const raw = upRes.rawHeaders;
    let hasAcao = false;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const k = raw[i].toLowerCase();
      if (RESPONSE_DROP.has(k) || connectionTokens.has(k) || k in extra) continue;
      if (k === 'access-control-allow-origin') hasAcao = true;
      res.writeHeader(raw[i], raw[i + 1]);
    }
    for (const k in extra) res.writeHeader(k, extra[k]);
    if (cors && !hasAcao) res.writeHeader('access-control-allow-origin', '*');
    if (noBody) {
      res.endWithoutBody(method === 'HEAD' ? total : undefined);
      finish();
    } else if (total === 0) {
      res.end();
      finish();
    }
  });
  if (ex.finished) {
    upRes.resume(); // drain whatever there is so the socket can be reused
    return;
  }

  let pending: { chunk: Buffer; start: number } | undefined;
  const onWritable = (offset: number): boolean => {
    if (ex.aborted || ex.finished) return true;
    if (!pending) {
      upRes.resume();
      return true;
    }
    const [ok, done] = res.tryEnd(pending.chunk.subarray(offset - pending.start), total!);
    if (done) {
      pending = undefined;
      finish();
      upRes.resume();
      return true;
    }
    if (ok) {
      pending = undefined;
      upRes.resume();
    }
    return ok;
  };

  upRes.on('data', (chunk: Buffer) => {
    if (ex.aborted || ex.finished) return;
    res.cork(() => {
      if (total !== undefined) {
        const start = res.getWriteOffset();
        const [ok, done] = res.tryEnd(chunk, total);
        if (done) finish();
        else if (!ok) {
          pending = { chunk, start };
          upRes.pause();
          res.onWritable(onWritable);
        }
      } else if (!res.write(chunk)) {
        upRes.pause();
        res.onWritable(onWritable);
      }
    });
  });
  upRes.on('end', () => {
    if (ex.aborted || ex.finished) return;
    if (total === undefined) {
      res.cork(() => res.end());
      finish();
    } else {
      // fewer bytes than announced: the client must see a broken response, not a complete one
      log.warn({ status, expected: total }, 'Stacks node response ended early');
      closeQuietly(ex);
    }
  });
  const broken = (err?: Error) => {
    if (ex.aborted || ex.finished) return;
    log.warn({ err: err?.message }, 'Stacks node response broke off');
    closeQuietly(ex);
  };
  upRes.on('error', broken);
  upRes.on('aborted', () => broken());
}

function closeQuietly(ex: Exchange): void {
  if (ex.aborted || ex.finished) return;
  ex.finished = true;
  try {
    ex.res.close();
  } catch {
    /* gone */
  }
}

function sendStatus(ex: Exchange, status: number, headers: Record<string, string>, cors: boolean): void {
  if (ex.aborted || ex.started) return;
  ex.started = true;
  ex.finished = true;
  ex.res.cork(() => {
    ex.res.writeStatus(`${status} ${reasonPhrase(status)}`);
    for (const k in headers) ex.res.writeHeader(k, headers[k]);
    if (cors) ex.res.writeHeader('access-control-allow-origin', '*');
    ex.res.endWithoutBody();
  });
}

function sendJson(ex: Exchange, status: number, message: string, headers: Record<string, string>, cors: boolean, close = false): void {
  if (ex.aborted || ex.started) return;
  ex.started = true;
  ex.finished = true;
  const payload = JSON.stringify(errorBody(status, message));
  ex.res.cork(() => {
    ex.res.writeStatus(`${status} ${reasonPhrase(status)}`);
    ex.res.writeHeader('content-type', JSON_CONTENT_TYPE);
    for (const k in headers) ex.res.writeHeader(k, headers[k]);
    if (cors) ex.res.writeHeader('access-control-allow-origin', '*');
    ex.res.end(payload, close);
  });
}


