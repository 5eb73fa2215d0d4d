/**
 * Push fan-out benchmark: N Socket.IO clients (default 10,000, spread over worker
 * processes; minimal engine.io-over-`ws` clients), each in `block` plus one address room, while synthetic blocks
 * (load/generator/, mined by the same accounts the clients watch) are driven into the observer one at a time.
 * Prints delivery latency (observer answer → client receipt, CLOCK_MONOTONIC shared by all processes) p50/p99/max,
 * messages lost and duplicated, server RSS per connection; then runs the bare socket.io-on-uWS broadcast (one room,
 * a payload of the same size, no database, no Redis) with the same clients and prints the ratio.
 *
 *   npm run bench:push -- [--clients 10000] [--workers 4] [--blocks 30] [--interval 1000] [--api 1|2]
 *                         [--adapter classic|sharded] [--txs-per-block 2] [--no-baseline] [--ft-balance-rooms]
 *                         [--database-url URL] [--redis-url URL] [--out DIR]
 *
 * --api 2 runs one `ingest` and two `api` processes on Redis (clients split between the two api processes).
 * Compiled by the project's tsc to dist/load/push.js.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { WebSocket } from 'ws';
import { ChainGenerator } from './generator/index.js';
import { ArgReader, DEFAULT_ADMIN_URL } from './bench-support.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, HERE.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
const MAIN = path.join(ROOT, 'dist/src/main.js');

interface Options {
  clients: number;
  workers: number;
  blocks: number;
  warmup: number;
  interval: number;
  api: 1 | 2;
  adapter: 'classic' | 'sharded';
  txsPerBlock: number;
  baseline: boolean;
  /** every client also follows `address-ft-balance:<its address>` (a wallet's screen) */
  ftRooms: boolean;
  databaseUrl: string;
  redisUrl: string;
  out: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    clients: 10_000,
    workers: Math.max(2, Math.min(4, os.cpus().length * 2)),
    blocks: 30,
    warmup: 3,
    interval: 1000,
    api: 1,
    adapter: 'classic',
    txsPerBlock: 2,
    baseline: true,
    ftRooms: false,
    databaseUrl: DEFAULT_ADMIN_URL,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    out: path.join(ROOT, 'load/results'),
  };
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--clients': o.clients = args.number(); break;
      case '--workers': o.workers = Math.max(1, args.number()); break;
      case '--blocks': o.blocks = Math.max(1, args.number()); break;
      case '--warmup': o.warmup = args.number(); break;
      case '--interval': o.interval = args.number(); break;
      case '--api': o.api = args.number() === 2 ? 2 : 1; break;
      case '--adapter': o.adapter = args.value() === 'sharded' ? 'sharded' : 'classic'; break;
      case '--txs-per-block': o.txsPerBlock = args.number(); break;
      case '--no-baseline': o.baseline = false; break;
      case '--ft-balance-rooms': o.ftRooms = true; break;
      case '--database-url': o.databaseUrl = args.value(); break;
      case '--redis-url': o.redisUrl = args.value(); break;
      case '--out': o.out = args.value(); break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  return o;
}

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms, CLOCK_MONOTONIC: comparable across processes
const log = (msg: string) => process.stderr.write(`[bench:push] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------------
// worker: N minimal engine.io v4 / socket.io v5 clients over `ws`

interface WorkerJob {
  urls: string[];
  count: number;
  offset: number;
  addresses: string[];
  /** each client also follows its address's FT-balance room (--ft-balance-rooms) */
  ftRooms: boolean;
}
interface WorkerResult {
  /** height → receipt times (ms) of the `block` message, one per client that got it */
  receipts: Record<number, number[]>;
  duplicates: number;
  addressMessages: number;
  errors: number;
}

function runWorker(): void {
  const sockets: WebSocket[] = [];
  let job: WorkerJob;
  const receipts: Record<number, number[]> = {};
  const seen: Set<number>[] = [];
  let duplicates = 0;
  let addressMessages = 0;
  let errors = 0;
  const onMessage = (i: number, s: string) => {
    const c = s.charCodeAt(0);
    if (c === 50 /* '2' ping */) return sockets[i].send('3');
    if (c === 48 /* '0' open */) return sockets[i].send('40');
    if (s.startsWith('42["block"')) {
      const t = now();
      const k = s.lastIndexOf('"height":');
      const h = parseInt(s.slice(k + 9), 10);
      if (seen[i].has(h)) duplicates++;
      else {
        seen[i].add(h);
        (receipts[h] ??= []).push(t);
      }
    } else if (s.startsWith('42["address-')) addressMessages++;
  };
  const open = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const n = job.offset + i;
      const url = job.urls[n % job.urls.length];
      const address = job.addresses[n % job.addresses.length];
      const rooms = `block,address-transaction:${address}${job.ftRooms ? `,address-ft-balance:${address}` : ''}`;
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket&subscriptions=${encodeURIComponent(rooms)}`, {
        perMessageDeflate: false,
      });
      sockets[i] = ws;
      seen[i] = new Set();
      let done = false;
      ws.on('message', (d) => {
        const s = d.toString();
        if (!done && s.startsWith('40')) {
          done = true;
          resolve();
        }
        onMessage(i, s);
      });
      ws.on('error', () => {
        errors++;
        if (!done) {
          done = true;
          resolve();
        }
      });
    });
  process.on('message', async (m: { type: string; job?: WorkerJob }) => {
    if (m.type === 'connect') {
      job = m.job!;
      const inFlight = 100;
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < job.count) await open(next++);
        }),
      );
      process.send!({ type: 'connected', errors });
    } else if (m.type === 'collect') {
      const r: WorkerResult = { receipts, duplicates, addressMessages, errors };
      process.send!({ type: 'result', result: r });
    } else if (m.type === 'close') {
      for (const ws of sockets) ws.terminate();
      setTimeout(() => process.exit(0), 100);
    }
  });
}

