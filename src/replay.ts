/** import-events / export-events: the TSV format of the recorded node streams (`id\ttimestamp\tpath\tjson-body`). */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { Sql } from './store/connect.js';
import type { ObserverPipeline } from './observer/pipeline.js';

export interface ImportStats {
  messages: number;
  failed: number;
  ms: number;
  /** the last line of the file handled */
  lastLine: number;
}

export interface Progress {
  /** 0..1 */
  fraction: number;
  /** bytes of the file per second so far */
  bytesPerSecond: number;
  /** seconds left at that rate: remaining bytes / bytes per second (same unit); undefined while unknown */
  etaSeconds: number | undefined;
}

/** Progress through a file of `totalBytes` after `doneBytes` in `elapsedSeconds`. */
export function progress(doneBytes: number, totalBytes: number, elapsedSeconds: number): Progress {
  const fraction = totalBytes > 0 ? Math.min(1, doneBytes / totalBytes) : 1;
  const bytesPerSecond = elapsedSeconds > 0 ? doneBytes / elapsedSeconds : 0;
  const etaSeconds = bytesPerSecond > 0 ? Math.max(0, totalBytes - doneBytes) / bytesPerSecond : undefined;
  return { fraction, bytesPerSecond, etaSeconds };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(0)} kB`;
  return `${n.toFixed(0)} B`;
}

function formatDuration(s: number): string {
  const t = Math.round(s);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, '0')}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}m`;
}

/** `[#####.....] 42.0% 1.2 MB/s ETA 3m05s` — rate and ETA both from bytes of the file. */
export function progressLine(doneBytes: number, totalBytes: number, elapsedSeconds: number, messages?: number): string {
  const p = progress(doneBytes, totalBytes, elapsedSeconds);
  const width = 30;
  const filled = Math.round(p.fraction * width);
  const msgs = messages === undefined ? '' : ` ${messages} msgs`;
  return (
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(p.fraction * 100).toFixed(1)}%${msgs} ` +
    `${formatBytes(p.bytesPerSecond)}/s ETA ${p.etaSeconds === undefined ? '?' : formatDuration(p.etaSeconds)}`
  );
}

/**
 * The TSV timestamp column as ms since the epoch: export-events writes ISO 8601 (`2024-01-02T03:04:05.678Z`), the
 * recorded fixtures PostgreSQL's text form (`2022-10-05 16:20:34.244945+00`). undefined when it is neither.
 */
export function parseTimestamp(raw: string): number | undefined {
  let s = raw.trim();
  if (!s) return undefined;
  if (/^\d{4}-\d{2}-\d{2} /.test(s)) s = s.replace(' ', 'T');
  s = s.replace(/([+-]\d{2})$/, '$1:00');
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}

export class ImportInterrupted extends Error {
  constructor(readonly stats: ImportStats) {
    super(`interrupted after ${stats.messages} messages`);
    this.name = 'ImportInterrupted';
  }
}

/**
 * Replays a TSV file through the observer pipeline (the same ingest code as HTTP), one message at a time in order.
 * A line that is rejected stops the import with its line number: the file must be a valid node stream. Each line's
 * timestamp is its arrival time (a mempool tx's receipt_time). When `opts.signal` is aborted the import stops after
 * the message in flight (committed) and throws ImportInterrupted: a re-run skips what is stored (duplicates are
 * no-ops) and continues.
 */
export async function importEvents(
  file: string,
  pipeline: ObserverPipeline,
  log: Logger,
  opts: { tty?: boolean; signal?: AbortSignal } = {},
): Promise<ImportStats> {
  const size = (await stat(file)).size;
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const started = Date.now();
  let bytes = 0;
  let messages = 0;
  let lastReport = started;
  let lineNo = 0;
  try {
    for await (const line of rl) {
      lineNo++;
      bytes += Buffer.byteLength(line) + 1;
      if (!line.trim()) continue;
      const parts = line.split('\t');
      if (parts.length < 4) throw new Error(`${file}:${lineNo}: expected id<TAB>timestamp<TAB>path<TAB>body`);
      const path = parts[2];
      const body = parts.slice(3).join('\t');
      const reply = await pipeline.handle(path, body, { receivedAt: parseTimestamp(parts[1]) });
      if (reply.status !== 200) {
        throw new Error(`${file}:${lineNo}: ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
      }
      messages++;
      if (opts.signal?.aborted) {
        if (opts.tty) process.stderr.write('\n');
        throw new ImportInterrupted({ messages, failed: 0, ms: Date.now() - started, lastLine: lineNo });
      }
      const now = Date.now();
      if (now - lastReport >= (opts.tty ? 200 : 5000)) {
        lastReport = now;
        const rate = messages / ((now - started) / 1000);
        if (opts.tty) process.stderr.write(`\r${progressLine(bytes, size, (now - started) / 1000, messages)}   `);
        else log.info({ messages, rate: Math.round(rate), progress: `${((bytes / size) * 100).toFixed(1)}%` }, 'import progress');
      }
    }
  } finally {
    rl.close();
  }
  const ms = Date.now() - started;
  if (opts.tty) process.stderr.write(`\r${progressLine(size, size, ms / 1000, messages)}\n`);
  return { messages, failed: 0, ms, lastLine: lineNo };
}

/** Writes the raw event log, in arrival order, in the same TSV format. */
export async function exportEvents(sql: Sql, file: string): Promise<number> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  let n = 0;
  let lastId = 0;
  for (;;) {
    const rows = await sql<{ id: number; received_at: Date; path: string; body: string }[]>`
      SELECT id, received_at, path, body FROM event_log WHERE id > ${lastId} ORDER BY id LIMIT 500`;
    if (!rows.length) break;
    for (const r of rows) {
      const ok = out.write(`${r.id}\t${r.received_at.toISOString()}\t${r.path}\t${r.body}\n`);
      if (!ok) await new Promise<void>((res) => out.once('drain', () => res()));
      n++;
    }
    lastId = rows[rows.length - 1].id;
  }
  await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
  return n;
}
