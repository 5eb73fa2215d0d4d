/**
 * Soak: ingest, REST and push at once for a while, then checks that every subscriber got every block and that nothing
 * answered 5xx.
 *
 *   npm run build && node dist/load/soak.js --self [--duration 600] [--sockets 10000] [--rest-rate 1000]
 *        [--block-interval-ms 1000] [--txs-per-block 10] [--seed S]
 *   node dist/load/soak.js --api http://127.0.0.1:3999 --observer http://127.0.0.1:3700 ...   (a running service)
 *
 * Rates. Ingest: mainnet Stacks (Nakamoto) makes roughly one block every ~10 s (between ~5 and ~15 s depending on the
 * tenure); 10× that is one block per second, the default (--block-interval-ms 1000). Each block group is what a node
 * sends for a block: /new_mempool_tx with its transactions, /new_burn_block, /new_block (and now and then microblocks
 * and mempool drops), from the synthetic chain generator (load/generator/), each POST waiting for its answer.
 * REST: --rest-rate requests/s (default 1,000) spread over a mix of endpoints, with autocannon's overall rate.
 * Push: --sockets Socket.IO clients (default 10,000; websocket transport) subscribed to the `block` room; a client that
 * is disconnected reconnects with its last cursor (the service replays what it missed).
 *
 * Checks at the end: every client received every block pushed (each /new_block above height 1, as the block room
 * carries them) exactly once; zero 5xx and zero connection errors on REST; every observer POST answered 200.
 * Writes load/results/soak-<date>.json. Exit code 1 when a check fails.
 */
import autocannon from 'autocannon';
import { io, type Socket } from 'socket.io-client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChainGenerator, postMessage } from './generator/index.js';
import type { GeneratedMessage } from './generator/types.js';
import { ArgReader, createBenchDatabase, DEFAULT_ADMIN_URL, freePort } from './bench-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface SoakOptions {
  self: boolean;
  api: string;
  observer: string;
  duration: number;
  sockets: number;
  restRate: number;
  restConnections: number;
  blockIntervalMs: number;
  txsPerBlock: number;
  seed: string;
  databaseUrl: string;
  out: string;
  /** seconds allowed after the last block for pushes to arrive */
  drain: number;
}

function parseArgs(argv: string[]): SoakOptions {
  const o: SoakOptions = {
    self: false,
    api: 'http://127.0.0.1:3999',
    observer: 'http://127.0.0.1:3700',
    duration: 600,
    sockets: 10_000,
    restRate: 1000,
    restConnections: 50,
    blockIntervalMs: 1000,
    txsPerBlock: 10,
    seed: 'soak',
    databaseUrl: DEFAULT_ADMIN_URL,
    out: path.join(ROOT, 'load/results'),
    drain: 15,
  };
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--self': o.self = true; break;
      case '--api': o.api = args.value().replace(/\/$/, ''); break;
      case '--observer': o.observer = args.value().replace(/\/$/, ''); break;
      case '--duration': o.duration = args.number(); break;
      case '--sockets': o.sockets = args.number(); break;
      case '--rest-rate': o.restRate = args.number(); break;
      case '--rest-connections': o.restConnections = args.number(); break;
      case '--block-interval-ms': o.blockIntervalMs = args.number(); break;
      case '--txs-per-block': o.txsPerBlock = args.number(); break;
      case '--seed': o.seed = args.value(); break;
      case '--database-url': o.databaseUrl = args.value(); break;
      case '--out': o.out = path.resolve(args.value()); break;
      case '--drain': o.drain = args.number(); break;
      default:
        throw new Error(`unknown option ${a}`);
    }
  }
  return o;
}

