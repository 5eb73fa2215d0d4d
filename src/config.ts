// The only module that reads process.env. One zod schema turns the environment into a typed Config;
// every bad value is reported as `<VARIABLE>: <what was expected>, got "<value>"`.
import { isIP } from 'node:net';
import { z } from 'zod';
import { PulseError } from './errors.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type ApiMode = 'all' | 'api' | 'ingest';
export type Network = 'mainnet' | 'testnet';

export const CHAIN_ID_MAINNET = 0x00000001;
export const CHAIN_ID_TESTNET = 0x80000000;

export interface Config {
  apiHost: string;
  apiPort: number;
  observerHost: string;
  observerPort: number;
  /** Unset: embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /** Optional read replica; unset: reads go to `databaseUrl`. */
  databaseReadUrl: string | undefined;
  dataDir: string;
  /** Unset: fan-out stays in-process. */
  redisUrl: string | undefined;
  /**
   * 0x00000001 (mainnet) or 0x80000000 (testnet). Unset: the database keeps the network of the first transaction
   * it stores (src/chain/network.ts).
   */
  chainId: number | undefined;
  network: Network | undefined;
  apiMode: ApiMode;
  logLevel: LogLevel;
  /** auto: JSON lines unless stdout is a terminal; json; text (src/log-format.ts) */
  logFormat: 'auto' | 'json' | 'text';
  /** Bytes. */
  observerBodyLimit: number;
  /** Empty when unset. */
  stacksNodeRpcUrls: string[];
  /** Bytes. */
  proxyBodyLimit: number;
  rateLimitAnonRpm: number;
  rateLimitKeyRpm: number;
  /** Client networks (CIDR) never rate limited; default loopback (LOOPBACK_NETWORKS), empty with `none`. */
  rateLimitExempt: string[];
  /** false: use the socket address; true: trust every proxy (leftmost X-Forwarded-For); n: trust n hops. */
  trustProxy: boolean | number;
  socketPingIntervalMs: number;
  socketPingTimeoutMs: number;
  /** Prefix of every Redis pub/sub channel of the push (Socket.IO adapter and the push channel). */
  redisKeyPrefix: string;
  /** Which @socket.io/redis-adapter the api processes use with REDIS_URL. */
  pushRedisAdapter: 'classic' | 'sharded';
  /** Bytes of unsent push data after which a client is disconnected as a slow consumer. */
  pushMaxBuffer: number;
  /**
   * Which rooms get messages built and stored: `subscribed` (rooms a client follows now, or followed within the
   * resume window) or `all` (every room, whether anyone listens or not).
   */
  pushRooms: 'subscribed' | 'all';
  /** How long a room keeps getting messages after its last subscriber left, so a client can resume by cursor. */
  pushResumeWindowMs: number;
  /** An api process whose read replica is further behind than this is not ready and answers REST reads 503. */
  replicaMaxLagMs: number;
  /** How often the replica's replay position is polled while push messages wait for it (milliseconds). */
  replicaPollMs: number;
  /** Push messages an api process holds at most while its replica has not replayed them; past it the oldest are dropped (clients resume by cursor). */
  replicaMaxHeldMessages: number;
  /** a starting api process waits this long for its push subscription and its replica (PushServer.startingCursor) */
  pushStartWaitMs: number;
  /** Webhooks (docs/hooks.md): hooks per API key, payload bytes, request timeout, receiving hosts, back-off, parallelism. */
  hooksMaxPerKey: number;
  hooksMaxPayloadBytes: number;
  hooksTimeoutMs: number;
  /** Empty: any host may receive deliveries. */
  hooksAllowedHosts: string[];
  hooksRetryMinMs: number;
  hooksRetryMaxMs: number;
  hooksConcurrency: number;
  /**
   * Worker threads that parse, validate and decode node messages before they are logged (0: the main thread decodes);
   * undefined: the default, one per core but one, 1 to 4 (src/observer/decode-pool.ts).
   */
  decodeThreads: number | undefined;
  /** Port of the Prometheus endpoint (GET /metrics); unset: no metrics. */
  metricsPort: number | undefined;
  metricsHost: string;
}

