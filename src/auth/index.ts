/** API keys and rate limits, built from the Config. */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sql } from '../store/sql.js';
import { AccessControl } from './access.js';
import { KeyStore } from './keys.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './rate-limit.js';
import { redisOutageLog } from '../redis-outage.js';
import { forgetRedisClient, watchRedisClient } from '../metrics.js';

export interface Access {
  access: AccessControl;
  close(): Promise<void>;
}

/**
 * The AccessControl for an api process: counters in Redis when REDIS_URL is set (one budget across processes),
 * in-process otherwise; keys from `sql` (the primary, so revocations are seen without replica lag).
 */
export async function createAccessControl(config: Config, sql: Sql, log: Logger): Promise<Access> {
  let limiter: RateLimiter;
  let watched: Redis | undefined;
  if (config.redisUrl) {
    const redis = new Redis(config.redisUrl, {
      // Fail fast (the limiter then counts in-process) rather than queueing requests behind a dead Redis.
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectionName: 'stacks-pulse-ratelimit',
    });
    redisOutageLog(log).watch(redis); // one line per outage for the whole process
    watchRedisClient('rate-limit', (watched = redis)); // its state in the metrics (stacks_pulse_redis_up)
    // Wait (briefly) for the connection so the first requests already share the budget.
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 3000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!ready) log.warn('rate limiter: Redis not reachable yet, counting in-process until it is');
    limiter = new RedisRateLimiter(redis, { log, ownsClient: true });
  } else {
    limiter = new MemoryRateLimiter();
  }
  const access = new AccessControl({
    anonRpm: config.rateLimitAnonRpm,
    keyRpm: config.rateLimitKeyRpm,
    trustProxy: config.trustProxy,
    limiter,
    keys: new KeyStore(sql),
    log,
    exempt: config.rateLimitExempt,
  });
  return {
    access,
    close: () => {
      if (watched) forgetRedisClient(watched);
      return limiter.close();
    },
  };
}
