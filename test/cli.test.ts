// The command line: help texts (snapshots), usage errors (exit 2), and `replay` against a running service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COMMANDS, parseCommandLine } from '../src/cli.js';
import { replayToUrl, replaySummary } from '../src/replay-http.js';
import { progress, progressLine } from '../src/replay.js';
import { buildService, type Build } from './helpers/build.js';
import { FIXTURES_DIR, readFixture } from './helpers/fixtures.js';
import { settled, startTestService } from './helpers/service.js';
import { getOk } from './helpers/http.js';

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
    [['serve', '--port', '1'], /^stacks-pulse serve: error: unknown option --port/],
    [['import-events'], /^stacks-pulse import-events: error: missing --file F.tsv/],
    [['import-events', '--file'], /^stacks-pulse import-events: error: --file needs a value/],
    [['import-events', '--file', 'a.tsv', '--defer-indexes', 'maybe'], /^stacks-pulse import-events: error: --defer-indexes: expected auto, on or off, got "maybe"/],
    [['replay', '--file', 'x', '--ur', 'y'], /^stacks-pulse replay: error: unknown option --ur/],
    [['replay', '--file', 'x', '--url', 'notaurl'], /^stacks-pulse replay: error: --url: expected an http:\/\/ or https:\/\/ URL/],
    [['replay', '--file', 'x', '--give-up-after', 'soon'], /^stacks-pulse replay: error: --give-up-after: expected a number of seconds/],
    [['demo', '--url', 'ftp://x'], /^stacks-pulse demo: error: --url: expected an http:\/\/ or https:\/\/ URL/],
    [['demo', '--blocks', '0'], /^stacks-pulse demo: error: --blocks: expected a positive integer, got "0"/],
    [['demo', '--pace', 'fast'], /^stacks-pulse demo: error: --pace: expected a non-negative integer/],
    [['keys'], /^stacks-pulse keys: error: expected create, list or revoke/],
    [['keys', 'rotate'], /^stacks-pulse keys: error: unknown subcommand "rotate"/],
    [['keys', 'revoke'], /^stacks-pulse keys revoke: error: missing NAME/],
    [['keys', 'create', '--rpm', '5'], /^stacks-pulse keys create: error: missing --name/],
    [['keys', 'create', '--name', 'a', '--rpm', 'abc'], /^stacks-pulse keys create: error: --rpm: expected a non-negative integer, got "abc"/],
    [['migrate', 'extra'], /^stacks-pulse migrate: error: unexpected argument "extra"/],
  ])('%j', (argv, message) => {
    const r = parseCommandLine(argv, V);
    expect(r.kind).toBe('error');
    expect((r as { code: number }).code).toBe(2);
    expect((r as { text: string }).text).toMatch(message);
    expect((r as { text: string }).text).toContain('usage: stacks-pulse');
  });

  it('keys with an unknown subcommand prints the keys usage, not the global help', () => {
    const text = (parseCommandLine(['keys', 'frob'], V) as { text: string }).text;
    expect(text).toContain('usage: stacks-pulse keys create --name NAME');
    expect(text).toContain('usage: stacks-pulse keys revoke NAME');
    expect(text).not.toContain('commands:');
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
  }, 600_000);
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
    expect(badOpt.stderr).toContain('stacks-pulse migrate: error: unknown option --fast');
  }, 300_000);

  it('fail fast on what retrying cannot fix: exit 2 for a malformed command line, 1 for a missing input, nothing created on disk', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'sp-failfast-'));
    try {
      const inCwd = (args: string[]) =>
        spawnSync(process.execPath, [build.main, ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 });
      const cases: [string[], number, RegExp][] = [
        [['import-events', '--file', '/nonexistent.tsv'], 1, /^stacks-pulse import-events: error: --file \/nonexistent\.tsv: no such file\n$/],
        [['import-bns', '--dir', '/nonexistent'], 1, /^stacks-pulse import-bns: error: --dir \/nonexistent: no such folder\n$/],
        [['import-bns', '--dir', cwd], 1, /^stacks-pulse import-bns: error: --dir .*: missing chainstate\.txt, name_zonefiles\.txt\n$/],
        [['export-events', '--file', '/nonexistent/out.tsv'], 1, /^stacks-pulse export-events: error: --file \/nonexistent\/out\.tsv: no such folder/],
        [['replay', '--file', '/nonexistent.tsv'], 1, /^stacks-pulse replay: error: --file \/nonexistent\.tsv: no such file\n$/],
        [['replay', '--file', '/nonexistent.tsv', '--url', 'notaurl'], 2, /^stacks-pulse replay: error: --url: expected an http/],
        [['keys', 'create', '--name', 'a', '--rpm', 'abc'], 2, /^stacks-pulse keys create: error: --rpm: expected a non-negative integer, got "abc"\n\nusage: stacks-pulse keys create/],
        [['keys', 'frob'], 2, /^stacks-pulse keys: error: unknown subcommand "frob"[^]*usage: stacks-pulse keys create/],
        [['demo', '--url', 'notaurl'], 2, /^stacks-pulse demo: error: --url: expected an http/],
      ];
      for (const [args, code, stderr] of cases) {
        const r = inCwd(args);
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(code);
        expect(r.stderr, args.join(' ')).toMatch(stderr);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
      expect(readdirSync(cwd)).toEqual([]); // no ./data
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 300_000);

  it('replay stops at once on a 4xx (the API port given by mistake) and names the likely cause; retries 5xx', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sp-replay4xx-')), 'one.tsv');
    writeFileSync(file, '1\tt\t/new_block\t{}\n');
    // an API-like server: 404 for POSTs, GET /extended answers like the REST API
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/extended') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"server_version":"x","status":"ready"}');
        res.writeHead(404, { 'content-type': 'application/json' }).end(`{"statusCode":404,"error":"Not Found","message":"Route ${req.method}:${req.url} not found"}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const child = spawn(process.execPath, [build.main, 'replay', '--file', file, '--url', url], { env: { PATH: process.env.PATH ?? '' } });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code, err).toBe(1);
      expect(err).toMatch(/^stacks-pulse replay: error: .*one\.tsv:1: http:\/\/127\.0\.0\.1:\d+ answered 404 to POST \/new_block: this looks like the API port, the observer listens on http:\/\/127\.0\.0\.1:3700/m);
      expect(err).not.toContain('retrying');
    } finally {
      server.close();
      rmSync(path.dirname(file), { recursive: true, force: true });
    }
  }, 300_000);

  it('demo: fails fast on the API port and on a port nothing listens on', async () => {
    const svc = await startTestService();
    try {
      // not spawnSync: the service runs in this process and must keep answering
      const run = async (url: string) => {
        const child = spawn(process.execPath, [build.main, 'demo', '--url', url], { env: { PATH: process.env.PATH ?? '' } });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        const status = await new Promise<number | null>((r) => child.once('exit', r));
        return { status, stderr };
      };
      const api = await run(svc.api);
      expect(api.status, api.stderr).toBe(1);
      expect(api.stderr).toMatch(/^stacks-pulse demo: error: http:\/\/127\.0\.0\.1:\d+ is not the event observer: this looks like the API port, the observer listens on http:\/\/127\.0\.0\.1:3700/);
      const probe = createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
      const closed = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
      await new Promise((r) => probe.close(r));
      const none = await run(closed);
      expect(none.status, none.stderr).toBe(1);
      expect(none.stderr).toMatch(/^stacks-pulse demo: error: nothing answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start the service first/);
      const [{ n }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`;
      expect(n).toBe(0);
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('demo feeds a running service: blocks, a fork, balances, BNS names and a non-empty mempool are served by REST', async () => {
    const svc = await startTestService();
    try {
      const child = spawn(process.execPath, [build.main, 'demo', '--url', svc.observer, '--pace', '0', '--blocks', '14'], { env: { PATH: process.env.PATH ?? '' } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code, err + out).toBe(0);
      expect(err).toBe('');
      expect(out).toMatch(/^block {3}1 {2}0x[0-9a-f]{10}… {2}\d+ txs/m);
      expect(out).toContain('[competing branch: a longer one replaces it soon]');
      expect(out).toMatch(/^mempool {3}\+\d+ txs/m);
      const done = /^done: height (\d+), (\d+) transactions mined, (\d+) BNS names, (\d+) transactions pending in the mempool$/m.exec(out);
      expect(done, out).not.toBeNull();
      const [height, , names, pending] = done!.slice(1).map(Number);
      expect(height).toBeGreaterThanOrEqual(14);
      expect(names).toBeGreaterThan(0);
      expect(pending).toBeGreaterThan(0);
      await settled(svc.observer, 90_000);
      expect((await getOk<{ height: number }>(svc, '/extended/v2/blocks/latest')).height).toBe(height);
      const orphaned = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blocks WHERE NOT canonical`;
      expect(orphaned[0].n).toBeGreaterThan(0);
      const account = /a balance {3}http:\/\/\S+\/extended\/v1\/address\/(\w+)\/balances/.exec(out)![1];
      expect(BigInt((await getOk<{ balance: string }>(svc, `/extended/v1/address/${account}/stx`)).balance)).toBeGreaterThan(0n);
      const listed = await getOk<string[]>(svc, '/v1/names');
      expect(listed.length).toBe(names);
      const name = /a BNS name {2}http:\/\/\S+\/v1\/names\/(\S+)/.exec(out)![1];
      expect(listed).toContain(name);
      expect((await getOk<{ address: string }>(svc, `/v1/names/${name}`)).address).toMatch(/^ST/);
      expect((await getOk<{ total: number }>(svc, '/extended/v1/tx/mempool')).total).toBeGreaterThan(0);
    } finally {
      await svc.stop();
    }
  }, 300_000);

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
  }, 300_000);

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
  }, 300_000);
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
  }, 300_000);
});
