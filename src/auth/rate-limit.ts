// Sliding-window-log rate limiting: a request is allowed when fewer than `limit` requests were allowed in the
// `windowMs` before it. Unlike a fixed window (or a token bucket with a full-window burst), no 60-second span ever
// holds more than `limit` allowed requests, so nobody can burst to twice the limit at a window boundary.
// Refused requests are not logged, so a client that keeps hammering still gets back in as its old requests age out.
//
// Two stores: in-process (one api process) and Redis (a sorted set per bucket, updated by one atomic Lua script,
// with Redis's own clock so several api processes share one budget even when their clocks drift).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export const DEFAULT_WINDOW_MS = 60_000;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests still allowed right now (after this one when it was allowed). */
  remaining: number;
  /** Milliseconds until the oldest request in the window ages out, i.e. until one more request is allowed. */
  resetMs: number;
}

export interface RateLimiter {
  /** Counts one request against `bucket` (e.g. `ip:1.2.3.4`, `key:NAME`) when it is within `limit`. */
  consume(bucket: string, limit: number): Promise<RateLimitResult>;
  close(): Promise<void>;
}

/** In-process sliding window log. */
export class MemoryRateLimiter implements RateLimiter {
  readonly windowMs: number;
  private readonly buckets = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(opts: { windowMs?: number; now?: () => number } = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    this.now = opts.now ?? Date.now;
    // Drop idle buckets so one-off clients do not accumulate.
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, this.windowMs));
    this.sweeper.unref();
  }

  consume(bucket: string, limit: number): Promise<RateLimitResult> {
    return Promise.resolve(this.consumeSync(bucket, limit));
  }

  consumeSync(bucket: string, limit: number): RateLimitResult {
    const now = this.now();
    const cutoff = now - this.windowMs;
    let log = this.buckets.get(bucket);
    if (!log) this.buckets.set(bucket, (log = []));
    let drop = 0;
    while (drop < log.length && log[drop] <= cutoff) drop++;
    if (drop) log.splice(0, drop);
    if (log.length < limit) {
      log.push(now);
      return { allowed: true, limit, remaining: limit - log.length, resetMs: log[0] + this.windowMs - now };
    }
    const oldest = log[log.length - limit];
    return { allowed: false, limit, remaining: 0, resetMs: Math.max(1, oldest + this.windowMs - now) };
  }

  private sweep(): void {
    const cutoff = this.now() - this.windowMs;
    for (const [k, log] of this.buckets) if (log.length === 0 || log[log.length - 1] <= cutoff) this.buckets.delete(k);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.buckets.clear();
  }
}

// KEYS[1] bucket; ARGV: window ms, limit, unique member. Returns {allowed 0/1, count after, oldest ms, now ms}.
// TIME makes the script non-deterministic, which Redis ≥ 5 accepts (effects replication, the default from 5).
const SLIDING_WINDOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = now
local idx = 0
if allowed == 0 then idx = count - limit end
local first = redis.call('ZRANGE', KEYS[1], idx, idx, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
return {allowed, count, oldest, now}
`;

type RedisWithScript = Redis & {
  spSlidingWindow(key: string, windowMs: number, limit: number, member: string): Promise<[number, number, number, number]>;
};

/**
 * Redis sliding window log shared by every process using the same Redis. When Redis fails (down, slow) the
 * limiter falls back to counting in-process and logs a warning (at most every 30 s): limits stay approximately
 * enforced per process instead of every request failing.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly windowMs: number;
  private readonly redis: RedisWithScript;
  private readonly prefix: string;
  private readonly fallback: MemoryRateLimiter;
  private readonly log: Logger | undefined;
  private readonly ownsClient: boolean;
  private readonly idPrefix = randomBytes(6).toString('hex');
  private seq = 0;
  private lastWarn = 0;

  constructor(redis: Redis, opts: { windowMs?: number; prefix?: string; log?: Logger; ownsClient?: boolean } = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    this.prefix = opts.prefix ?? 'stacks-pulse:rl:';
    this.log = opts.log;
    this.ownsClient = opts.ownsClient ?? false;
    this.fallback = new MemoryRateLimiter({ windowMs: this.windowMs });
    redis.defineCommand('spSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
    this.redis = redis as RedisWithScript;
  }

  async consume(bucket: string, limit: number): Promise<RateLimitResult> {
    const member = `${this.idPrefix}:${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}`;
    // Not connected (starting, or reconnecting after an outage): do not make the request wait for a timeout.
    if (this.redis.status !== 'ready') return this.fallbackConsume(bucket, limit, `Redis ${this.redis.status}`);
    try {
      const [allowed, count, oldest, now] = await this.redis.spSlidingWindow(this.prefix + bucket, this.windowMs, limit, member);
      const resetMs = Math.max(allowed ? 0 : 1, Number(oldest) + this.windowMs - Number(now));
      return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - Number(count)), resetMs };
    } catch (err) {
      return this.fallbackConsume(bucket, limit, (err as Error).message);
    }
  }

  private fallbackConsume(bucket: string, limit: number, why: string): RateLimitResult {
    const t = Date.now();
    if (t - this.lastWarn > 30_000) {
      this.lastWarn = t;
      this.log?.warn({ err: why }, 'rate limiter: Redis unavailable, counting in-process');
    }
    return this.fallback.consumeSync(bucket, limit);
  }

  async close(): Promise<void> {
    await this.fallback.close();
    if (this.ownsClient) {
      try {
        await this.redis.quit();
      } catch {
        this.redis.disconnect();
      }
    }
  }
}
