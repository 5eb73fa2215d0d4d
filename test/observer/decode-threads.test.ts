// import-events decodes in worker threads (DECODE_THREADS, src/observer/decode-pool.ts): the built CLI must give the
// same tables, table by table, as decoding in the main thread, and report a rejected line the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, type Build } from '../helpers/build.js';
import { createTestDatabase } from '../helpers/db.js';
import { dumpEverything, rankSeq, rankSurrogateIds } from '../helpers/dump.js';
import { FIXTURES_DIR } from '../helpers/fixtures.js';
import { generateToFile } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';
import { appendToLog } from '../../src/store/event-log.js';
import { parseTimestamp } from '../../src/replay.js';
import { normalizeObserverPath } from '../../src/observer/schemas.js';

let build: Build;
let dir: string;

beforeAll(async () => {
  build = await buildService();
  dir = mkdtempSync(path.join(tmpdir(), 'sp-decode-'));
}, 900_000);

afterAll(() => {
  build?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One checksum per table, over every row of dumpEverything (arrival times left out, sequence values ranked). */
async function tableChecksums(sql: Sql): Promise<Record<string, string>> {
  const dump = rankSurrogateIds(rankSeq(await dumpEverything(sql)));
  const out: Record<string, string> = {};
  for (const [table, rows] of Object.entries(dump)) out[table] = `${rows.length}:${createHash('sha256').update(JSON.stringify(rows)).digest('hex').slice(0, 16)}`;
  return out;
}

interface Run {
  code: number | null;
  stderr: string;
  output: string;
  checksums: Record<string, string>;
  deadLetters: { path: string; reason: string }[];
  logged: number;
  blocks: number;
}

/**
 * `stacks-pulse import-events --file F` with DECODE_THREADS=threads into a fresh database. preLogged: every line of
 * the file is appended to the log first, without being applied (as a process stopped before its projector caught up
 * leaves it): the import then logs nothing new and its projector applies all of it from what it reads back.
 */
async function importWith(file: string, threads: number, opts: { preLogged?: boolean } = {}): Promise<Run> {
  const db = await createTestDatabase('sp_decode');
  try {
    if (opts.preLogged) {
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
      const entries = lines.map((l) => {
        const [, at, p, ...body] = l.split('\t');
        return { path: normalizeObserverPath(p), body: body.join('\t'), receivedAt: parseTimestamp(at) ?? 0 };
      });
      const ids = await appendToLog(db.sql, entries);
      expect(ids.filter((id) => id !== null).length).toBeGreaterThan(0);
    }
    const child = spawn(process.execPath, [build.main, 'import-events', '--file', file], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, LOG_LEVEL: 'info', DECODE_THREADS: String(threads) },
    });
    let stderr = '';
    let output = '';
    child.stderr.on('data', (d) => ((stderr += d), (output += d)));
    child.stdout.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    const deadLetters = await db.sql<{ path: string; reason: string }[]>`SELECT path, reason FROM dead_letters ORDER BY id`;
    const [c] = await db.sql<{ logged: number; blocks: number }[]>`
      SELECT (SELECT count(*) FROM event_log)::int AS logged, (SELECT count(*) FROM blocks)::int AS blocks`;
    return { code, stderr, output, checksums: await tableChecksums(db.sql), deadLetters: [...deadLetters], logged: c.logged, blocks: c.blocks };
  } finally {
    await db.drop();
  }
}

function expectSameTables(a: Run, b: Run): void {
  expect(Object.keys(b.checksums).sort()).toEqual(Object.keys(a.checksums).sort());
  for (const t of Object.keys(a.checksums)) expect(b.checksums[t], `table ${t}`).toBe(a.checksums[t]);
}

describe('import-events with decoding in worker threads', () => {
  it('a fixture: DECODE_THREADS=2 gives the same tables as decoding in the main thread', async () => {
    const file = path.join(FIXTURES_DIR, 'events', 'mainnet-reorg-scenario2.tsv');
    const inThread = await importWith(file, 0);
    const threads = await importWith(file, 2);
    expect(inThread.code, inThread.stderr).toBe(0);
    expect(threads.code, threads.stderr).toBe(0);
    expect(inThread.output).toContain('"decode_threads":0');
    expect(threads.output).toContain('"decode_threads":2');
    expect(threads.blocks).toBeGreaterThan(0);
    expectSameTables(inThread, threads);
  }, 600_000);

  it('a generated chain with forks and microblocks: DECODE_THREADS=2 and 1 give the tables of the main thread', async () => {
    const file = path.join(dir, 'forks.tsv');
    const summary = await generateToFile({ blocks: 40, txsPerBlock: 6, seed: 'decode-threads', forks: true, forkEvery: 9, forkDepth: 2, microblockEvery: 4, bns: true }, file);
    expect(summary.forks).toBeGreaterThan(0);
    const inThread = await importWith(file, 0);
    const one = await importWith(file, 1);
    const two = await importWith(file, 2);
    for (const r of [inThread, one, two]) expect(r.code, r.stderr).toBe(0);
    expect(inThread.blocks).toBe(summary.blocksSent);
    expectSameTables(inThread, one);
    expectSameTables(inThread, two);
  }, 900_000);

  it('messages read back from the log (logged, not yet applied) are decoded by the pool: the same tables', async () => {
    const file = path.join(dir, 'read-back.tsv');
    const summary = await generateToFile({ blocks: 30, txsPerBlock: 5, seed: 'decode-read-back', forks: true, forkEvery: 8, forkDepth: 2, microblockEvery: 4 }, file);
    expect(summary.forks).toBeGreaterThan(0);
    const fresh = await importWith(file, 0);
    const readBack = await importWith(file, 2, { preLogged: true });
    const readBackInThread = await importWith(file, 0, { preLogged: true });
    for (const r of [fresh, readBack, readBackInThread]) expect(r.code, r.stderr).toBe(0);
    expect(readBack.output).toContain('"decode_threads":2');
    expect(readBack.blocks).toBe(summary.blocksSent);
    expect(readBack.logged).toBe(fresh.logged);
    expectSameTables(fresh, readBack);
    expectSameTables(fresh, readBackInThread);
  }, 900_000);

  it('a rejected line is reported the same way, with the same dead letter and the same lines logged before it', async () => {
    const lines = readFileSync(path.join(FIXTURES_DIR, 'events', 'mainnet-reorg-scenario2.tsv'), 'utf8').split('\n').filter((l) => l.trim());
    const at = Math.min(7, lines.length - 1);
    const parts = lines[at].split('\t');
    // a block whose body is not JSON, past the first chunk boundary of neither run
    const bad = [parts[0], parts[1], '/new_block', '{"block_hash": "0x'].join('\t');
    const file = path.join(dir, 'rejected.tsv');
    writeFileSync(file, [...lines.slice(0, at), bad, ...lines.slice(at)].join('\n') + '\n');
    const inThread = await importWith(file, 0);
    const threads = await importWith(file, 2);
    expect(inThread.code).not.toBe(0);
    expect(threads.code).toBe(inThread.code);
    const said = (r: Run) => /rejected\.tsv:\d+: \/new_block answered 400: .*/.exec(r.stderr)?.[0];
    expect(said(inThread), inThread.stderr).toMatch(new RegExp(`rejected\\.tsv:${at + 1}: /new_block answered 400: .*invalid JSON`));
    expect(said(threads)).toBe(said(inThread));
    expect(inThread.deadLetters).toHaveLength(1);
    expect(threads.deadLetters).toEqual(inThread.deadLetters);
    expect(threads.logged).toBe(inThread.logged);
    expectSameTables(inThread, threads);
  }, 600_000);
});
