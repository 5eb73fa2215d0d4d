/**
 * Ingest benchmark: replays a node event TSV against an observer sequentially, like a node (each POST waits for its
 * answer), and prints messages/s, transactions/s and mean/max ms per path.
 *
 *   npm run bench:ingest -- [--file F.tsv] [--url http://127.0.0.1:3700] [--repeat N]
 *   npm run bench:ingest -- --self     # starts the service on a fresh PostgreSQL database (TEST_DATABASE_URL)
 *
 * --self spawns `node dist/src/main.js serve` as a child process (so the service's work — push publication included —
 * never delays the load client's timers, and vice versa). --cpu-prof DIR runs that child with `node --cpu-prof`.
 *
 * With --repeat N the file is replayed N times into N fresh databases (--self) and the best run is reported.
 *
 *   npm run bench:ingest -- --self --generate 2000 [--txs-per-block 10] [--seed S] [--forks] [--no-mempool]
 *
 * --generate N firehoses a synthetic chain of N blocks (load/generate.ts; built in memory before the clock starts, so
 * signing is not measured) instead of a fixture file. The table shows count, mean, p50, p99 and max ms per path.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ChainGenerator } from './generate.js';
import { createBenchDatabase, freePort } from './bench-support.js';

interface Args {
  file: string;
  url: string;
  self: boolean;
  repeat: number;
  generate: number;
  txsPerBlock: number;
  seed: string;
  forks: boolean;
  mempool: boolean;
  cpuProf?: string;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    file: get('--file') ?? path.resolve(process.cwd(), '../shared/fixtures/events/epoch-3-transition.tsv'),
    url: get('--url') ?? 'http://127.0.0.1:3700',
    self: argv.includes('--self'),
    repeat: Number(get('--repeat') ?? 1),
    generate: Number(get('--generate') ?? 0),
    txsPerBlock: Number(get('--txs-per-block') ?? 10),
    seed: get('--seed') ?? 'bench',
    forks: argv.includes('--forks'),
    mempool: !argv.includes('--no-mempool'),
    cpuProf: get('--cpu-prof'),
  };
}

interface Line {
  path: string;
  body: string;
  txs: number;
}

function readLines(file: string): Line[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const parts = l.split('\t');
      const body = parts.slice(3).join('\t');
      let txs = 0;
      if (parts[2] === '/new_block' || parts[2] === '/new_microblocks') txs = (JSON.parse(body) as { transactions: unknown[] }).transactions.length;
      else if (parts[2] === '/new_mempool_tx') txs = (JSON.parse(body) as unknown[]).length;
      return { path: parts[2], body, txs };
    });
}

async function generatedLines(a: Args): Promise<Line[]> {
  const gen = new ChainGenerator({ blocks: a.generate, txsPerBlock: a.txsPerBlock, seed: a.seed, forks: a.forks, mempool: a.mempool });
  const lines: Line[] = [];
  for await (const m of gen.messages()) lines.push({ path: m.path, body: m.body, txs: m.path === '/drop_mempool_tx' ? 0 : m.txs.length });
  return lines;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function run(url: string, lines: Line[]) {
  const perPath = new Map<string, { n: number; total: number; max: number; all: number[] }>();
  const started = performance.now();
  let txs = 0;
  for (const l of lines) {
    const t0 = performance.now();
    const res = await fetch(url + l.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: l.body });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${l.path} answered ${res.status}`);
    const ms = performance.now() - t0;
    const s = perPath.get(l.path) ?? { n: 0, total: 0, max: 0, all: [] };
    s.all.push(ms);
    s.n++;
    s.total += ms;
    s.max = Math.max(s.max, ms);
    perPath.set(l.path, s);
    txs += l.txs;
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, messages: lines.length, txs, perPath };
}



/** `node dist/src/main.js serve` on `databaseUrl`; resolves once the observer answers GET /. */
async function spawnService(databaseUrl: string, cpuProf?: string): Promise<{ observer: string; stop(): Promise<void> }> {
  const main = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.js');
  const [observerPort, apiPort] = [await freePort(), await freePort()];
  const nodeArgs = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProf)}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, main, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      API_HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      OBSERVER_HOST: '127.0.0.1',
      OBSERVER_PORT: String(observerPort),
      LOG_LEVEL: 'silent',
      RATE_LIMIT_ANON_RPM: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const observer = `http://127.0.0.1:${observerPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${err}`);
    try {
      if ((await fetch(observer + '/')).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    observer,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const lines = args.generate > 0 ? await generatedLines(args) : readLines(args.file);
  const source = args.generate > 0 ? `generated chain: ${args.generate} blocks × ${args.txsPerBlock} txs, seed ${args.seed}${args.forks ? ', forks' : ''}` : path.basename(args.file);
  const results = [];
  for (let i = 0; i < Math.max(1, args.repeat); i++) {
    if (args.self) {
      const db = await createBenchDatabase();
      try {
        const service = await spawnService(db.url, args.cpuProf);
        try {
          results.push(await run(service.observer, lines));
        } finally {
          await service.stop();
        }
      } finally {
        await db.drop();
      }
    } else {
      results.push(await run(args.url, lines));
    }
  }
  const best = results.reduce((a, r) => (r.seconds < a.seconds ? r : a));
  const rows = [...best.perPath].map(([p, s]) => {
    const sorted = s.all.slice().sort((a, b) => a - b);
    return {
      path: p,
      count: s.n,
      mean_ms: +(s.total / s.n).toFixed(2),
      p50_ms: +percentile(sorted, 50).toFixed(2),
      p99_ms: +percentile(sorted, 99).toFixed(1),
      max_ms: +s.max.toFixed(1),
    };
  });
  console.log(`source: ${source}  runs: ${results.length} (best shown)`);
  console.log(`messages: ${best.messages}  in ${best.seconds.toFixed(2)} s  → ${(best.messages / best.seconds).toFixed(0)} messages/s, ${(best.txs / best.seconds).toFixed(0)} txs/s`);
  console.table(rows);
  mkdirSync('load/results', { recursive: true });
  const out = `load/results/ingest-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(out, JSON.stringify({ source, file: args.generate > 0 ? undefined : args.file, runs: results.map((r) => ({ seconds: r.seconds, messages: r.messages, txs: r.txs })), perPath: rows }, null, 2));
  console.log(`written ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
