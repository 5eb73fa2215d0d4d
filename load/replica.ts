/**
 * The read-replica deployment under load: a PostgreSQL primary and a streaming standby (temporary directories, free
 * ports; load/replica-cluster.ts), one `ingest` process, two `api` processes reading the standby, one `api` process
 * reading the primary (the single-process figures), Redis between them.
 *
 * For each standby apply delay (recovery_min_apply_delay) it measures:
 *   - push: a generated chain is posted to the observer block by block while Socket.IO subscribers of `block` are
 *     connected to every api process; latency = the subscriber's receipt - the start of the block's POST;
 *   - REST: autocannon on the block and transaction lists, against the primary-reading process alone, then against
 *     the two replica-reading processes at once (same total connections), while blocks keep coming.
 *
 *   npm run build && node dist/load/replica.js [--delays 0,500] [--subscribers 50] [--blocks 40] [--duration 10]
 *       [--connections 20] [--redis redis://127.0.0.1:6379]
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { io as connect, type Socket } from 'socket.io-client';
import { ArgReader, freePort } from './bench-support.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from './replica-cluster.js';
import { ChainGenerator, postMessage } from './generator/index.js';
import type { GeneratedMessage } from './generator/types.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.js');

interface Options {
  delays: number[];
  subscribers: number;
  blocks: number;
  duration: number;
  connections: number;
  redis: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { delays: [0, 500], subscribers: 50, blocks: 40, duration: 10, connections: 20, redis: 'redis://127.0.0.1:6379' };
  const a = new ArgReader(argv);
  for (let f = a.next(); f !== undefined; f = a.next()) {
    if (f === '--delays') o.delays = a.value().split(',').map(Number);
    else if (f === '--subscribers') o.subscribers = Number(a.value());
    else if (f === '--blocks') o.blocks = Number(a.value());
    else if (f === '--duration') o.duration = Number(a.value());
    else if (f === '--connections') o.connections = Number(a.value());
    else if (f === '--redis') o.redis = a.value();
    else throw new Error(`unknown option ${f}`);
  }
  if (o.delays.some((d) => !Number.isInteger(d) || d < 0)) throw new Error('--delays: comma-separated milliseconds');
  return o;
}

interface Proc {
  child: ChildProcess;
  url: string;
  observer?: string;
}

function startProc(command: string, env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [MAIN, command], {
    env: { ...process.env, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_ANON_RPM: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${out}`)), 120_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        let j: { msg?: string; port?: number };
        try {
          j = JSON.parse(line) as typeof j;
        } catch {
          continue;
        }
        const want = command === 'ingest' ? 'event observer listening' : 'API listening';
        if (j.msg === want) {
          clearTimeout(timer);
          out = '';
          resolve({ child, url: `http://127.0.0.1:${j.port}`, observer: command === 'ingest' ? `http://127.0.0.1:${j.port}` : undefined });
          return;
        }
      }
      if (out.length > 1e6) out = out.slice(-1e5);
    });
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}:\n${out}`));
    });
  });
}

function stopProc(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
    setTimeout(() => p.child.kill('SIGKILL'), 10_000).unref();
  });
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function until(what: string, probe: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ready = (p: Proc) => until(`${p.url}/ready`, async () => (await fetch(`${p.url}/ready`)).status === 200);

/** Subscribers of `block` on one process; `seen(hash)` → receipt times. */
async function subscribe(url: string, n: number): Promise<{ sockets: Socket[]; receipts: Map<string, number[]> }> {
  const receipts = new Map<string, number[]>();
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect(url, { transports: ['websocket'], forceNew: true, reconnection: false, query: { subscriptions: 'block' } });
    s.on('block', (b: { hash: string }) => {
      const t = performance.now();
      const list = receipts.get(b.hash) ?? [];
      list.push(t);
      receipts.set(b.hash, list);
    });
    sockets.push(s);
  }
  await Promise.all(sockets.map((s) => new Promise<void>((resolve, reject) => (s.connected ? resolve() : (s.once('connect', () => resolve()), s.once('connect_error', reject))))));
  return { sockets, receipts };
}

interface PushFigures {
  delivered: number;
  expected: number;
  p50: number;
  p99: number;
}

/** Posts `msgs` one at a time; returns when each block's POST started, by block hash. */
async function postChain(observer: string, msgs: GeneratedMessage[], gapMs: number): Promise<Map<string, number>> {
  const started = new Map<string, number>();
  for (const m of msgs) {
    const t = performance.now();
    if (m.path === '/new_block') started.set((JSON.parse(m.body) as { block_hash: string }).block_hash, t);
    await postMessage(observer, m);
    if (m.path === '/new_block' && gapMs) await new Promise((r) => setTimeout(r, gapMs));
  }
  return started;
}

function pushFigures(started: Map<string, number>, receipts: Map<string, number[]>, subscribers: number): PushFigures {
  const lat: number[] = [];
  for (const [hash, t0] of started) for (const t of receipts.get(hash) ?? []) lat.push(t - t0);
  lat.sort((a, b) => a - b);
  return { delivered: lat.length, expected: started.size * subscribers, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

function rest(urls: string[], connections: number, duration: number): Promise<autocannon.Result[]> {
  return Promise.all(
    urls.map(
      (url) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          autocannon(
            {
              url,
              connections: Math.max(1, Math.floor(connections / urls.length)),
              duration,
              requests: [{ path: '/extended/v1/block?limit=20' }, { path: '/extended/v1/tx?limit=20' }],
            },
            (err, r) => (err ? reject(err) : resolve(r)),
          );
        }),
    ),
  );
}

