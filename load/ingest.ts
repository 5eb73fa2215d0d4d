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
 * --warm N (with --self): one service process, the stream replayed N + 1 times; before each replay every table is
 * emptied (TRUNCATE, sequences keep counting). The first replay is the cold one (a freshly started process: V8 has not
 * compiled the hot paths, PostgreSQL has not planned the statements); the best of the N warm replays is what a
 * long-running service does. Both are printed.
 *
 *   npm run bench:ingest -- --self --generate 2000 [--txs-per-block 10] [--seed S] [--forks] [--no-mempool]
 *
 * --floor also replays the stream (one warm-up, then the best of max(1, --warm) runs) against the machine's floor: a uWS
 * server that parses each message's JSON and INSERTs its raw body, autocommitted, on a fresh database of the same
 * PostgreSQL (spawnFloor), and prints how close the service comes to it.
 *
 * --generate N firehoses a synthetic chain of N blocks (load/generator/; built in memory before the clock starts, so
 * signing is not measured) instead of a fixture file. The table shows count, mean, p50, p99 and max ms per path.
 */
import { createReadStream, writeFileSync, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import postgres from 'postgres';
import { ChainGenerator } from './generator/index.js';
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
  warm: number;
  floor: boolean;
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
    warm: Number(get('--warm') ?? 0),
    floor: argv.includes('--floor'),
  };
}

interface Line {
  path: string;
  body: string;
  txs: number;
}

/** A stream's lines, read again from the file on each call (a 100,000-block file is larger than one string can be). */
function fileLines(file: string): () => AsyncIterable<Line> {
  return async function* () {
    const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const l of rl) {
      if (!l.trim()) continue;
      const parts = l.split('\t');
      const body = parts.slice(3).join('\t');
      let txs = 0;
      if (parts[2] === '/new_block' || parts[2] === '/new_microblocks') txs = (JSON.parse(body) as { transactions: unknown[] }).transactions.length;
      else if (parts[2] === '/new_mempool_tx') txs = (JSON.parse(body) as unknown[]).length;
      yield { path: parts[2], body, txs };
    }
  };
}

async function generatedLines(a: Args): Promise<() => AsyncIterable<Line>> {
  const gen = new ChainGenerator({ blocks: a.generate, txsPerBlock: a.txsPerBlock, seed: a.seed, forks: a.forks, mempool: a.mempool });
  const lines: Line[] = [];
  for await (const m of gen.messages()) lines.push({ path: m.path, body: m.body, txs: m.path === '/drop_mempool_tx' ? 0 : m.txs.length });
  return async function* () {
    yield* lines;
  };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One keep-alive connection, like a node's event dispatcher (node:http: less client overhead than fetch). */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function run(url: string, lines: () => AsyncIterable<Line>) {
  const perPath = new Map<string, { n: number; total: number; max: number; all: number[] }>();
  const each: { line: number; path: string; txs: number; ms: number }[] = [];
  const started = performance.now();
  let txs = 0;
  let i = 0;
  for await (const l of lines()) {
    i++;
    const t0 = performance.now();
    const status = await post(url + l.path, l.body);
    if (status !== 200) throw new Error(`${l.path} answered ${status}`);
    const ms = performance.now() - t0;
    each.push({ line: i, path: l.path, txs: l.txs, ms: Math.round(ms * 100) / 100 });
    const s = perPath.get(l.path) ?? { n: 0, total: 0, max: 0, all: [] };
    s.all.push(ms);
    s.n++;
    s.total += ms;
    s.max = Math.max(s.max, ms);
    perPath.set(l.path, s);
    txs += l.txs;
  }
  const seconds = (performance.now() - started) / 1000;
  const slowest = each.sort((a, b) => b.ms - a.ms).slice(0, 5);
  const projection = await caughtUp(url);
  return { seconds, messages: i, txs, perPath, slowest, projection };
}

