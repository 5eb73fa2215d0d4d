// The command line: help texts (snapshots), usage errors (exit 2), and `replay` against a running service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COMMANDS, parseCommandLine } from '../src/cli.js';
import { replayToUrl, replaySummary } from '../src/replay-http.js';
import { progress, progressLine } from '../src/replay.js';
import { buildService, type Build } from './helpers/build.js';
import { FIXTURES_DIR, readFixture } from './helpers/fixtures.js';
import { startTestService } from './helpers/service.js';

const V = '9.9.9';
const MOCKNET = path.join(FIXTURES_DIR, 'events/mocknet.tsv');

describe('help texts', () => {
  it('stacks-pulse --help lists every command', () => {
    const r = parseCommandLine(['--help'], V);
    expect(r).toMatchObject({ kind: 'output', code: 0 });
    const text = (r as { text: string }).text;
    for (const c of COMMANDS) expect(text).toContain(c.name);
    for (const c of ['serve', 'api', 'ingest', 'replay', 'migrate', 'import-events', 'export-events', 'keys create']) expect(text).toContain(`  ${c}`);
    expect(text).toMatchSnapshot();
    expect(parseCommandLine(['-h'], V)).toEqual(r);
    expect(parseCommandLine(['help'], V)).toEqual(r);
  });

  it.each(COMMANDS.map((c) => c.name))('stacks-pulse %s --help', (name) => {
    const r = parseCommandLine([...name.split(' '), '--help'], V);
    expect(r).toMatchObject({ kind: 'output', code: 0 });
    const text = (r as { text: string }).text;
    for (const o of COMMANDS.find((c) => c.name === name)!.options) expect(text).toContain(o.name);
    expect(text).toMatchSnapshot();
  });

  it('--version', () => {
    expect(parseCommandLine(['--version'], V)).toEqual({ kind: 'output', text: '9.9.9\n', code: 0 });
    expect(parseCommandLine(['-v'], V)).toEqual({ kind: 'output', text: '9.9.9\n', code: 0 });
  });
});

describe('usage errors: exit 2 with the usage', () => {
  it.each([
    [['bogus'], /unknown command "bogus"/],
    [['--bogus'], /unknown option --bogus/],
    [['serve', '--port', '1'], /serve: unknown option --port/],
    [['import-events'], /import-events: missing --file F.tsv/],
    [['import-events', '--file'], /--file needs a value/],
    [['replay', '--file', 'x', '--ur', 'y'], /replay: unknown option --ur/],
    [['keys'], /keys: expected create, list or revoke/],
    [['keys', 'rotate'], /unknown subcommand "rotate"/],
    [['keys', 'revoke'], /keys revoke: missing NAME/],
    [['keys', 'create', '--rpm', '5'], /keys create: missing --name/],
    [['migrate', 'extra'], /unexpected argument "extra"/],
  ])('%j', (argv, message) => {
    const r = parseCommandLine(argv, V);
    expect(r.kind).toBe('error');
    expect((r as { code: number }).code).toBe(2);
    expect((r as { text: string }).text).toMatch(message);
    expect((r as { text: string }).text).toContain('usage: stacks-pulse');
  });

  it('parses options and positionals', () => {
    expect(parseCommandLine([], V)).toEqual({ kind: 'run', command: 'serve', options: {}, positionals: [] });
    expect(parseCommandLine(['replay', '--file=a.tsv', '--url', 'http://x'], V)).toEqual({
      kind: 'run',
      command: 'replay',
      options: { file: 'a.tsv', url: 'http://x' },
      positionals: [],
    });
    expect(parseCommandLine(['keys', 'revoke', 'ci'], V)).toMatchObject({ command: 'keys revoke', positionals: ['ci'] });
  });
});