function restLine(name: string, rs: autocannon.Result[]): string {
  const reqs = rs.reduce((s, r) => s + r.requests.average, 0);
  const non2xx = rs.reduce((s, r) => s + r.non2xx + r.errors, 0);
  const p50 = Math.max(...rs.map((r) => r.latency.p50));
  const p99 = Math.max(...rs.map((r) => r.latency.p99));
  return `| ${name} | ${reqs.toFixed(0)} | ${p50} | ${p99} | ${non2xx} |`;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const log = (m: string) => process.stderr.write(`[replica] ${m}\n`);
  let pg: ReplicatedPostgres | undefined;
  const procs: Proc[] = [];
  try {
    log('starting primary + standby');
    pg = await startReplicatedPostgres({ database: 'pulse', applyDelayMs: o.delays[0] });
    const env = { DATABASE_URL: pg.primary.url(), REDIS_URL: o.redis, REDIS_KEY_PREFIX: `sp-load-replica-${randomBytes(4).toString('hex')}` };
    const ingest = await startProc('ingest', env);
    procs.push(ingest);
    await pg.caughtUp();
    const single = await startProc('api', env);
    const replicas = await Promise.all([0, 1].map(() => startProc('api', { ...env, DATABASE_READ_URL: pg!.standby.url() })));
    procs.push(single, ...replicas);
    const gen = new ChainGenerator({ blocks: o.blocks * (o.delays.length * 2 + 1) + 10, txsPerBlock: 5, seed: 'load-replica', mempool: false, microblocks: false });
    const all: GeneratedMessage[] = [];
    for await (const m of gen.messages()) all.push(m);
    const blockEnds = all.flatMap((m, i) => (m.path === '/new_block' ? [i + 1] : []));
    let next = 0;
    const take = (blocks: number) => {
      const end = blockEnds[Math.min(blockEnds.length - 1, blockEnds.findIndex((e) => e > next) + blocks - 1)];
      const slice = all.slice(next, end);
      next = end;
      return slice;
    };
    log('warming up (10 blocks)');
    await postChain(ingest.observer!, take(10), 0);
    const out: string[] = [];
    out.push(`# read-replica deployment: ${o.subscribers} block subscribers per api process, ${o.blocks} blocks per run, REST ${o.connections} connections × ${o.duration} s`);
    for (const delay of o.delays) {
      log(`standby apply delay ${delay} ms`);
      await pg.standby.stop('fast');
      await pg.standby.start([`recovery_min_apply_delay=${delay}ms`]);
      await pg.caughtUp(120_000);
      for (const p of [single, ...replicas]) await ready(p);
      // push alone
      const subs = await Promise.all([single, ...replicas].map((p) => subscribe(p.url, o.subscribers)));
      const started = await postChain(ingest.observer!, take(o.blocks), 250);
      await pg.caughtUp(120_000);
      await new Promise((r) => setTimeout(r, delay + 1000)); // the last messages are still on their way
      const [ps, pr1, pr2] = subs.map((s) => pushFigures(started, s.receipts, o.subscribers));
      out.push('', `## apply delay ${delay} ms: push (POST of the block → subscriber receipt, ms)`, '| api process | delivered | p50 | p99 |', '|---|---|---|---|');
      out.push(`| reads the primary | ${ps.delivered}/${ps.expected} | ${ps.p50.toFixed(1)} | ${ps.p99.toFixed(1)} |`);
      out.push(`| reads the standby (1) | ${pr1.delivered}/${pr1.expected} | ${pr1.p50.toFixed(1)} | ${pr1.p99.toFixed(1)} |`);
      out.push(`| reads the standby (2) | ${pr2.delivered}/${pr2.expected} | ${pr2.p50.toFixed(1)} | ${pr2.p99.toFixed(1)} |`);
      out.push(`extra delay of the replica gate (p50, standby − primary): ${(((pr1.p50 + pr2.p50) / 2) - ps.p50).toFixed(1)} ms`);
      // REST with the chain coming in and the subscribers connected
      out.push('', `## apply delay ${delay} ms: REST (block and tx lists) while blocks arrive`, '| target | req/s | p50 ms | p99 ms | non-2xx + errors |', '|---|---|---|---|---|');
      const feeding = postChain(ingest.observer!, take(Math.ceil(o.blocks / 2)), Math.floor((o.duration * 1000) / Math.ceil(o.blocks / 2)));
      out.push(restLine('one api process (reads the primary)', await rest([single.url], o.connections, o.duration)));
      out.push(restLine('two api processes (read the standby)', await rest(replicas.map((r) => r.url), o.connections, o.duration)));
      await feeding;
      for (const s of subs) for (const sock of s.sockets) sock.close();
    }
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    for (const p of procs.reverse()) await stopProc(p);
    await pg?.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
