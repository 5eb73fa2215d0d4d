// Who may call the API and how often: the x-api-key check (401 for an unknown or revoked key, never a silent
// fall-back to anonymous) and the rate limits (anonymous per client IP, keyed per key). One AccessControl serves
// the REST router (hooks), the /v2 proxy and the push layer (checkConnection). The observer never goes through it.
import { BlockList, isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Router } from '../http/router.js';
import { errorBody, httpError, type ErrorBody, type HttpResponse } from '../http/response.js';
import type { KeyStore } from './keys.js';
import type { RateLimiter } from './rate-limit.js';
import { countRateLimitRejection } from '../metrics.js';

export type AccessHeaders = Record<string, string>;

export type AccessDecision =
  | {
      allowed: true;
      /** RateLimit-* headers to put on the response ({} when no limit applies). */
      headers: AccessHeaders;
      /** The key's name when a valid key was sent. */
      keyName?: string;
    }
  | {
      allowed: false;
      /** 401 invalid or revoked key, 429 rate limited. */
      status: 401 | 429;
      headers: AccessHeaders;
      body: ErrorBody;
    };

export interface AccessOptions {
  /** Anonymous requests per minute per client IP; 0: unlimited. */
  anonRpm: number;
  /** Default requests per minute per key; 0: unlimited. A key's own rpm overrides it. */
  keyRpm: number;
  /** As config.trustProxy: false → socket address; true → leftmost X-Forwarded-For; n → n trusted hops. */
  trustProxy: boolean | number;
  limiter: RateLimiter;
  /** undefined: keys are not supported (every x-api-key is refused). */
  keys: KeyStore | undefined;
  log?: Logger;
  /** RATE_LIMIT_EXEMPT: client networks (CIDR) never rate limited (an API key they send is still checked). */
  exempt?: string[];
}

/**
 * The API process's own static pages and documents: the dashboard's files, the docs (Swagger UI) and the OpenAPI
 * document. They are never rate limited nor key-checked: a person opening the dashboard must get the page (which then
 * shows a 429 of the API calls it makes as a banner), not a JSON error instead of it.
 */
export function isStaticAsset(path: string): boolean {
  return (
    path === '/dashboard' ||
    path.startsWith('/dashboard/') ||
    path === '/docs' ||
    path.startsWith('/docs/') ||
    path === '/extended/openapi.json' ||
    path === '/extended/openapi.yaml' ||
    // load balancers and orchestrators probe these: a probe refused by a rate limit would take the process out
    path === '/health' ||
    path === '/ready'
  );
}