/**
 * After the last acknowledgement: how long until the projector had applied everything (ms), and its acknowledgement →
 * projection lag over the process's last 4,096 messages (the observer's GET /status). undefined for a server without
 * a projector (the floor).
 */
async function caughtUp(url: string): Promise<{ caughtUpMs: number; lagP50: number | null; lagP99: number | null; batches: number } | undefined> {
  const t0 = performance.now();
  for (;;) {
    const res = await fetch(url + '/status').catch(() => undefined);
    if (!res || res.status !== 200) return undefined;
    const s = (await res.json()) as { acknowledged_id?: number; applied_id?: number; process?: { lag_ms: { p50: number | null; p99: number | null }; batches: number } | null };
    if (s.applied_id === undefined || s.acknowledged_id === undefined) return undefined;
    if (s.applied_id >= s.acknowledged_id) {
      return { caughtUpMs: Math.round(performance.now() - t0), lagP50: s.process?.lag_ms.p50 ?? null, lagP99: s.process?.lag_ms.p99 ?? null, batches: s.process?.batches ?? 0 };
    }
    // 2 ms at first; a long catch-up (minutes on a large stream) is polled more gently, so that the polling itself
    // (each /status reads the log's position) does not slow the projection it measures: at most 1% of the wait
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(2, (performance.now() - t0) / 100))));
  }
}

function projectionLine(r: { projection?: Awaited<ReturnType<typeof caughtUp>> }): string {
  const p = r.projection;
  if (!p) return 'projection: (no projector status)';
  return `projection: caught up ${p.caughtUpMs} ms after the last acknowledgement; acknowledgement → projection lag p50 ${p.lagP50} ms, p99 ${p.lagP99} ms (last 4,096 messages of the process); ${p.batches} projector transactions so far`;
}



/**
 * The machine's floor for a durable observer (--floor): a uWS server in its own process that parses each message's JSON,
 * writes the raw body with one autocommitted INSERT (postgres.js, the same durable PostgreSQL, lz4 like event_log) and
 * answers 200 after the COMMIT. No validation, no decoding, no derived rows: no observer can answer faster here.
 */