describe('import progress (pure)', () => {
  it('rate and ETA are both in bytes of the file', () => {
    // 50 MB of 100 MB in 10 s (5 MB/s) over 10 messages: 10 s left, whatever the message count
    const p = progress(50e6, 100e6, 10);
    expect(p.bytesPerSecond).toBe(5e6);
    expect(p.etaSeconds).toBe(10);
    expect(progressLine(50e6, 100e6, 10, 10)).toMatch(/50\.0% 10 msgs 4\.8 MB\/s ETA 10s$/);
    expect(progress(0, 100, 0).etaSeconds).toBeUndefined();
    expect(progress(100, 100, 2).etaSeconds).toBe(0);
  });
});

describe('replay (node-like HTTP sender)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sp-replay-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends in order, retries non-200 answers and dropped connections with back-off until 200', async () => {
    const file = path.join(dir, 'three.tsv');
    writeFileSync(file, ['1\tt\t/new_burn_block\t{"a":1}', '2\tt\t/new_block\t{"b":2}', '', '3\tt\t/new_mempool_tx\t["c"]'].join('\n') + '\n');
    const seen: string[] = [];
    let calls = 0;
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        calls++;
        if (calls === 2) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
        if (calls === 3) return void req.socket.destroy();
        seen.push(`${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"ok"}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const notes: string[] = [];
    try {
      const stats = await replayToUrl({ file, url: `http://127.0.0.1:${port}/`, initialDelayMs: 10, write: (s) => notes.push(s) });
      expect(seen).toEqual(['/new_burn_block {"a":1}', '/new_block {"b":2}', '/new_mempool_tx ["c"]']);
      expect(stats).toMatchObject({ messages: 3, retries: 2, complete: true, failures: { '503': 1 } });
      expect(notes.join('')).toMatch(/line 2 \(\/new_block\): 503: busy; retrying in 0\.0 s/);
      expect(replaySummary(stats, 'U')).toMatch(/^replayed 3 messages to U in [\d.]+ s; 2 attempts retried \(1× 503, 1× \w+\)$/);
    } finally {
      server.close();
    }
  });

  it('gives up when asked to', async () => {
    const file = path.join(dir, 'one.tsv');
    writeFileSync(file, '1\tt\t/new_block\t{}\n');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    await expect(replayToUrl({ file, url: `http://127.0.0.1:${port}`, initialDelayMs: 10, giveUpAfterMs: 50, write: () => {} })).rejects.toThrow(
      /one\.tsv:1: \/new_block not accepted after \d+ attempts \(last: ECONNREFUSED\)/,
    );
  });
});

describe('the compiled CLI (real processes)', () => {
  let build: Build;
  beforeAll(async () => {
    build = await buildService();
  }, 300_000);
  afterAll(() => build?.remove());
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [build.main, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 });

  it('--help, --version, command --help exit 0; unknown commands and options exit 2 with the usage', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('replay --file F.tsv');
    const version = run(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(run(['keys', 'create', '--help']).status).toBe(0);
    const bad = run(['frobnicate']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown command "frobnicate"');
    expect(bad.stderr).toContain('usage: stacks-pulse');
    const badOpt = run(['migrate', '--fast']);
    expect(badOpt.status).toBe(2);
    expect(badOpt.stderr).toContain('migrate: unknown option --fast');
  }, 60_000);

  it('import-events: Ctrl-C exits 130 saying what is logged; a re-run continues without duplicates and applies everything', async () => {
    const { createTestDatabase } = await import('./helpers/db.js');
    const db = await createTestDatabase();
    const dir = mkdtempSync(path.join(tmpdir(), 'sp-sigint-'));
    try {
      const lines = readFixture('epoch-3-transition');
      const file = path.join(dir, 'big.tsv');
      // the stream, then its messages again (duplicates: no-ops) so the import is still running when Ctrl-C comes
      const text = lines.map((l) => `${l.id}\t${l.timestamp}\t${l.path}\t${l.body}`).join('\n') + '\n';
      writeFileSync(file, text.repeat(4));
      const count = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`)[0].n;
      const child = spawn(process.execPath, [build.main, 'import-events', '--file', file], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      while ((await count()) === 0) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGINT');
      const code = await exited;
      expect(code, err).toBe(130);
      const m = /import interrupted: the first (\d+) lines of .* \((\d+) messages\) are logged; run the same command again to continue/.exec(err);
      expect(m, err).not.toBeNull();
      const distinct = new Set(lines.map((l) => `${l.path}\t${l.body}`)).size;
      const stored = await count();
      expect(stored).toBeGreaterThan(0);
      expect(stored).toBe(new Set(lines.slice(0, Number(m![1])).map((l) => `${l.path}\t${l.body}`)).size);
      const again = spawnSync(process.execPath, [build.main, 'import-events', '--file', file], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(again.status, again.stderr).toBe(0);
      expect(await count()).toBe(distinct);
      // every logged message is applied: the interrupted run's and the re-run's
      const [p] = await db.sql<{ applied: number; logged: number; blocks: number }[]>`
        SELECT (SELECT applied_id FROM projector_state)::int AS applied, (SELECT max(id) FROM event_log)::int AS logged,
          (SELECT count(*) FROM blocks)::int AS blocks`;
      expect(p.applied).toBe(p.logged);
      expect(p.blocks).toBe(new Set(lines.filter((l) => l.path === '/new_block').map((l) => (JSON.parse(l.body) as { index_block_hash: string }).index_block_hash)).size);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  }, 180_000);

  it('replay --file mocknet.tsv --url <observer> delivers every message to a running service', async () => {
    const svc = await startTestService();
    try {
      const child = spawn(process.execPath, [build.main, 'replay', '--file', MOCKNET, '--url', svc.observer], { env: { PATH: process.env.PATH ?? '' } });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code, err).toBe(0);
      const lines = readFixture('mocknet');
      expect(err).toContain(`replayed ${lines.length} messages to ${svc.observer}`);
      const [{ n }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`;
      expect(n).toBe(new Set(lines.map((l) => `${l.path}\t${l.body}`)).size);
    } finally {
      await svc.stop();
    }
  }, 120_000);
});

