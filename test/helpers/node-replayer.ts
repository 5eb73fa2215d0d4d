// Replays event-observer messages the way a Stacks node delivers them: strictly one at a time, in order, and a
// message that did not get a 200 (any other status, a refused or reset connection, a timeout) is sent again after a
// short pause until it does — the node never skips a message.
import { settled } from './service.js';
import type { FixtureLine } from './fixtures.js';

export interface NodeReplayOptions {
  /** base URL of the observer; a function when it may change between attempts */
  observer: string | (() => string);
  /** pause between attempts of one message (ms) */
  retryDelayMs?: number;
  /** per-attempt timeout (ms) */
  attemptTimeoutMs?: number;
  /** give up (throw) when one message has not been accepted for this long (ms) */
  giveUpAfterMs?: number;
  /** called before each attempt with the message index and the attempt number (1-based) */
  beforeAttempt?: (index: number, attempt: number) => void | Promise<void>;
  /** called after message `index` got its 200 */
  afterAccepted?: (index: number) => void | Promise<void>;
}

export interface NodeReplayStats {
  messages: number;
  attempts: number;
  /** attempts that did not end in 200, by outcome ("500", "ECONNREFUSED", "timeout", ...) */
  failures: Record<string, number>;
}

function outcomeOf(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string }; code?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'error';
}

/** POSTs one message until it is accepted; returns the number of attempts. */
export async function deliverUntilAccepted(
  line: Pick<FixtureLine, 'path' | 'body'>,
  opts: NodeReplayOptions,
  stats: NodeReplayStats,
  index = 0,
): Promise<number> {
  const delay = opts.retryDelayMs ?? 100;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    await opts.beforeAttempt?.(index, attempt);
    stats.attempts++;
    let outcome: string;
    try {
      const base = typeof opts.observer === 'function' ? opts.observer() : opts.observer;
      const res = await fetch(base + line.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: line.body,
        signal: AbortSignal.timeout(opts.attemptTimeoutMs ?? 30_000),
      });
      await res.arrayBuffer();
      if (res.status === 200) return attempt;
      outcome = String(res.status);
    } catch (err) {
      outcome = outcomeOf(err);
    }
    stats.failures[outcome] = (stats.failures[outcome] ?? 0) + 1;
    if (Date.now() - started > (opts.giveUpAfterMs ?? 60_000)) {
      throw new Error(`message ${index} (${line.path}) not accepted after ${attempt} attempts; last outcome ${outcome}`);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Delivers every line in order, each until it is accepted, then waits until the service has applied them all. */
export async function nodeReplay(lines: Pick<FixtureLine, 'path' | 'body'>[], opts: NodeReplayOptions): Promise<NodeReplayStats> {
  const stats: NodeReplayStats = { messages: 0, attempts: 0, failures: {} };
  for (let i = 0; i < lines.length; i++) {
    await deliverUntilAccepted(lines[i], opts, stats, i);
    stats.messages++;
    await opts.afterAccepted?.(i);
  }
  await settled(opts.observer, opts.giveUpAfterMs ?? 60_000);
  return stats;
}
