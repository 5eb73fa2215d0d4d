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
}

function bar(done: number, total: number, rate: number): string {
  const width = 30;
  const frac = total ? Math.min(1, done / total) : 0;
  const filled = Math.round(frac * width);
  const eta = rate > 0 && total ? Math.max(0, (total - done) / rate) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(1)}% ${rate.toFixed(0)} msg/s ETA ${eta.toFixed(0)}s`;
}

/**
 * Replays a TSV file through the observer pipeline (the same ingest code as HTTP), one message at a time in order.
 * A line that is rejected stops the import with its line number: the file must be a valid node stream.
 */
export async function importEvents(file: string, pipeline: ObserverPipeline, log: Logger, opts: { tty?: boolean } = {}): Promise<ImportStats> {
  const size = (await stat(file)).size;
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const started = Date.now();
  let bytes = 0;
  let messages = 0;
  let lastReport = started;
  let lineNo = 0;
  for await (const line of rl) {
    lineNo++;
    bytes += Buffer.byteLength(line) + 1;
    if (!line.trim()) continue;
    const parts = line.split('\t');
    if (parts.length < 4) throw new Error(`${file}:${lineNo}: expected id<TAB>timestamp<TAB>path<TAB>body`);
    const path = parts[2];
    const body = parts.slice(3).join('\t');
    const reply = await pipeline.handle(path, body);
    if (reply.status !== 200) {
      throw new Error(`${file}:${lineNo}: ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    }
    messages++;
    const now = Date.now();
    if (now - lastReport >= (opts.tty ? 200 : 5000)) {
      lastReport = now;
      const rate = messages / ((now - started) / 1000);
      const byteRate = bytes / ((now - started) / 1000);
      if (opts.tty) process.stderr.write(`\r${bar(bytes, size, byteRate / Math.max(1, bytes / messages))}   `);
      else log.info({ messages, rate: Math.round(rate), progress: `${((bytes / size) * 100).toFixed(1)}%` }, 'import progress');
    }
  }
  const ms = Date.now() - started;
  if (opts.tty) process.stderr.write(`\r${bar(1, 1, messages / Math.max(ms / 1000, 0.001))}\n`);
  return { messages, failed: 0, ms };
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