export class ConfigError extends PulseError {
  readonly issues: { variable: string; message: string }[];
  constructor(issues: { variable: string; message: string }[]) {
    super(issues.map((i) => `${i.variable}: ${i.message}`).join('; '));
    this.issues = issues;
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const API_MODES: readonly ApiMode[] = ['all', 'api', 'ingest'];
const MB = 1024 * 1024;

type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string };
const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (expected: string): Parsed<never> => ({ ok: false, expected });

/**
 * One environment variable: empty string or unset → default (or undefined when there is none);
 * otherwise `parse` decides, and its `expected` text becomes the error message.
 */
function envVar<T>(parse: (raw: string) => Parsed<T>, fallback: T): z.ZodType<T, string | undefined>;
function envVar<T>(parse: (raw: string) => Parsed<T>): z.ZodType<T | undefined, string | undefined>;
function envVar<T>(parse: (raw: string) => Parsed<T>, fallback?: T) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return fallback;
      const r = parse(raw.trim());
      if (r.ok) return r.value;
      ctx.addIssue({ code: 'custom', message: `expected ${r.expected}, got ${JSON.stringify(raw)}` });
      return z.NEVER;
    });
}

function integer(min: number, max: number, expected = `integer ${min}-${max}`) {
  return (raw: string): Parsed<number> => {
    if (!/^\d+$/.test(raw)) return bad(expected);
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= min && n <= max ? ok(n) : bad(expected);
  };
}

const port = integer(0, 65535);
const nonNegative = integer(0, Number.MAX_SAFE_INTEGER, 'non-negative integer');
const positiveMs = integer(1, 2_147_483_647, 'positive integer (milliseconds)');

const text = (raw: string): Parsed<string> => ok(raw);

const hostname = (raw: string): Parsed<string> =>
  /^[A-Za-z0-9.:\-_[\]%]+$/.test(raw) ? ok(raw) : bad('host name or IP address');

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: MB, mb: MB, g: 1024 * MB, gb: 1024 * MB };

/** Plain byte count or a size such as 500mb / 2MB / 64 KB / 1.5gb (1 kb = 1024 bytes). */
export function parseByteSize(raw: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  if (!m) return undefined;
  const unit = SIZE_UNITS[m[2].toLowerCase()];
  if (unit === undefined) return undefined;
  const n = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

const byteSize = (raw: string): Parsed<number> => {
  const n = parseByteSize(raw);
  return n === undefined ? bad('positive size in bytes (e.g. 1048576, 500mb, 2MB)') : ok(n);
};

function urlWithProtocols(protocols: string[], what: string) {
  return (raw: string): Parsed<string> => {
    try {
      const u = new URL(raw);
      return protocols.includes(u.protocol) ? ok(raw) : bad(what);
    } catch {
      return bad(what);
    }
  };
}

const postgresUrl = urlWithProtocols(['postgres:', 'postgresql:'], 'postgres:// or postgresql:// URL');
const redisUrl = urlWithProtocols(['redis:', 'rediss:'], 'redis:// or rediss:// URL');
const httpUrl = urlWithProtocols(['http:', 'https:'], 'comma-separated list of http(s) URLs');

const urlList = (raw: string): Parsed<string[]> => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    const r = httpUrl(item);
    if (!r.ok) return r;
  }
  return ok(items.map((s) => s.replace(/\/+$/, '')));
};

const chainId = (raw: string): Parsed<number> => {
  const s = raw.toLowerCase();
  if (s === 'mainnet') return ok(CHAIN_ID_MAINNET);
  if (s === 'testnet') return ok(CHAIN_ID_TESTNET);
  let n: number | undefined;
  if (/^0x[0-9a-f]{1,8}$/.test(s)) n = parseInt(s.slice(2), 16);
  else if (/^\d+$/.test(s)) n = Number(s);
  return n === CHAIN_ID_MAINNET || n === CHAIN_ID_TESTNET
    ? ok(n)
    : bad('0x00000001, 0x80000000, mainnet or testnet');
};

