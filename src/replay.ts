/** import-events / export-events: the TSV format of the recorded node streams (`id\ttimestamp\tpath\tjson-body`). */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { Sql } from './store/sql.js';
import type { ObserverPipeline } from './observer/pipeline.js';
import type { ProjectorOptions } from './projector/projector.js';
import type { DecodeResult } from './chain/decoded.js';
import { normalizeObserverPath } from './observer/schemas.js';
import { deferIndexes, deferredIndexCount, restoreDeferredIndexes, restoreLeftoverIndexes } from './store/bulk-indexes.js';
import { logEntriesAfter, nothingProjected } from './store/event-log.js';
import { writeSettings, type WriteSettings } from './store/maintenance.js';
import { PulseError } from './errors.js';

export interface ImportStats {
  messages: number;
  failed: number;
  /** until every message was applied (or the interruption) */
  ms: number;
  /** until the last message was appended to the log */
  loggedMs?: number;
  /** the last line of the file handled */
  lastLine: number;
  /** indexes dropped for the import and created again after it (src/store/bulk-indexes.ts), and the time that took */
  deferredIndexes?: number;
  indexMs?: number;
  /** the full ANALYZE at the end */
  analyzeMs?: number;
}

/** Below this file size an import into an empty database keeps its indexes: rebuilding them would not pay. */
export const DEFER_INDEXES_MIN_BYTES = 16 * 1024 * 1024;

/**
 * Whether an import defers the API-only indexes (`auto`: into an empty database — nothing applied yet — or one an
 * interrupted deferred import left, and a file of at least DEFER_INDEXES_MIN_BYTES).
 */