// ------------------------------------------------------------------------------------------------
// bare baseline server: socket.io on uWS, one room, POST /emit broadcasts a payload of the requested size

async function runBaselineServer(): Promise<void> {
  const { default: uWS } = await import('uWebSockets.js');
  const { Server } = await import('socket.io');
  const app = uWS.App();
  const io = new Server({ path: '/socket.io/', transports: ['websocket'], serveClient: false, pingInterval: 5000, pingTimeout: 5000 });
  io.attachApp(app, { maxBackpressure: 64 * 1024 * 1024 } as never);
  io.on('connection', (socket) => {
    const q = socket.handshake.query.subscriptions;
    if (typeof q === 'string') void socket.join(q.split(',').filter(Boolean));
  });
  app.post('/emit', (res) => {
    let body = '';
    res.onAborted(() => {});
    res.onData((chunk, last) => {
      body += Buffer.from(chunk).toString();
      if (!last) return;
      const { payload, height } = JSON.parse(body) as { payload: unknown; height: number };
      io.to('block').emit('block', payload, { cursor: String(height), height, index_block_hash: '0x' + '00'.repeat(32) });
      res.cork(() => res.end('{"result":"ok"}'));
    });
  });
  app.listen('127.0.0.1', 0, (token) => {
    process.stdout.write(JSON.stringify({ msg: 'API listening', port: uWS.us_socket_local_port(token) }) + '\n');
  });
}

// ------------------------------------------------------------------------------------------------
// driver

interface Proc {
  child: ChildProcess;
  port: number;
  observerPort?: number;
}

function startProc(args: string[], env: Record<string, string>, waitFor: 'API listening' | 'event observer listening'): Promise<Proc> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let observerPort: number | undefined;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${out}`)), 60_000);
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
        if (j.msg === 'event observer listening') observerPort = j.port;
        if (j.msg === waitFor) {
          clearTimeout(timer);
          out = '';
          resolve({ child, port: j.port!, observerPort });
          return;
        }
      }
      if (out.length > 1e6) out = out.slice(-1e5);
    });
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${out}`));
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

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Workers {
  procs: ChildProcess[];
  request<T>(type: string, extra?: Record<string, unknown>, reply?: string): Promise<T[]>;
  close(): Promise<void>;
}