/** A BlockList of `cidrs` (`10.0.0.0/8`, `::1/128`, or a bare address); throws on a malformed entry. */
export function networkList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [addr, prefix, extra] = entry.split('/');
    const family = isIP(addr);
    if (!family || extra !== undefined) throw new Error(`not a network: ${entry}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const max = family === 4 ? 32 : 128;
    if (prefix === undefined) {
      list.addAddress(addr, type);
      continue;
    }
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) throw new Error(`not a network: ${entry}`);
    list.addSubnet(addr, Number(prefix), type);
  }
  return list;
}

function inNetworks(list: BlockList, ip: string): boolean {
  const family = isIP(ip);
  if (!family) return false;
  if (list.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return true;
  // an IPv4 client seen as ::ffff:a.b.c.d, or the reverse
  if (family === 6 && ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return list.check(ip.slice(7), 'ipv4');
  return false;
}

export const RATE_LIMIT_EXPOSED_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After'];
const STALE_HEADERS = new Set(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'access-control-expose-headers']);

/**
 * The client address for rate limiting: the socket address, or with trustProxy the X-Forwarded-For entry it
 * names (true: leftmost; n: the n-th hop from the right, counting the socket address as hop 0).
 */
export function clientIp(socketAddress: string, forwardedFor: string | undefined, trustProxy: boolean | number): string {
  let addr = socketAddress;
  if (addr.startsWith('::ffff:')) addr = addr.slice(7);
  if (trustProxy === false || trustProxy === 0 || !forwardedFor) return addr;
  const chain = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (chain.length === 0) return addr;
  if (trustProxy === true) return chain[0];
  const all = [...chain, addr];
  return all[Math.max(0, all.length - 1 - trustProxy)];
}

export class AccessControl {
  readonly options: AccessOptions;
  private readonly exempt: BlockList | undefined;

  constructor(options: AccessOptions) {
    this.options = options;
    this.exempt = options.exempt?.length ? networkList(options.exempt) : undefined;
  }

  /** true when `ip` is in RATE_LIMIT_EXEMPT. */
  isExempt(ip: string): boolean {
    return this.exempt !== undefined && inNetworks(this.exempt, ip);
  }

  /** The address rate limits use for a connection (see clientIp). */
  clientIp(socketAddress: string, forwardedFor: string | undefined): string {
    return clientIp(socketAddress, forwardedFor, this.options.trustProxy);
  }

  /**
   * Authenticates `apiKey` (undefined: anonymous) and counts one request from `ip` or the key. Throws only when
   * the key store is unreachable (the router maps that to 503).
   */
  async check(ip: string, apiKey: string | undefined): Promise<AccessDecision> {
    let bucket: string;
    let limit: number;
    let keyName: string | undefined;
    if (apiKey !== undefined) {
      const info = apiKey.trim() === '' || !this.options.keys ? undefined : await this.options.keys.lookup(apiKey.trim());
      if (!info || info.revoked) {
        return {
          allowed: false,
          status: 401,
          headers: {},
          body: errorBody(401, info?.revoked ? 'The API key is invalid: it has been revoked' : 'The API key is invalid'),
        };
      }
      keyName = info.name;
      bucket = `key:${info.name}`;
      limit = info.rpm ?? this.options.keyRpm;
    } else {
      bucket = `ip:${ip}`;
      limit = this.options.anonRpm;
    }
    if (limit <= 0 || this.isExempt(ip)) return { allowed: true, headers: {}, keyName };
    const r = await this.options.limiter.consume(bucket, limit);
    const resetS = Math.max(0, Math.ceil(r.resetMs / 1000));
    const headers: AccessHeaders = {
      'ratelimit-limit': String(r.limit),
      'ratelimit-remaining': String(r.remaining),
      'ratelimit-reset': String(resetS),
    };
    if (r.allowed) return { allowed: true, headers, keyName };
    countRateLimitRejection();
    const retry = Math.max(1, resetS);
    headers['retry-after'] = String(retry);
    headers['ratelimit-policy'] = `${r.limit};w=60`; // the policy behind the refusal: limit per 60-second window
    return {
      allowed: false,
      status: 429,
      headers,
      body: errorBody(429, rateLimitAdvice(r.limit, retry, keyName)),
    };
  }

  /**
   * For the push layer: call once per new Socket.IO / WebSocket connection (it counts as one request).
   * `ip` should come from clientIp(); `apiKey` from the handshake's x-api-key header (or auth payload).
   */
  checkConnection = (ip: string, apiKey: string | undefined): Promise<AccessDecision> => this.check(ip, apiKey);

  /** Applies the check to every route of `router` (the preflight OPTIONS answer is not counted). */
  install(router: Router): void {
    router.onRequest(async (req) => {
      if (isStaticAsset(req.path)) return; // see isStaticAsset: the page itself is never refused
      const d = await this.check(req.remoteAddress, req.headers['x-api-key']);
      if (d.allowed) {
        req.locals.rateLimitHeaders = d.headers;
        if (d.keyName) req.locals.apiKeyName = d.keyName;
        return;
      }
      return decisionResponse(d);
    });
    router.onResponse((req, res) => {
      const extra = req.locals.rateLimitHeaders as AccessHeaders | undefined;
      if (!extra) return; // not checked (preflight) or refused here: the 401/429 carries its own headers
      // A response replayed from a cache (src/api/cache.ts stores answers after this hook ran) may still carry the
      // headers of the request that produced it: always replace them with this request's.
      const headers: Record<string, string | number> = {};
      for (const k in res.headers) if (!STALE_HEADERS.has(k.toLowerCase())) headers[k] = res.headers[k];
      if (Object.keys(extra).length) {
        Object.assign(headers, extra);
        headers['access-control-expose-headers'] = RATE_LIMIT_EXPOSED_HEADERS.join(', ');
      }
      return { ...res, headers };
    });
  }
}

/**
 * The 429 message: the limit, and what the client can actually do about it, in the order a person would try it
 * (wait; use an API key, which `keys create` makes, on the embedded database only while the service is stopped as it
 * owns the data directory; or, for the operator, raise the limit).
 */
export function rateLimitAdvice(limit: number, retryS: number, keyName: string | undefined): string {
  if (keyName) {
    return (
      `Rate limit exceeded: ${limit} requests per minute for API key "${keyName}". Wait ${retryS} s (Retry-After) and ` +
      `try again, or ask the operator for a higher limit (stacks-pulse keys create --name <name> --rpm <n>, or RATE_LIMIT_KEY_RPM)`
    );
  }
  return (
    `Rate limit exceeded: ${limit} requests per minute for clients without an API key. Wait ${retryS} s (Retry-After) ` +
    'and try again; or send an API key in the x-api-key header (create one with `stacks-pulse keys create --name <name>`; ' +
    'with the embedded database, run it while the service is stopped); or, on your own service, raise ' +
    'RATE_LIMIT_ANON_RPM (0: no limit) or add your network to RATE_LIMIT_EXEMPT'
  );
}

/** The 401/429 reply for a refused decision. */
export function decisionResponse(d: Extract<AccessDecision, { allowed: false }>): HttpResponse {
  const headers: Record<string, string> = { ...d.headers };
  if (Object.keys(d.headers).length) headers['access-control-expose-headers'] = RATE_LIMIT_EXPOSED_HEADERS.join(', ');
  return httpError(d.status, d.body.message, undefined, headers);
}