/** Comma-separated IPv4/IPv6 networks (`127.0.0.1/8,10.0.0.0/8,::1/128`) or single addresses; `none`: an empty list. */
const cidrList = (raw: string): Parsed<string[]> => {
  if (raw.trim().toLowerCase() === 'none') return ok([]);
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    const [addr, prefix, extra] = item.split('/');
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    if (!family || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))) {
      return bad('comma-separated IP networks such as 127.0.0.1/8,10.0.0.0/8,::1/128, or none');
    }
  }
  return ok(items);
};

function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string): Parsed<T> => {
    const s = raw.toLowerCase() as T;
    return values.includes(s) ? ok(s) : bad(`one of ${values.join(', ')}`);
  };
}

const trustProxy = (raw: string): Parsed<boolean | number> => {
  const s = raw.toLowerCase();
  if (s === 'true' || s === 'yes') return ok(true);
  if (s === 'false' || s === 'no') return ok(false);
  if (/^\d+$/.test(s) && Number(s) <= 1000) return ok(Number(s) === 0 ? false : Number(s));
  return bad('true, false or a number of proxy hops');
};

/** RATE_LIMIT_EXEMPT's default: IPv4 and IPv6 loopback. */
export const LOOPBACK_NETWORKS = ['127.0.0.0/8', '::1/128'];

const envSchema = z.object({
  API_HOST: envVar(hostname, '0.0.0.0'),
  API_PORT: envVar(port, 3999),
  OBSERVER_HOST: envVar(hostname, '127.0.0.1'),
  OBSERVER_PORT: envVar(port, 3700),
  DATABASE_URL: envVar(postgresUrl),
  DATABASE_READ_URL: envVar(postgresUrl),
  DATA_DIR: envVar(text, './data'),
  REDIS_URL: envVar(redisUrl),
  STACKS_CHAIN_ID: envVar(chainId),
  API_MODE: envVar(oneOf(API_MODES), 'all'),
  LOG_LEVEL: envVar(oneOf(LOG_LEVELS), 'info'),
  LOG_FORMAT: envVar(oneOf(['auto', 'json', 'text'] as const), 'auto'),
  OBSERVER_BODY_LIMIT: envVar(byteSize, 500 * MB),
  STACKS_NODE_RPC_URLS: envVar(urlList, []),
  PROXY_BODY_LIMIT: envVar(byteSize, 2 * MB),
  RATE_LIMIT_ANON_RPM: envVar(nonNegative, 50),
  RATE_LIMIT_KEY_RPM: envVar(nonNegative, 500),
  // loopback clients (a person trying the service on their own machine, its dashboard and docs) are never limited;
  // `none` for a public deployment, where a reverse proxy on the same host would otherwise make everyone loopback
  RATE_LIMIT_EXEMPT: envVar(cidrList, LOOPBACK_NETWORKS),
  TRUST_PROXY: envVar(trustProxy, false),
  SOCKET_PING_INTERVAL_MS: envVar(positiveMs, 5000),
  SOCKET_PING_TIMEOUT_MS: envVar(positiveMs, 5000),
  REDIS_KEY_PREFIX: envVar((raw: string): Parsed<string> => (/^[A-Za-z0-9:._-]{1,100}$/.test(raw) ? ok(raw) : bad('1-100 characters of A-Z a-z 0-9 : . _ -')), 'stacks-pulse'),
  PUSH_REDIS_ADAPTER: envVar(oneOf(['classic', 'sharded'] as const), 'classic'),
  PUSH_MAX_BUFFER: envVar(byteSize, 8 * MB),
  PUSH_ROOMS: envVar(oneOf(['subscribed', 'all'] as const), 'subscribed'),
  PUSH_RESUME_WINDOW_S: envVar(integer(0, 7 * 24 * 3600), 900),
  REPLICA_MAX_LAG_MS: envVar(positiveMs, 10_000),
  REPLICA_POLL_MS: envVar(integer(1, 10_000, 'integer 1-10000 (milliseconds)'), 10),
  REPLICA_MAX_HELD_MESSAGES: envVar(integer(1, 10_000_000), 10_000),
  PUSH_START_WAIT_MS: envVar(integer(0, 600_000, 'integer 0-600000 (milliseconds)'), 10_000),
  HOOKS_MAX_PER_KEY: envVar(integer(0, 1_000_000), 100),
  HOOKS_MAX_PAYLOAD_BYTES: envVar(byteSize, 4 * MB),
  HOOKS_TIMEOUT_MS: envVar(positiveMs, 10_000),
  HOOKS_ALLOWED_HOSTS: envVar((raw: string): Parsed<string[]> => {
    const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
    return items.every((h) => /^(\*\.)?[A-Za-z0-9.:\-_[\]]+$/.test(h)) ? ok(items) : bad('comma-separated host names, addresses or *.domain patterns');
  }, []),
  HOOKS_RETRY_MIN_MS: envVar(positiveMs, 1000),
  HOOKS_RETRY_MAX_MS: envVar(positiveMs, 600_000),
  HOOKS_CONCURRENCY: envVar(integer(1, 10_000), 32),
  DECODE_THREADS: envVar(integer(0, 64)),
  METRICS_PORT: envVar(port),
  METRICS_HOST: envVar(hostname, '127.0.0.1'),
});