const log = (m: string) => process.stderr.write(`[soak] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** A fresh database and the service (API + observer + push) as a child process. */
async function startSelf(o: SoakOptions): Promise<{ api: string; observer: string; stop(): Promise<void> }> {
  const db = await createBenchDatabase(o.databaseUrl, 'sp_soak');
  const [apiPort, observerPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      API_HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      OBSERVER_HOST: '127.0.0.1',
      OBSERVER_PORT: String(observerPort),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ANON_RPM: '0', // one client IP for everything
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const api = `http://127.0.0.1:${apiPort}`;
  const stop = async () => {
    if (child.exitCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    await db.drop();
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      const r = await fetch(api + '/extended');
      await r.arrayBuffer();
      if (r.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (i > 600) {
      await stop();
      throw new Error('service did not come up');
    }
    await sleep(100);
  }
  return { api, observer: `http://127.0.0.1:${observerPort}`, stop };
}

interface Subscriber {
  socket: Socket;
  blocks: Map<string, number>;
  cursor: string | undefined;
  reconnects: number;
  connected: boolean;
}

/** N Socket.IO clients on the `block` room, resuming by cursor after a disconnect. */
async function connectSubscribers(api: string, n: number): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  const batch = 250;
  for (let i = 0; i < n; i += batch) {
    const ready: Promise<void>[] = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      const sub: Subscriber = { socket: undefined as unknown as Socket, blocks: new Map(), cursor: undefined, reconnects: 0, connected: false };
      sub.socket = io(api, {
        path: '/socket.io/',
        transports: ['websocket'],
        query: { subscriptions: 'block' },
        auth: (cb: (d: object) => void) => cb(sub.cursor ? { cursor: sub.cursor } : {}),
        reconnectionDelay: 500,
        reconnectionDelayMax: 5000,
        timeout: 60_000,
      });
      sub.socket.on('block', (block: { hash?: string; index_block_hash?: string }, cursor?: string) => {
        const key = block.index_block_hash ?? block.hash ?? '?';
        sub.blocks.set(key, (sub.blocks.get(key) ?? 0) + 1);
        if (typeof cursor === 'string') sub.cursor = cursor;
      });
      sub.socket.io.on('reconnect', () => sub.reconnects++);
      ready.push(
        new Promise<void>((resolve, reject) => {
          sub.socket.once('connect', () => {
            sub.connected = true;
            resolve();
          });
          sub.socket.once('connect_error', (err) => reject(new Error(`socket ${j}: ${err.message}`)));
        }),
      );
      subs.push(sub);
    }
    await Promise.all(ready);
    if ((i / batch) % 8 === 0) log(`${Math.min(n, i + batch)} sockets connected`);
  }
  return subs;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Groups generated messages into "what a node sends per block" (everything up to and including a /new_block). */
function blockGroups(messages: GeneratedMessage[]): GeneratedMessage[][] {
  const groups: GeneratedMessage[][] = [];
  let cur: GeneratedMessage[] = [];
  for (const m of messages) {
    cur.push(m);
    if (m.path === '/new_block') {
      groups.push(cur);
      cur = [];
    }
  }
  if (cur.length) groups.push(cur);
  return groups;
}

export interface SoakResult {
  ok: boolean;
  seconds: number;
  ingest: { blocks: number; messages: number; non200: number; p50: number; p99: number; max: number; behindMs: number };
  rest: { requests: number; rps: number; p50: number; p99: number; s5xx: number; non2xx: number; errors: number; timeouts: number };
  push: { sockets: number; expectedBlocks: number; complete: number; missing: number; duplicates: number; reconnects: number };
  failures: string[];
}

export async function soak(o: SoakOptions): Promise<SoakResult> {
  let self: Awaited<ReturnType<typeof startSelf>> | undefined;
  if (o.self) {
    self = await startSelf(o);
    o.api = self.api;
    o.observer = self.observer;
  }
  const subs: Subscriber[] = [];
  try {
    const blocksNeeded = Math.max(3, Math.ceil((o.duration * 1000) / o.blockIntervalMs));
    log(`generating ${blocksNeeded} blocks × ${o.txsPerBlock} txs (seed ${o.seed})`);
    const gen = new ChainGenerator({ blocks: blocksNeeded, txsPerBlock: o.txsPerBlock, seed: o.seed, forks: true, forkEvery: 100 });
    const messages: GeneratedMessage[] = [];
    for await (const m of gen.messages()) messages.push(m);
    const groups = blockGroups(messages);
    // the first block (height 1) is the genesis replay: nothing is pushed for it
    for (const m of groups[0]) await postMessage(o.observer, m);

    log(`connecting ${o.sockets} sockets to ${o.api}`);
    subs.push(...(await connectSubscribers(o.api, o.sockets)));

    // REST: a mix of endpoints at the target overall rate
    const tip = groups[0].find((m) => m.block)!;
    const anyTx = groups[0].flatMap((m) => m.txs)[0];
    const requests = [
      '/extended/v2/blocks/latest',
      '/extended/v1/block?limit=30',
      '/extended/v1/tx/mempool/stats',
      `/extended/v1/tx/${anyTx.txId}`,
      `/extended/v2/blocks/${tip.block!.height}`,
      '/extended/v1/tx/mempool?limit=30',
      `/extended/v1/address/${gen.accountAddresses[0]}/stx`,
      '/extended',
    ].map((p) => ({ method: 'GET' as const, path: p }));
    const started = Date.now();
    const restDone = new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        { url: o.api, connections: o.restConnections, duration: o.duration, overallRate: o.restRate || undefined, requests },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
    });

    // ingest, paced: one block group per interval
    const lat: number[] = [];
    let non200 = 0;
    let sentMessages = groups[0].length;
    let pushedBlocks = 0;
    let behindMs = 0;
    for (let g = 1; g < groups.length; g++) {
      const due = started + (g - 1) * o.blockIntervalMs;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      else behindMs = Math.max(behindMs, -wait);
      if (Date.now() - started > o.duration * 1000) break;
      for (const m of groups[g]) {
        const t0 = performance.now();
        const status = await postMessage(o.observer, m);
        lat.push(performance.now() - t0);
        if (status !== 200) non200++;
        sentMessages++;
        if (m.block && m.block.height > 1) pushedBlocks++;
      }
    }
    const rest = await restDone;
    log(`ingest done (${pushedBlocks} blocks pushed); draining up to ${o.drain} s`);
    const drainUntil = Date.now() + o.drain * 1000;
    const complete = () => subs.filter((s) => s.blocks.size >= pushedBlocks).length;
    while (Date.now() < drainUntil && complete() < subs.length) await sleep(250);
    const seconds = (Date.now() - started) / 1000;

    const sortedLat = lat.slice().sort((a, b) => a - b);
    const missing = subs.filter((s) => s.blocks.size < pushedBlocks).length;
    const duplicates = subs.filter((s) => [...s.blocks.values()].some((n) => n > 1)).length;
    const s5xx = (rest as unknown as { '5xx'?: number })['5xx'] ?? 0;
    const failures: string[] = [];
    if (missing) failures.push(`${missing} of ${subs.length} subscribers missed blocks`);
    if (duplicates) failures.push(`${duplicates} subscribers got a block twice`);
    if (s5xx) failures.push(`${s5xx} REST answers were 5xx`);
    if (rest.errors || rest.timeouts) failures.push(`REST: ${rest.errors} errors, ${rest.timeouts} timeouts`);
    if (non200) failures.push(`${non200} observer POSTs did not answer 200`);
    return {
      ok: failures.length === 0,
      seconds,
      ingest: {
        blocks: pushedBlocks,
        messages: sentMessages,
        non200,
        p50: +percentile(sortedLat, 50).toFixed(2),
        p99: +percentile(sortedLat, 99).toFixed(1),
        max: +(sortedLat[sortedLat.length - 1] ?? 0).toFixed(1),
        behindMs: Math.round(behindMs),
      },
      rest: {
        requests: rest.requests.total,
        rps: Math.round(rest.requests.average),
        p50: rest.latency.p50,
        p99: rest.latency.p99,
        s5xx,
        non2xx: rest.non2xx,
        errors: rest.errors,
        timeouts: rest.timeouts,
      },
      push: {
        sockets: subs.length,
        expectedBlocks: pushedBlocks,
        complete: subs.length - missing,
        missing,
        duplicates,
        reconnects: subs.reduce((a, s) => a + s.reconnects, 0),
      },
      failures,
    };
  } finally {
    for (const s of subs) s.socket.disconnect();
    await self?.stop();
  }
}