async function spawnFloor(databaseUrl: string): Promise<{ observer: string; stop(): Promise<void> }> {
  const port = await freePort();
  const script = `
    import uWS from 'uWebSockets.js';
    import postgres from 'postgres';
    const sql = postgres(process.env.FLOOR_DB, { max: 1, onnotice: () => {} });
    await sql\`CREATE TABLE IF NOT EXISTS floor_log (id bigserial PRIMARY KEY, path text NOT NULL, body text NOT NULL)\`;
    await sql\`ALTER TABLE floor_log ALTER COLUMN body SET COMPRESSION lz4\`.catch(() => {});
    uWS.App().get('/', (res) => res.end('ok')).post('/*', (res, req) => {
      const path = req.getUrl();
      const chunks = [];
      let aborted = false;
      res.onAborted(() => (aborted = true));
      res.onData((ab, last) => {
        chunks.push(Buffer.from(ab.slice(0)));
        if (!last) return;
        const body = Buffer.concat(chunks).toString('utf8');
        JSON.parse(body);
        sql\`INSERT INTO floor_log (path, body) VALUES (\${path}, \${body})\`.then(
          () => aborted || res.cork(() => res.writeHeader('content-type', 'application/json').end('{"result":"ok"}')),
          (err) => aborted || res.cork(() => res.writeStatus('500 Internal Server Error').end(String(err))),
        );
      });
    }).listen('127.0.0.1', Number(process.env.FLOOR_PORT), (s) => { if (!s) process.exit(2); });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
    env: { PATH: process.env.PATH ?? '', FLOOR_DB: databaseUrl, FLOOR_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const observer = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`floor server exited with ${child.exitCode}`);
    try {
      if ((await fetch(observer + '/')).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('floor server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    observer,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
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

type RunResult = Awaited<ReturnType<typeof run>>;

function perPathRows(r: RunResult) {
  return [...r.perPath].map(([p, s]) => {
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
}

/** Empties every chain and push table of the bench database (not the migration record, cache version or API keys; sequences keep counting). */
async function emptyTables(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ tablename: string }[]>`
      SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'schema_functions', 'cache_version', 'api_keys')`;
    await sql.unsafe(`TRUNCATE ${rows.map((r) => `"${r.tablename}"`).join(', ')}`);
  } finally {
    await sql.end();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const lines = args.generate > 0 ? await generatedLines(args) : fileLines(args.file);
  const source = args.generate > 0 ? `generated chain: ${args.generate} blocks × ${args.txsPerBlock} txs, seed ${args.seed}${args.forks ? ', forks' : ''}` : path.basename(args.file);
  const results: RunResult[] = [];
  let cold: RunResult | undefined;
  for (let i = 0; i < Math.max(1, args.repeat); i++) {
    if (args.self) {
      const db = await createBenchDatabase();
      try {
        const service = await spawnService(db.url, args.cpuProf);
        try {
          const first = await run(service.observer, lines);
          if (args.warm > 0) {
            if (!cold || first.seconds < cold.seconds) cold = first;
            for (let w = 0; w < args.warm; w++) {
              await emptyTables(db.url);
              results.push(await run(service.observer, lines));
            }
          } else {
            results.push(first);
          }
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
  const rows = perPathRows(best);
  if (cold) {
    console.log(`source: ${source}  cold run (first replay in a fresh process)`);
    console.log(`messages: ${cold.messages}  in ${cold.seconds.toFixed(2)} s  → ${(cold.messages / cold.seconds).toFixed(0)} messages/s, ${(cold.txs / cold.seconds).toFixed(0)} txs/s`);
    console.table(perPathRows(cold));
    console.log(projectionLine(cold));
  }
  console.log(`source: ${source}  ${cold ? 'warm ' : ''}runs: ${results.length} (best shown)`);
  console.log(`messages: ${best.messages}  in ${best.seconds.toFixed(2)} s  → ${(best.messages / best.seconds).toFixed(0)} messages/s, ${(best.txs / best.seconds).toFixed(0)} txs/s`);
  console.table(rows);
  console.log(projectionLine(best));
  console.log('slowest messages of that run (line of the stream, txs):');
  console.table(best.slowest);
  let floor: RunResult | undefined;
  if (args.floor) {
    const db = await createBenchDatabase();
    try {
      const server = await spawnFloor(db.url);
      try {
        for (let w = 0; w <= Math.max(1, args.warm); w++) {
          const r = await run(server.observer, lines);
          if (w > 0 && (!floor || r.seconds < floor.seconds)) floor = r;
        }
      } finally {
        await server.stop();
      }
    } finally {
      await db.drop();
    }
    console.log(`floor (a uWS server that only parses the JSON and INSERTs the raw body, autocommit; best of ${Math.max(1, args.warm)} after one warm-up):`);
    console.log(`messages: ${floor!.messages}  in ${floor!.seconds.toFixed(2)} s  → ${(floor!.messages / floor!.seconds).toFixed(0)} messages/s`);
    console.table(perPathRows(floor!));
    console.log(`stacks-pulse reaches ${Math.round((floor!.seconds / best.seconds) * 100)}% of the floor's messages/s`);
  }
  mkdirSync('load/results', { recursive: true });
  const out = `load/results/ingest-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(out, JSON.stringify({ source, file: args.generate > 0 ? undefined : args.file, cold: cold && { seconds: cold.seconds, messages: cold.messages, txs: cold.txs, perPath: perPathRows(cold), projection: cold.projection }, runs: results.map((r) => ({ seconds: r.seconds, messages: r.messages, txs: r.txs, projection: r.projection })), perPath: rows, floor: floor && { seconds: floor.seconds, messages: floor.messages, perPath: perPathRows(floor) } }, null, 2));
  console.log(`written ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