describe('import-events', () => {
  it('mempool txs get the line’s timestamp as receipt_time, so import(export(x)) keeps receipt times', async () => {
    const { createTestDatabase } = await import('./helpers/db.js');
    const { testPipeline } = await import('./helpers/pipeline.js');
    const { createLogger } = await import('../src/logger.js');
    const { exportEvents, importEvents, parseTimestamp } = await import('../src/replay.js');
    expect(parseTimestamp('2022-10-05 16:20:34.244945+00')).toBe(Date.UTC(2022, 9, 5, 16, 20, 34, 244));
    expect(parseTimestamp('2024-01-02T03:04:05.678Z')).toBe(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
    expect(parseTimestamp('x')).toBeUndefined();
    const quiet = createLogger('silent');
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    const dir = mkdtempSync(path.join(tmpdir(), 'sp-import-'));
    try {
      const src = path.join(FIXTURES_DIR, 'events/fuzzed-transactions-1.tsv');
      await importEvents(src, testPipeline(a.sql, quiet), quiet);
      const expected = new Map<string, number>();
      for (const l of readFixture('fuzzed-transactions-1')) {
        if (l.path !== '/new_mempool_tx') continue;
        for (const raw of JSON.parse(l.body) as string[]) {
          expected.set(raw, Math.floor(parseTimestamp(l.timestamp)! / 1000));
        }
      }
      const rows = await a.sql<{ raw_tx: string; receipt_time: number }[]>`SELECT raw_tx, receipt_time FROM mempool_txs`;
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        const want = expected.get(r.raw_tx) ?? expected.get(r.raw_tx.replace(/^0x/, ''));
        if (want !== undefined) expect(r.receipt_time).toBe(want);
      }
      expect(rows.filter((r) => expected.has(r.raw_tx)).length).toBeGreaterThan(0);
      const out = path.join(dir, 'out.tsv');
      await exportEvents(a.sql, out);
      await importEvents(out, testPipeline(b.sql, quiet), quiet);
      const q = 'SELECT tx_id, receipt_time FROM mempool_txs ORDER BY tx_id';
      expect(await b.sql.unsafe(q)).toEqual(await a.sql.unsafe(q));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await Promise.all([a.drop(), b.drop()]);
    }
  }, 120_000);
});
