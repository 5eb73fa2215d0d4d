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
