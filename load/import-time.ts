/**
 * How long an import takes, next to what this machine can do at best (its floor), measured in the same run.
 *
 *   npm run bench:import -- --file F.tsv [--run 'name=command with {file} and {db}'] … [--floor] [--reference] [--keep]
 *
 * Each run gets a fresh, empty PostgreSQL database ({db} is its URL, {file} the file's absolute path; the command runs
 * under bash). Without --run, the run is stacks-pulse's own `import-events` into a fresh database. --floor measures
 * the floor: decoding every message with the native codec on one thread (JSON parse of each message, then every raw
 * transaction through decodeTransaction), plus a raw COPY of the file into a durable table (one lz4-compressed text
 * column). For each run it prints the wall time, its ratio to the floor, the CPU time of the command's processes and
 * of its database's backends, the peak RSS of the command's processes, and how long those processes and backends were
 * ready to run but waited for a CPU (the run queue). The machine may be shared: the CPU times say what the work cost
 * whatever the load, and the waits how much the processes of the run (and anything else on the machine) held each
 * other up on its cores.
 *
 * --reference: the reference's own `import-events` (archival mode) into a fresh database too, after the other runs, and
 * how many times longer it took than stacks-pulse's (scripts/refdiff/import.sh; the reference built as
 * scripts/refdiff/README.md says).
 *
 * --table-floor: what writing the tables an import leaves costs PostgreSQL at best, whatever computes them. The first
 * run's database is dumped (data only), and the dump restored into a fresh, migrated database (every index of the
 * schema in place, one COPY per table, one backend: `pg_restore --data-only --single-transaction`). No projector that
 * leaves these rows in this schema can be faster than that, on this machine. Needs pg_dump and pg_restore on the PATH
 * and a superuser (the restore disables the tables' triggers).
 *
 * Database: BENCH_DATABASE_URL or TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), where the
 * throw-away databases are created and dropped (--keep keeps them).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { ArgReader, createBenchDatabase, DEFAULT_ADMIN_URL, type BenchDatabase } from './bench-support.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLK_TCK = 100;
const PAGE = 4096;

interface Measured {
  name: string;
  wallS: number;
  /** user + system CPU seconds of the command and every process it waited for */
  cpuS: number;
  /** CPU seconds of the database backends serving the run (sampled) */
  dbCpuS: number;
  peakRssMb: number;
  /**
   * seconds the command's threads (waitS) and its database's backends (dbWaitS) were ready to run but waited for a
   * CPU (the run queue, /proc/<pid>/schedstat; sampled, so a thread that ended between two samples counts up to its
   * last sample): what the other processes on the same cores cost this run
   */
  waitS?: number;
  dbWaitS?: number;
  code: number | null;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** pid → parent pid, for every process now. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), Number(after[1]));
    } catch {
      // gone
    }
  }
  return out;
}

/** `root` and all its descendants now. */
function treePids(root: number): Set<number> {
  const pp = parents();
  const inTree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of pp) if (!inTree.has(pid) && inTree.has(ppid)) (inTree.add(pid), (grew = true));
  }
  return inTree;
}

/** Run-queue seconds so far of each thread of `pid` (tid → seconds), from /proc/<pid>/task/<tid>/schedstat. */
function runQueueWaits(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e9);
      } catch {
        // gone
      }
    }
  } catch {
    // gone
  }
  return out;
}

/** Keeps the largest run-queue wait seen per thread (they only grow); their sum is the total. */
class WaitSampler {
  private readonly seen = new Map<number, number>();
  add(pid: number): void {
    for (const [tid, s] of runQueueWaits(pid)) this.seen.set(tid, Math.max(this.seen.get(tid) ?? 0, s));
  }
  get total(): number {
    let t = 0;
    for (const v of this.seen.values()) t += v;
    return t;
  }
}

/** The resident memory (bytes) of these processes now. */
function rssOf(pids: Iterable<number>): number {
  let rss = 0;
  for (const pid of pids) {
    try {
      rss += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
    } catch {
      // gone
    }
  }
  return rss;
}