/** Names of the environment variables this service reads. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as (keyof typeof envSchema.shape)[];

/** Reads the configuration from `env` (default: process.env). Throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const input: Record<string, string | undefined> = {};
  for (const name of CONFIG_VARIABLES) input[name] = env[name];
  const r = envSchema.safeParse(input);
  if (!r.success) {
    throw new ConfigError(
      r.error.issues.map((i) => ({ variable: String(i.path[0] ?? 'environment'), message: i.message })),
    );
  }
  const e = r.data;
  return {
    apiHost: e.API_HOST,
    apiPort: e.API_PORT,
    observerHost: e.OBSERVER_HOST,
    observerPort: e.OBSERVER_PORT,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    dataDir: e.DATA_DIR,
    redisUrl: e.REDIS_URL,
    chainId: e.STACKS_CHAIN_ID,
    network: e.STACKS_CHAIN_ID === undefined ? undefined : e.STACKS_CHAIN_ID === CHAIN_ID_MAINNET ? 'mainnet' : 'testnet',
    apiMode: e.API_MODE,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    observerBodyLimit: e.OBSERVER_BODY_LIMIT,
    stacksNodeRpcUrls: e.STACKS_NODE_RPC_URLS,
    proxyBodyLimit: e.PROXY_BODY_LIMIT,
    rateLimitAnonRpm: e.RATE_LIMIT_ANON_RPM,
    rateLimitKeyRpm: e.RATE_LIMIT_KEY_RPM,
    rateLimitExempt: e.RATE_LIMIT_EXEMPT,
    trustProxy: e.TRUST_PROXY,
    socketPingIntervalMs: e.SOCKET_PING_INTERVAL_MS,
    socketPingTimeoutMs: e.SOCKET_PING_TIMEOUT_MS,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    pushRedisAdapter: e.PUSH_REDIS_ADAPTER,
    pushMaxBuffer: e.PUSH_MAX_BUFFER,
    pushRooms: e.PUSH_ROOMS,
    pushResumeWindowMs: e.PUSH_RESUME_WINDOW_S * 1000,
    replicaMaxLagMs: e.REPLICA_MAX_LAG_MS,
    replicaPollMs: e.REPLICA_POLL_MS,
    replicaMaxHeldMessages: e.REPLICA_MAX_HELD_MESSAGES,
    pushStartWaitMs: e.PUSH_START_WAIT_MS,
    hooksMaxPerKey: e.HOOKS_MAX_PER_KEY,
    hooksMaxPayloadBytes: e.HOOKS_MAX_PAYLOAD_BYTES,
    hooksTimeoutMs: e.HOOKS_TIMEOUT_MS,
    hooksAllowedHosts: e.HOOKS_ALLOWED_HOSTS,
    hooksRetryMinMs: e.HOOKS_RETRY_MIN_MS,
    hooksRetryMaxMs: e.HOOKS_RETRY_MAX_MS,
    hooksConcurrency: e.HOOKS_CONCURRENCY,
    decodeThreads: e.DECODE_THREADS,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
  };
}