function startWorkers(n: number): Workers {
  const procs = Array.from({ length: n }, () => fork(fileURLToPath(import.meta.url), ['--worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  return {
    procs,
    request<T>(type: string, extra: Record<string, unknown> = {}, reply?: string) {
      return Promise.all(
        procs.map(
          (p, i) =>
            new Promise<T>((resolve) => {
              if (reply) p.once('message', (m: { type: string } & Record<string, unknown>) => resolve(m as T));
              p.send({ type, ...(typeof extra.jobOf === 'function' ? { job: (extra.jobOf as (i: number) => unknown)(i) } : {}) });
              if (!reply) resolve(undefined as T);
            }),
        ),
      );
    },
    async close() {
      await Promise.all(
        procs.map((p) => new Promise<void>((resolve) => (p.exitCode !== null ? resolve() : (p.once('exit', () => resolve()), p.send({ type: 'close' }))))),
      );
    },
  };
}

interface PhaseResult {
  name: string;
  clients: number;
  connected: number;
  blocks: number;
  p50: number;
  p99: number;
  max: number;
  /** from the POST, not the answer */
  p50FromPost: number;
  p99FromPost: number;
  lost: number;
  duplicates: number;
  addressMessages: number;
  rssIdleBefore: number;
  rssWithClients: number;
  rssPerClientKb: number;
}

async function connectClients(o: Options, urls: string[], addresses: string[], serverPids: number[]) {
  const rssBefore = serverPids.reduce((a, p) => a + rss(p), 0);
  const workers = startWorkers(o.workers);
  const per = Math.ceil(o.clients / o.workers);
  const t0 = now();
  const replies = await workers.request<{ errors: number }>(
    'connect',
    { jobOf: (i: number) => ({ urls, addresses, ftRooms: o.ftRooms, offset: i * per, count: Math.max(0, Math.min(per, o.clients - i * per)) }) },
    'connected',
  );
  const errors = replies.reduce((a, r) => a + r.errors, 0);
  log(`${o.clients - errors} clients connected in ${Math.round(now() - t0)} ms (${errors} errors)`);
  await sleep(3000); // let the server settle before measuring memory
  const rssWith = serverPids.reduce((a, p) => a + rss(p), 0);
  return { workers, errors, rssBefore, rssWith };
}

async function measure(
  name: string,
  o: Options,
  workers: Workers,
  drive: () => AsyncGenerator<{ height: number; posted: number; answered: number } | undefined>,
  meta: { errors: number; rssBefore: number; rssWith: number },
): Promise<PhaseResult> {
  const sent: { height: number; posted: number; answered: number }[] = [];
  for await (const s of drive()) if (s) sent.push(s);
  await sleep(Math.max(2000, o.interval));
  const results = await workers.request<{ result: WorkerResult }>('collect', {}, 'result');
  const lat: number[] = [];
  const latPost: number[] = [];
  let received = 0;
  for (const s of sent) {
    for (const r of results) {
      for (const t of r.result.receipts[s.height] ?? []) {
        lat.push(Math.max(0, t - s.answered));
        latPost.push(t - s.posted);
        received++;
      }
    }
  }
  lat.sort((a, b) => a - b);
  latPost.sort((a, b) => a - b);
  const connected = o.clients - meta.errors;
  const r: PhaseResult = {
    name,
    clients: o.clients,
    connected,
    blocks: sent.length,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    max: lat.at(-1) ?? NaN,
    p50FromPost: percentile(latPost, 50),
    p99FromPost: percentile(latPost, 99),
    lost: connected * sent.length - received,
    duplicates: results.reduce((a, x) => a + x.result.duplicates, 0),
    addressMessages: results.reduce((a, x) => a + x.result.addressMessages, 0),
    rssIdleBefore: meta.rssBefore,
    rssWithClients: meta.rssWith,
    rssPerClientKb: (meta.rssWith - meta.rssBefore) / Math.max(1, connected) / 1024,
  };
  log(`${name}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms, lost ${r.lost}, duplicates ${r.duplicates}`);
  return r;
}

/** The observer process's acknowledgement → projection lag (its GET /status); undefined when it does not say. */
async function observerLag(observer: string): Promise<{ p50: number | null; p99: number | null; samples: number } | undefined> {
  const res = await fetch(observer + '/status').catch(() => undefined);
  if (!res?.ok) return undefined;
  const s = (await res.json()) as { process?: { lag_ms?: { p50: number | null; p99: number | null; samples: number } } | null };
  return s.process?.lag_ms ?? undefined;
}

async function postTimed(url: string, body: string): Promise<{ posted: number; answered: number; status: number }> {
  const posted = now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return { posted, answered: now(), status: res.status };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  log(`options: ${JSON.stringify({ ...o, databaseUrl: undefined })}`);
  const dbName = `sp_bench_push_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const u = new URL(o.databaseUrl);
  u.pathname = '/' + dbName;
  const env: Record<string, string> = {
    DATABASE_URL: u.toString(),
    API_HOST: '127.0.0.1',
    API_PORT: '0',
    OBSERVER_PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ANON_RPM: '0',
  };
  // the log lines we wait for are info: raise the level just for them
  env.LOG_LEVEL = 'info';
  if (o.api === 2) Object.assign(env, { REDIS_URL: o.redisUrl, REDIS_KEY_PREFIX: `sp-bench-${randomBytes(4).toString('hex')}`, PUSH_REDIS_ADAPTER: o.adapter });
  const procs: Proc[] = [];
  const results: PhaseResult[] = [];
  let sampleBlock: unknown;
  let projectionLag: { p50: number | null; p99: number | null; samples: number } | undefined;
  try {
    // ---- the service
    let observer: string;
    let apiUrls: string[];
    let apiPids: number[];
    if (o.api === 1) {
      const p = await startProc([MAIN, 'serve'], env, 'API listening');
      procs.push(p);
      observer = `http://127.0.0.1:${p.observerPort}`;
      apiUrls = [`http://127.0.0.1:${p.port}`];
      apiPids = [p.child.pid!];
    } else {
      const ing = await startProc([MAIN, 'ingest'], env, 'event observer listening');
      const a1 = await startProc([MAIN, 'api'], env, 'API listening');
      const a2 = await startProc([MAIN, 'api'], env, 'API listening');
      procs.push(ing, a1, a2);
      observer = `http://127.0.0.1:${ing.port}`;
      apiUrls = [a1, a2].map((a) => `http://127.0.0.1:${a.port}`);
      apiPids = [a1.child.pid!, a2.child.pid!];
    }
    const gen = new ChainGenerator({ blocks: o.warmup + o.blocks + 2, txsPerBlock: o.txsPerBlock, seed: 'bench-push', mempool: false, microblocks: false });
    const addresses = gen.accountAddresses;
    const messages = gen.messages();
    const c = await connectClients(o, apiUrls, addresses, apiPids);
    // a probe client (outside the workers) records one real block payload for the baseline
    const probe = new WebSocket(`${apiUrls[0].replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket&subscriptions=block`);
    probe.on('message', (d) => {
      const s = d.toString();
      if (s === '2') probe.send('3');
      else if (s.startsWith('0')) probe.send('40');
      else if (s.startsWith('42["block"')) sampleBlock = (JSON.parse(s.slice(2)) as unknown[])[1];
    });
    const name = o.api === 1 ? 'service, 1 api process' : `service, ingest + 2 api processes (Redis, ${o.adapter})`;
    const serviceDrive = async function* () {
      let blocks = 0;
      for await (const m of messages) {
        const r = await postTimed(observer + m.path, m.body);
        if (r.status !== 200) throw new Error(`${m.path} answered ${r.status}`);
        if (m.path !== '/new_block' || !m.block) continue;
        blocks++;
        if (blocks > o.warmup && blocks <= o.warmup + o.blocks) yield { height: m.block.height, posted: r.posted, answered: r.answered };
        if (blocks >= o.warmup + o.blocks) break;
        await sleep(o.interval);
      }
    };
    results.push(await measure(name, o, c.workers, serviceDrive, c));
    projectionLag = await observerLag(observer);
    probe.terminate();
    await c.workers.close();
    for (const p of procs.splice(0)) await stopProc(p);

    // ---- the bare baseline, same clients, same payload size
    if (o.baseline) {
      const b = await startProc([fileURLToPath(import.meta.url), '--baseline-server'], {}, 'API listening');
      procs.push(b);
      const url = `http://127.0.0.1:${b.port}`;
      const bc = await connectClients(o, [url], addresses, [b.child.pid!]);
      const payload = sampleBlock ?? { filler: 'x'.repeat(1300) };
      const baseDrive = async function* () {
        for (let i = 1; i <= o.warmup + o.blocks; i++) {
          const r = await postTimed(url + '/emit', JSON.stringify({ payload, height: 1_000_000 + i }));
          if (i > o.warmup) yield { height: 1_000_000 + i, posted: r.posted, answered: r.answered };
          if (i < o.warmup + o.blocks) await sleep(o.interval);
        }
      };
      results.push(await measure('bare socket.io-on-uWS broadcast', o, bc.workers, baseDrive, bc));
      await bc.workers.close();
    }
  } finally {
    for (const p of procs) await stopProc(p);
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }

  // ---- report
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const lines = [
    `| run | clients | blocks | p50 ms | p99 ms | max ms | p99 from POST ms | lost | dup | RSS/client KB |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.connected}/${r.clients} | ${r.blocks} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${f(r.p99FromPost)} | ${r.lost} | ${r.duplicates} | ${f(r.rssPerClientKb)} |`,
    ),
  ];
  if (results.length === 2) {
    const [s, b] = results;
    lines.push('', `ratio service / bare: p50 ${(s.p50 / b.p50).toFixed(2)}×, p99 ${(s.p99 / b.p99).toFixed(2)}× (goal ≤ 1.25×)`);
  }
  if (projectionLag) {
    // the part of the service's latency the bare broadcast has no counterpart for: push follows the projection
    lines.push(
      `service: observer answer → projection commit p50 ${f(projectionLag.p50 ?? NaN)} ms, p99 ${f(projectionLag.p99 ?? NaN)} ms ` +
        `(the observer's GET /status, over its last ${projectionLag.samples} messages: blocks and burn blocks); the publication is built after it`,
    );
  }
  const sampleSize = sampleBlock ? JSON.stringify(sampleBlock).length : 0;
  lines.push(`block payload ${sampleSize} bytes; ${results[0]?.addressMessages ?? 0} address-room messages received in the service run`);
  process.stdout.write(lines.join('\n') + '\n');
  mkdirSync(o.out, { recursive: true });
  const file = path.join(o.out, `push-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ options: { ...o, databaseUrl: undefined }, machine: { cpus: os.cpus().length, node: process.version }, results }, null, 2));
  log(`results written to ${path.relative(process.cwd(), file)}`);
}

if (process.argv.includes('--worker')) runWorker();
else if (process.argv.includes('--baseline-server')) void runBaselineServer();
else
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
