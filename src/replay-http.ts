/**
 * `stacks-pulse replay --file F.tsv --url http://127.0.0.1:3700`: sends a recorded node stream (the TSV format of
 * import-events) to a running observer over HTTP exactly as a Stacks node does: one message at a time, in order, each
 * POSTed until it is answered 200 (a 5xx answer, a refused or reset connection or a timeout is retried after a pause
 * that doubles up to `maxDelayMs`). A 4xx answer cannot change by retrying (the URL is not the observer, or the message
 * is refused for good): it stops the replay at once with an ObserverRejected naming the likely cause.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { progressLine } from './replay.js';
import { ObserverRejected, bodyDetail, explainRejection, fetchFailureCode, retryableStatus, sleep } from './observer-client.js';

export interface ReplayHttpOptions {
  file: string;
  /** observer base URL, e.g. http://127.0.0.1:3700 */
  url: string;
  /** first retry pause (ms), doubled each attempt up to maxDelayMs */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** per-attempt timeout (ms) */
  attemptTimeoutMs?: number;
  /** stop (throw) when one message has not been accepted for this long; undefined: retry forever, as a node does */
  giveUpAfterMs?: number;
  /** progress: a bar on a TTY (`tty`), else nothing; `note` receives one line per failed attempt */
  tty?: boolean;
  write?: (s: string) => void;
  /** set to stop after the message in flight */
  signal?: AbortSignal;
}

export interface ReplayHttpStats {
  messages: number;
  /** attempts that did not end in 200 */
  retries: number;
  /** failed attempts by outcome ("500", "ECONNREFUSED", "timeout", ...) */
  failures: Record<string, number>;
  ms: number;
  /** false when stopped by the signal before the end of the file */
  complete: boolean;
}

export async function replayToUrl(opts: ReplayHttpOptions): Promise<ReplayHttpStats> {
  const base = opts.url.replace(/\/+$/, '');
  const write = opts.write ?? ((s: string) => process.stderr.write(s));
  const size = (await stat(opts.file)).size;
  const rl = createInterface({ input: createReadStream(opts.file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const stats: ReplayHttpStats = { messages: 0, retries: 0, failures: {}, ms: 0, complete: false };
  const started = Date.now();
  let bytes = 0;
  let lineNo = 0;
  let lastDraw = 0;
  const draw = (force = false) => {
    if (!opts.tty) return;
    const now = Date.now();
    if (!force && now - lastDraw < 200) return;
    lastDraw = now;
    write(`\r${progressLine(bytes, size, (now - started) / 1000, stats.messages)}   `);
  };
  try {
    for await (const line of rl) {
      lineNo++;
      bytes += Buffer.byteLength(line) + 1;
      if (!line.trim()) continue;
      const a = line.indexOf('\t');
      const b = line.indexOf('\t', a + 1);
      const c = line.indexOf('\t', b + 1);
      if (a < 0 || b < 0 || c < 0) throw new Error(`${opts.file}:${lineNo}: expected id<TAB>timestamp<TAB>path<TAB>body`);
      const path = line.slice(b + 1, c);
      const body = line.slice(c + 1);
      let delay = opts.initialDelayMs ?? 250;
      const firstAttempt = Date.now();
      for (let attempt = 1; ; attempt++) {
        let outcome: string;
        let detail = '';
        try {
          const res = await fetch(base + path, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(opts.attemptTimeoutMs ?? 60_000),
          });
          const text = await res.text();
          if (res.status === 200) break;
          outcome = String(res.status);
          detail = bodyDetail(text);
          if (!retryableStatus(res.status)) {
            if (opts.tty) write('\n');
            throw new ObserverRejected(`${opts.file}:${lineNo}: ${await explainRejection(base, path, res.status, detail)}`);
          }
        } catch (err) {
          if (err instanceof ObserverRejected) throw err;
          outcome = fetchFailureCode(err);
        }
        stats.retries++;
        stats.failures[outcome] = (stats.failures[outcome] ?? 0) + 1;
        if (opts.tty) write('\n');
        write(`line ${lineNo} (${path}): ${outcome}${detail ? `: ${detail}` : ''}; retrying in ${(delay / 1000).toFixed(1)} s (attempt ${attempt})\n`);
        if (opts.giveUpAfterMs !== undefined && Date.now() - firstAttempt >= opts.giveUpAfterMs) {
          throw new Error(`${opts.file}:${lineNo}: ${path} not accepted after ${attempt} attempts (last: ${outcome}${detail ? `: ${detail}` : ''})`);
        }
        if (opts.signal?.aborted) return stats;
        await sleep(delay, opts.signal);
        if (opts.signal?.aborted) return stats;
        delay = Math.min(delay * 2, opts.maxDelayMs ?? 10_000);
      }
      stats.messages++;
      draw();
      if (opts.signal?.aborted) return stats;
    }
    stats.complete = true;
    draw(true);
    return stats;
  } finally {
    rl.close();
    stats.ms = Date.now() - started;
    if (opts.tty) write('\n');
  }
}

/** The closing line of the replay command. */
export function replaySummary(stats: ReplayHttpStats, url: string): string {
  const failures = Object.entries(stats.failures)
    .map(([k, v]) => `${v}× ${k}`)
    .join(', ');
  return (
    `${stats.complete ? 'replayed' : 'stopped after'} ${stats.messages} messages to ${url} in ${(stats.ms / 1000).toFixed(1)} s` +
    (stats.retries ? `; ${stats.retries} attempts retried (${failures})` : '; no retries')
  );
}