export async function shouldDeferIndexes(sql: Sql, mode: 'auto' | 'on' | 'off', fileBytes: number): Promise<boolean> {
  if (mode !== 'auto') return mode === 'on';
  if (await deferredIndexCount(sql)) return true;
  if (fileBytes < DEFER_INDEXES_MIN_BYTES) return false;
  return nothingProjected(sql);
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

export class ImportInterrupted extends PulseError {
  constructor(readonly stats: ImportStats) {
    super(`interrupted after ${stats.messages} messages`);
  }
}

/** Lines per append statement (and at most this many characters of bodies). */
const IMPORT_CHUNK_LINES = 500;
const IMPORT_CHUNK_CHARS = 16 * 1024 * 1024;

/** From this file size on, an import says which server settings would slow it down (see syncSettingsAdvice). */
export const SETTINGS_ADVICE_MIN_BYTES = 256 * 1024 * 1024;

/** What docs/operations.md recommends for a long sync: each setting's least value and the value to set. */
const megabytes = (v: number) => `${Math.round(v / 1024 ** 2)}MB`;
const SYNC_SETTINGS: { name: string; key: keyof WriteSettings; least: number; suggest: string; show: (v: number) => string }[] = [
  { name: 'shared_buffers', key: 'sharedBuffers', least: 1024 ** 3, suggest: '25% of RAM, at least 1GB', show: megabytes },
  { name: 'max_wal_size', key: 'maxWalSize', least: 16 * 1024 ** 3, suggest: '16GB or more', show: megabytes },
  { name: 'checkpoint_timeout', key: 'checkpointTimeout', least: 30 * 60, suggest: '30min or more', show: (v) => `${v}s` },
];

/**
 * The settings of a PostgreSQL server below what a long sync needs, each as "name = value (suggest: …)", for a file of
 * `fileBytes` (none under SETTINGS_ADVICE_MIN_BYTES). With small shared buffers and a checkpoint every few seconds,
 * the 100,000-block generated chain took 26% longer and wrote 2.7 times the WAL (docs/benchmarks.md).
 */
export function syncSettingsAdvice(s: WriteSettings, fileBytes: number): string[] {
  if (fileBytes < SETTINGS_ADVICE_MIN_BYTES) return [];
  return SYNC_SETTINGS.filter((x) => Number.isFinite(s[x.key]) && s[x.key] < x.least).map((x) => `${x.name} = ${x.show(s[x.key])} (suggest: ${x.suggest})`);
}

/**
 * How many deferred index builds, then how many tables' ANALYZEs, the end of an import runs at once, each on its own
 * connection (each uses a core of the server): this machine's cores, 2 to 8. On the 10,000-block generated chain with
 * 2 cores, 2 at once: the final ANALYZE 1.6-1.7 s where one took 3.1; the index builds 2.5-2.6 s where one at a time
 * took 2.8 (CREATE INDEX of a large table already uses parallel workers); 3 at once was slower than 2 (docs/benchmarks.md).
 */
export const FINISH_PARALLEL = Math.max(2, Math.min(8, availableParallelism()));

/**
 * The projector of an import's pipeline (src/main.ts). An import is all catch-up: a batch's derived tables follow on a
 * second connection (derivedBehindFrom). It ends with a whole ANALYZE (analyzeFully), so the ANALYZEs as the tables
 * grow cover the indexed columns only (growthStatistics).
 */
export const IMPORT_PROJECTOR: ProjectorOptions = { derivedBehindFrom: 2, growthStatistics: 'indexed' };

/**
 * Imports a TSV file in three overlapping stages: its lines are validated and decoded in chunks by the pipeline's
 * decoder (worker threads, DECODE_THREADS), a few chunks ahead of the chunk being appended to the log (one statement
 * per chunk, through the observer pipeline's checks), while the projector applies the log in large batches behind
 * them; the import ends when everything is applied. At most two decoded chunks per decode thread wait to be appended
 * and at most two appended chunks wait for the projector, so memory stays bounded. A line that is rejected stops the
 * import with its line number (the lines before it are logged and applied): the file must be a valid node stream.
 * Each line's timestamp is its arrival time (a mempool tx's receipt_time). Re-running an import appends nothing twice (duplicates are no-ops) and applies what is left. When
 * `opts.signal` is aborted the import stops after the chunk in flight (or while waiting for the projector) and throws
 * ImportInterrupted: what is logged stays in the log and is applied by the next run (or by the service).
 * `opts.server`: the database is a PostgreSQL server, whose settings a large import checks first (syncSettingsAdvice).
 */
export async function importEvents(
  file: string,
  pipeline: ObserverPipeline,
  log: Logger,
  opts: { tty?: boolean; signal?: AbortSignal; deferIndexes?: 'auto' | 'on' | 'off'; server?: boolean; finishParallel?: number } = {},
): Promise<ImportStats> {
  const finishParallel = opts.finishParallel ?? FINISH_PARALLEL;
  const size = (await stat(file)).size;
  // the API-only indexes go before anything is appended (nothing is projecting yet) and come back at the end
  const defer = await shouldDeferIndexes(pipeline.sql, opts.deferIndexes ?? 'off', size);
  if (defer) {
    const dropped = await deferIndexes(pipeline.sql);
    log.info({ dropped, deferred: await deferredIndexCount(pipeline.sql) }, 'import: API-only indexes deferred until the end');
  } else {
    await restoreLeftoverIndexes(pipeline.sql, log);
  }
  if (opts.server) {
    // advice only: a server that will not say goes on without it
    const settings = await writeSettings(pipeline.sql).catch(() => undefined);
    const advice = settings ? syncSettingsAdvice(settings, size) : [];
    if (advice.length) {
      log.warn(
        { settings: advice },
        'import: this PostgreSQL server is set up for small writes, so a long import takes longer and writes more WAL (see docs/operations.md, "PostgreSQL settings for a sync")',
      );
    }
  }
  await pipeline.start();
  const projector = pipeline.projector;
  await projector.settled(0); // the projector has read its place in the log
  const firstApplied = projector.appliedId;
  // created after the last await before the loop below: readline drops the lines it reads before iteration starts
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const started = Date.now();
  let bytes = 0;
  let messages = 0;
  let lastReport = started;
  let lineNo = 0;
  /** the last line of the last chunk appended to the log (lines read ahead may follow it) */
  let loggedLine = 0;
  type Line = { path: string; body: string; receivedAt: number; line: number };
  let chunk: Line[] = [];
  let chunkChars = 0;
  /** chunks read and being decoded (or decoded), oldest first: appended in this order */
  const ahead: { lines: Line[]; decoded: Promise<DecodeResult[]> }[] = [];
  // decoding in this thread gains nothing from reading ahead
  const maxAhead = pipeline.decoder.threads > 0 ? 2 * pipeline.decoder.threads : 0;
  /** the newest id logged before the previous chunk: the projector must reach it before the next append */
  const marks: number[] = [];
  const aborted = new Promise<void>((resolve) => {
    if (opts.signal?.aborted) resolve();
    opts.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  /** Ctrl-C: stop with what is logged so far */
  const stopIfAborted = () => {
    if (!opts.signal?.aborted) return;
    if (opts.tty) process.stderr.write('\n');
    throw new ImportInterrupted({ messages, failed: 0, ms: Date.now() - started, lastLine: loggedLine });
  };
  /** waits for the projector (up to `id`; without one, everything in the log), or for Ctrl-C */
  const applied = async (id?: number) => {
    await Promise.race([id === undefined ? projector.settledLog() : projector.settled(id), aborted]);
    stopIfAborted();
  };
  const report = (final = false) => {
    const now = Date.now();
    if (!final && now - lastReport < (opts.tty ? 200 : 5000)) return;
    lastReport = now;
    const applied = projector.appliedId - firstApplied;
    if (opts.tty) process.stderr.write(`\r${progressLine(bytes, size, (now - started) / 1000, messages)} · applied ${Math.max(0, applied)}   `);
    else log.info({ logged: messages, applied, progress: `${((bytes / size) * 100).toFixed(1)}%` }, 'import progress');
  };
  /** the chunk read so far goes to the decoder; the oldest chunks decoded are appended while more than maxAhead wait */
  const submit = async (final = false) => {
    if (chunk.length) {
      const lines = chunk;
      chunk = [];
      chunkChars = 0;
      const entries = lines.map((c) => ({ path: normalizeObserverPath(c.path), body: c.body, receivedAt: c.receivedAt }));
      ahead.push({ lines, decoded: pipeline.decodeEntries(entries) });
    }
    while (ahead.length > (final ? 0 : maxAhead)) await flush(ahead.shift()!);
  };
  const flush = async ({ lines, decoded }: { lines: Line[]; decoded: Promise<DecodeResult[]> }) => {
    if (!lines.length) return;
    const entries = lines.map((c) => ({ path: c.path, body: c.body, receivedAt: c.receivedAt }));
    let replies = await pipeline.handleMany(entries, decoded);
    // the database is unreachable (500: nothing was logged): retry as a node does, pause doubling to 5 s, for 2 minutes
    for (let pause = 250, since = Date.now(); replies.some((r) => r.status === 500) && Date.now() - since < 120_000; pause = Math.min(pause * 2, 5000)) {
      log.warn({ line: lines[0].line, retry_ms: pause, reason: replies.find((r) => r.status === 500)?.body.message }, 'import: the database did not take the chunk; retrying');
      await Promise.race([new Promise((r) => setTimeout(r, pause)), aborted]);
      stopIfAborted();
      replies = await pipeline.handleMany(entries, decoded);
    }
    const bad = replies.findIndex((r) => r.status !== 200);
    if (bad >= 0) {
      const c = lines[bad];
      await applied();
      throw new Error(`${file}:${c.line}: ${c.path} answered ${replies[bad].status}: ${JSON.stringify(replies[bad].body)}`);
    }
    messages += lines.length;
    loggedLine = lines[lines.length - 1].line;
    marks.push(projector.newestId);
    if (marks.length > 2) await applied(marks.shift());
    if (projector.lastFailure) log.warn({ failure: projector.lastFailure }, 'import: the projector is retrying a message');
  };
  try {
    for await (const line of rl) {
      lineNo++;
      bytes += Buffer.byteLength(line) + 1;
      if (!line.trim()) continue;
      const parts = line.split('\t');
      if (parts.length < 4) throw new Error(`${file}:${lineNo}: expected id<TAB>timestamp<TAB>path<TAB>body`);
      const body = parts.slice(3).join('\t');
      chunk.push({ path: parts[2], body, receivedAt: parseTimestamp(parts[1]) ?? Date.now(), line: lineNo });
      chunkChars += body.length;
      if (chunk.length >= IMPORT_CHUNK_LINES || chunkChars >= IMPORT_CHUNK_CHARS) {
        await submit();
        report();
        stopIfAborted();
      }
    }
    await submit(true);
  } finally {
    rl.close();
  }
  const loggedMs = Date.now() - started;
  /** the planner's statistics of the whole database as imported (the projector's own ANALYZEs ran while it grew) */
  const analyzeAtEnd = async () => {
    const t = Date.now();
    if (opts.tty) process.stderr.write('analyzing the tables…');
    await projector.analyzeFully(finishParallel);
    if (opts.tty) process.stderr.write('\n');
    return Date.now() - t;
  };
  await applied();
  const ms = Date.now() - started;
  report(true);
  if (opts.tty) process.stderr.write('\n');
  if (!defer) return { messages, failed: 0, ms, loggedMs, lastLine: lineNo, analyzeMs: await analyzeAtEnd() };
  // third stage: the deferred indexes, built over the whole tables
  const indexStart = Date.now();
  const built = await restoreDeferredIndexes(pipeline.sql, (done, total, name) => {
    if (opts.tty) process.stderr.write(`\rcreating deferred indexes: ${done}/${total} (${name})          `);
    else log.info({ done, total, index: name }, 'import: deferred index created');
  }, finishParallel);
  if (opts.tty) process.stderr.write('\n');
  const indexMs = Date.now() - indexStart;
  return { messages, failed: 0, ms, loggedMs, lastLine: lineNo, deferredIndexes: built.length, indexMs, analyzeMs: await analyzeAtEnd() };
}

/** Writes the raw event log, in arrival order, in the same TSV format. */
export async function exportEvents(sql: Sql, file: string): Promise<number> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  let n = 0;
  let lastId = 0;
  for (;;) {
    const rows = await logEntriesAfter(sql, lastId, 500);
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