export function soakTable(r: SoakResult): string {
  const rows = [
    ['ingest', `${r.ingest.blocks} blocks, ${r.ingest.messages} messages`, `p50 ${r.ingest.p50} ms, p99 ${r.ingest.p99} ms, max ${r.ingest.max} ms`, `non-200: ${r.ingest.non200}, max behind schedule ${r.ingest.behindMs} ms`],
    ['REST', `${r.rest.requests} requests, ${r.rest.rps} req/s`, `p50 ${r.rest.p50} ms, p99 ${r.rest.p99} ms`, `5xx: ${r.rest.s5xx}, non-2xx: ${r.rest.non2xx}, errors: ${r.rest.errors}, timeouts: ${r.rest.timeouts}`],
    ['push', `${r.push.sockets} sockets × ${r.push.expectedBlocks} blocks`, `${r.push.complete} complete`, `missing: ${r.push.missing}, duplicates: ${r.push.duplicates}, reconnects: ${r.push.reconnects}`],
  ];
  const head = ['part', 'volume', 'latency', 'errors'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const line = (c: string[]) => '| ' + c.map((x, i) => x.padEnd(w[i])).join(' | ') + ' |';
  return [line(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...rows.map(line)].join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  log(`${o.duration} s, ${o.sockets} sockets, ${o.restRate} req/s REST, one block per ${o.blockIntervalMs} ms, ${os.cpus().length} CPUs`);
  const r = await soak(o);
  process.stdout.write(soakTable(r) + '\n');
  process.stdout.write(r.ok ? 'soak: all checks passed\n' : `soak: FAILED: ${r.failures.join('; ')}\n`);
  mkdirSync(o.out, { recursive: true });
  const file = path.join(o.out, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), options: { ...o, databaseUrl: undefined }, machine: { cpus: os.cpus().length, loadavg: os.loadavg() }, ...r }, null, 2) + '\n');
  log(`written ${path.relative(process.cwd(), file)}`);
  process.exit(r.ok ? 0 : 1);
}

if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  main().catch((err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    process.exit(1);
  });
}
