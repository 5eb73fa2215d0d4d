/**
 * One log line per Redis outage instead of one per failed reconnection attempt (ioredis retries several times a
 * second, on every client): the first error is logged at once, then at most one reminder every `intervalMs` with the
 * number of errors since, and one line when Redis is reachable again. One instance per process, shared by its
 * clients (push, rate limits).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export class RedisOutageLog {
  private down = false;
  private since = 0;
  private lastLog = 0;
  private errors = 0;
  private totalErrors = 0;
  private readonly broken = new Set<object>();

  constructor(
    private readonly log: Logger,
    private readonly opts: { intervalMs?: number; now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** A client reported an error (connection refused, reset, …). */
  error(err: unknown, client: object = this): void {
    const message = err instanceof Error ? err.message : String(err);
    this.broken.add(client);
    this.errors++;
    this.totalErrors++;
    const t = this.now();
    if (!this.down) {
      this.down = true;
      this.since = t;
      this.lastLog = t;
      this.errors = 0;
      this.log.warn({ err: message }, 'Redis unreachable: retrying in the background (logged again every 30 s while it lasts)');
      return;
    }
    if (t - this.lastLog >= (this.opts.intervalMs ?? 30_000)) {
      this.log.warn({ err: message, errors: this.errors, down_s: Math.round((t - this.since) / 1000) }, 'Redis still unreachable');
      this.lastLog = t;
      this.errors = 0;
    }
  }

  /** A client is connected again; the outage ends when every client that failed is back. */
  ready(client: object = this): void {
    this.broken.delete(client);
    if (!this.down || this.broken.size) return;
    const t = this.now();
    this.log.info({ down_s: Math.round((t - this.since) / 1000), errors: this.totalErrors }, 'Redis reachable again');
    this.down = false;
    this.totalErrors = 0;
    this.errors = 0;
  }

  /** Routes a client's 'error' and 'ready' events here. */
  watch(client: Redis): Redis {
    client.on('error', (err) => this.error(err, client));
    client.on('ready', () => this.ready(client));
    return client;
  }

  get isDown(): boolean {
    return this.down;
  }
}

/** The process's outage log per logger (push and rate limits share it). */
const perLogger = new WeakMap<Logger, RedisOutageLog>();
export function redisOutageLog(log: Logger): RedisOutageLog {
  let o = perLogger.get(log);
  if (!o) perLogger.set(log, (o = new RedisOutageLog(log)));
  return o;
}