/** user + system CPU seconds a process has used so far (undefined once it is gone). */
function cpuOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Samples the CPU time of the backends connected to `database` until stopped (the server runs on this machine). */
function sampleBackends(admin: postgres.Sql, database: string, waits: WaitSampler): () => Promise<number> {
  const seen = new Map<number, number>();
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      try {
        const rows = await admin<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`;
        for (const r of rows) {
          const c = cpuOf(r.pid);
          if (c !== undefined) seen.set(r.pid, Math.max(seen.get(r.pid) ?? 0, c));
          waits.add(r.pid);
        }
      } catch {
        // the server may be restarting: sample again
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    let total = 0;
    for (const v of seen.values()) total += v;
    return total;
  };
}

/** Runs `command` under bash; CPU from bash's `times` (the command's processes, once waited for), RSS by sampling. */
async function measureCommand(name: string, command: string, env: NodeJS.ProcessEnv, db?: { admin: postgres.Sql; name: string }): Promise<Measured> {
  const script = `{\n${command}\n}\n__rc=$?\ntimes >&3\nexit $__rc`;
  const started = performance.now();
  const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'], env });
  let times = '';
  child.stdio[3]!.on('data', (d: Buffer) => (times += d.toString()));
  const dbWaits = new WaitSampler();
  const waits = new WaitSampler();
  const stopDb = db ? sampleBackends(db.admin, db.name, dbWaits) : async () => 0;
  let peak = 0;
  const timer = setInterval(() => {
    if (!child.pid) return;
    const pids = treePids(child.pid);
    for (const pid of pids) waits.add(pid);
    peak = Math.max(peak, rssOf(pids));
  }, 200);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const wallS = (performance.now() - started) / 1000;
  clearInterval(timer);
  const dbCpuS = await stopDb();
  // `times`: the shell's own user/system, then its children's (the command's processes)
  const lines = times.trim().split('\n');
  const cpuS = (lines[1] ?? '')
    .split(/\s+/)
    .map((t) => /(\d+)m([\d.]+)s/.exec(t))
    .reduce((s, m) => s + (m ? Number(m[1]) * 60 + Number(m[2]) : 0), 0);
  return { name, wallS, cpuS, dbCpuS, peakRssMb: peak / 1024 / 1024, waitS: waits.total, dbWaitS: db ? dbWaits.total : undefined, code };
}

/** The decode floor's work, in this process on one thread: prints what it decoded. */
async function decodeFloor(file: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const codec = require('@hirosystems/stacks-encoding-native-js') as typeof import('@hirosystems/stacks-encoding-native-js');
  let messages = 0;
  let txs = 0;
  let undecodable = 0;
  const decode = (raw: unknown) => {
    if (typeof raw !== 'string' || raw === '0x00') return; // burnchain operations carry no transaction
    try {
      codec.decodeTransaction(raw);
      txs++;
    } catch {
      undecodable++;
    }
  };
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) {
    const parts = line.split('\t');
    if (parts.length < 4) continue;
    const body = JSON.parse(parts.slice(3).join('\t')) as { transactions?: { raw_tx?: unknown }[] } | unknown[];
    messages++;
    if (Array.isArray(body)) body.forEach(decode);
    else for (const t of body?.transactions ?? []) decode(t.raw_tx);
  }
  process.stderr.write(`decode floor: ${messages} messages, ${txs} transactions decoded, ${undecodable} not decodable\n`);
}

/** A raw COPY of the file's lines into a durable table of one lz4-compressed text column, in a fresh database. */
async function copyFloor(file: string, admin: postgres.Sql, adminUrl: string, keep: boolean): Promise<Measured> {
  const db = await createBenchDatabase(adminUrl, 'sp_floor');
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    await sql`CREATE TABLE floor_copy (line text COMPRESSION lz4)`.catch(() => sql`CREATE TABLE floor_copy (line text)`);
    const dbWaits = new WaitSampler();
    const stopDb = sampleBackends(admin, db.name, dbWaits);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    // csv with a delimiter and quote that never occur in a node stream: every line is one value, taken as it is
    const writable = await sql`COPY floor_copy (line) FROM STDIN WITH (FORMAT csv, DELIMITER E'\x02', QUOTE E'\x01')`.writable();
    await pipeline(createReadStream(file), writable);
    const wallS = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const dbCpuS = await stopDb();
    return { name: 'floor: COPY', wallS, cpuS: (cpu.user + cpu.system) / 1e6, dbCpuS, peakRssMb: process.memoryUsage().rss / 1024 / 1024, dbWaitS: dbWaits.total, code: 0 };
  } finally {
    await sql.end();
    if (!keep) await db.drop();
  }
}

/**
 * The table floor (--table-floor): the rows `source` holds, dumped, then restored by COPY into a fresh migrated
 * database with every index in place; measured is the restore alone.
 */
async function restoreFloor(source: BenchDatabase, admin: postgres.Sql, adminUrl: string, keep: boolean): Promise<Measured> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sp-table-floor-'));
  const target = await createBenchDatabase(adminUrl, 'sp_tables');
  try {
    const dump = path.join(tmp, 'tables.dump');
    const dumped = spawnSync('pg_dump', ['--data-only', '--format=custom', '--file', dump, '--dbname', source.url], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (dumped.status !== 0) throw new Error(`pg_dump failed (exit ${dumped.status ?? dumped.error?.message})`);
    const main = path.join(REPO_ROOT, 'dist/src/main.js');
    const migrated = spawnSync(process.execPath, [main, 'migrate'], { env: { ...process.env, DATABASE_URL: target.url, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] });
    if (migrated.status !== 0) throw new Error(`migrate failed (exit ${migrated.status})`);
    // the rows the migrations seed come back with the dump
    const sql = postgres(target.url, { max: 1, onnotice: () => {} });
    try {
      const tables = await sql<{ t: string }[]>`
        SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = current_schema()`;
      if (tables.length) await sql.unsafe(`TRUNCATE ${tables.map((r) => r.t).join(', ')}`);
    } finally {
      await sql.end();
    }
    const command = `pg_restore --data-only --disable-triggers --single-transaction --exit-on-error --dbname ${quote(target.url)} ${quote(dump)}`;
    process.stderr.write(`table floor: ${command}\n`);
    const m = await measureCommand('floor: tables', command, process.env, { admin, name: target.name });
    if (m.code !== 0) throw new Error(`pg_restore failed (exit ${m.code})`);
    return m;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    if (!keep) await target.drop();
  }
}

function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--decode-floor') return decodeFloor(argv[1]);
  let file: string | undefined;
  const runs: { name: string; command: string }[] = [];
  let floor = false;
  let tableFloor = false;
  let keep = false;
  let reference = false;
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--file':
        file = path.resolve(args.value());
        break;
      case '--run': {
        const v = args.value();
        const eq = v.indexOf('=');
        if (eq <= 0) throw new Error(`--run: expected name=command, got "${v}"`);
        runs.push({ name: v.slice(0, eq), command: v.slice(eq + 1) });
        break;
      }
      case '--floor':
        floor = true;
        break;
      case '--table-floor':
        tableFloor = true;
        break;
      case '--keep':
        keep = true;
        break;
      case '--reference':
        reference = true;
        break;
      case '--help':
        process.stdout.write(`usage: npm run bench:import -- --file F.tsv [--run 'name=command with {file} and {db}'] … [--floor] [--table-floor] [--reference] [--keep]\n`);
        return;
      default:
        throw new Error(`unknown option ${a}`);
    }
  }
  if (!file) throw new Error('--file F.tsv is required');
  if (!existsSync(file)) throw new Error(`${file}: no such file`);
  if (!runs.length) {
    const main = path.join(REPO_ROOT, 'dist/src/main.js');
    runs.push({ name: 'stacks-pulse', command: `DATABASE_URL={db} LOG_LEVEL=warn ${quote(process.execPath)} ${quote(main)} import-events --file {file}` });
  }
  if (reference) runs.push({ name: 'reference', command: `${quote(path.join(REPO_ROOT, 'scripts/refdiff/import.sh'))} {file} {db}` });
  const adminUrl = DEFAULT_ADMIN_URL;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const results: Measured[] = [];
  let floorS: number | undefined;
  process.stderr.write(`${file}: ${(statSync(file).size / 1024 / 1024).toFixed(1)} MB\n`);
  try {
    if (floor) {
      const self = fileURLToPath(import.meta.url);
      const dec = await measureCommand('floor: decode', `${quote(process.execPath)} ${quote(self)} --decode-floor ${quote(file)}`, process.env);
      if (dec.code !== 0) throw new Error(`the decode floor failed (exit ${dec.code})`);
      const copy = await copyFloor(file, admin, adminUrl, keep);
      results.push(dec, copy);
      floorS = dec.wallS + copy.wallS;
    }
    for (const [i, r] of runs.entries()) {
      const db: BenchDatabase = await createBenchDatabase(adminUrl, 'sp_import');
      try {
        const command = r.command.replaceAll('{file}', quote(file)).replaceAll('{db}', quote(db.url));
        process.stderr.write(`${r.name}: ${command}\n`);
        const m = await measureCommand(r.name, command, process.env, { admin, name: db.name });
        results.push(m);
        if (tableFloor && i === 0 && m.code === 0) results.push(await restoreFloor(db, admin, adminUrl, keep));
      } finally {
        if (!keep) await db.drop();
      }
    }
  } finally {
    await admin.end();
  }
  const widths = [16, 9, 9, 9, 10, 10, 11, 10, 5];
  const lines = [row(['run', 'wall s', '× floor', 'CPU s', 'db CPU s', 'peak RSS', 'CPU wait s', 'db wait s', 'exit'], widths)];
  if (floorS !== undefined) lines.push(row(['floor (sum)', floorS.toFixed(1), '1.00', '', '', '', '', '', ''], widths));
  for (const m of results) {
    const ratio = floorS !== undefined && !m.name.startsWith('floor') ? (m.wallS / floorS).toFixed(2) : '';
    lines.push(
      row(
        [m.name, m.wallS.toFixed(1), ratio, m.cpuS.toFixed(1), m.dbCpuS.toFixed(1), `${m.peakRssMb.toFixed(0)} MB`, m.waitS?.toFixed(1) ?? '', m.dbWaitS?.toFixed(1) ?? '', String(m.code)],
        widths,
      ),
    );
  }
  const ours = results.find((m) => m.name === 'stacks-pulse' && m.code === 0);
  const ref = results.find((m) => m.name === 'reference' && m.code === 0);
  if (ours && ref) lines.push(`the reference's wall time is ${(ref.wallS / ours.wallS).toFixed(1)}× stacks-pulse's`);
  process.stdout.write(lines.join('\n') + '\n');
  process.stdout.write(JSON.stringify({ file, floor_s: floorS, runs: results }) + '\n');
  if (results.some((m) => m.code !== 0)) process.exitCode = 1;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`import-time: ${(err as Error).message}\n`);
  process.exit(2);
});
