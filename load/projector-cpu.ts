/**
 * What the projection costs PostgreSQL, per message, for one or more versions of the SQL functions: a precise A/B for a
 * change to sql/functions on a shared machine, where import wall times swing by a fifth from one minute to the next.
 *
 *   npm run bench:projector -- --file F.tsv [--prefix N] [--count M] [--rounds R] [--functions DIR] …
 *                              [--stats-targets T1,T2,…] [--keep]
 *
 * The first N lines of the file (default: all but the last M) are imported into a fresh database with `import-events`.
 * Then, for each round and each DIR (a folder holding `functions/*.sql`, like the repo's sql/; default: the repo's
 * own), DIR's functions are created again (committed: the database is thrown away), then one transaction applies the
 * next M lines (default 600) one message after the other as a projector batch does (derived tables deferred, then
 * derived_flush) and is rolled back, and a VACUUM (indexes included) clears what it left behind. What it reports is the
 * CPU time of that transaction's backend (read from /proc: the database must run on this machine), which the machine's
 * load changes much less than wall time, and for each DIR the median and minimum over the rounds, and the shared
 * buffers the transaction read (hits and reads, from pg_stat_database), which the load does not change at all: the
 * work done, a proxy of its CPU. The rounds alternate the DIRs, so a change in the machine's load falls on all of
 * them alike.
 *
 * --stats-targets: each DIR is measured once per statistics target, the database ANALYZEd at that
 * `default_statistics_target` before each of its rounds (what the planner's statistics change in the projection's
 * plans; the projector's own ANALYZEs sample coarsely while the database grows).
 *
 * Database: BENCH_DATABASE_URL or TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), where the
 * throw-away database is created and dropped (--keep keeps it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { ArgReader, createBenchDatabase, DEFAULT_ADMIN_URL } from './bench-support.js';
import { decodeMessage } from '../src/observer/pipeline.js';
import { applyMessage, type LoggedUpdate } from '../src/store/ingest/index.js';
import { functionFiles, sqlDir } from '../src/store/migrate.js';
import { analyzeDatabase } from '../src/store/maintenance.js';
import type { Sql } from '../src/store/sql.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** clock ticks per second of /proc/<pid>/stat (Linux) */
const CLK_TCK = 100;

class Rollback extends Error {}

/** user + system CPU ms of a process */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
  return ((Number(after[11]) + Number(after[12])) * 1000) / CLK_TCK;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function main(argv: string[]) {
  let file = '';
  let prefix: number | undefined;
  let count = 600;
  let rounds = 6;
  let keep = false;
  const dirs: string[] = [];
  let targets: (number | undefined)[] = [undefined];
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    if (a === '--file') file = path.resolve(args.value());
    else if (a === '--prefix') prefix = args.integer();
    else if (a === '--count') count = args.integer();
    else if (a === '--rounds') rounds = args.integer();
    else if (a === '--functions') dirs.push(path.resolve(args.value()));
    else if (a === '--stats-targets') targets = args.value().split(',').map((t) => Number(t));
    else if (a === '--keep') keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!file || !existsSync(file)) throw new Error('--file: a TSV file of node messages (id, time, path, body) is needed');
  if (!dirs.length) dirs.push(sqlDir());
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const start = prefix ?? Math.max(0, lines.length - count);
  const segment = lines.slice(start, start + count);
  if (!segment.length) throw new Error(`${file} has no lines after line ${start}`);
  if (targets.some((t) => t !== undefined && !(Number.isInteger(t) && t > 0 && t <= 10000))) throw new Error('--stats-targets: integers from 1 to 10000');
  const variants = dirs.flatMap((d) => {
    const files = functionFiles(d);
    if (!files.length) throw new Error(`${d}: no functions/*.sql`);
    const sql = files.map((f) => readFileSync(path.join(d, 'functions', f), 'utf8'));
    return targets.map((target) => ({ dir: d, target, sql }));
  });

  const db = await createBenchDatabase(DEFAULT_ADMIN_URL, 'sp_projcpu');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sp-projcpu-'));
  try {
    const prefixFile = path.join(tmp, 'prefix.tsv');
    writeFileSync(prefixFile, lines.slice(0, start).join('\n') + '\n');
    process.stderr.write(`importing the first ${start} lines into ${db.name}\n`);
    const main = path.join(REPO_ROOT, 'dist/src/main.js');
    const imported = spawnSync(process.execPath, [main, 'import-events', '--file', prefixFile], {
      env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (imported.status !== 0) throw new Error(`import-events failed (exit ${imported.status})`);

    // ids above the log's: the messages are applied, not logged (nothing reads the id but the results)
    const messages: LoggedUpdate[] = segment.map((line, i) => {
      const [, time, p, ...rest] = line.split('\t');
      const body = rest.join('\t');
      return { id: 1_000_000_000 + i, path: p, body, update: decodeMessage(p, body, Date.parse(time)) };
    });
    const kinds = new Map<string, number>();
    for (const m of messages) kinds.set(m.update.kind, (kinds.get(m.update.kind) ?? 0) + 1);
    process.stderr.write(`replaying lines ${start + 1}–${start + segment.length}: ${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}\n`);

    const sql = postgres(db.url, { max: 1, onnotice: () => {} }) as unknown as Sql;
    const [{ pid }] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    if (!existsSync(`/proc/${pid}/stat`)) throw new Error('the database does not run on this machine: its backend CPU cannot be read');
    // shared buffers this database's backends read (hits + reads), as the statistics system has them: flushed when
    // this backend goes idle after pg_stat_force_next_flush(), read in a new transaction (a new snapshot)
    const buffers = async () => {
      await sql`SELECT pg_stat_force_next_flush()`;
      const [b] = await sql<{ n: string }[]>`
        SELECT (blks_hit + blks_read)::text AS n FROM pg_stat_database WHERE datname = current_database()`;
      return Number(b.n);
    };
    const cpu: number[][] = variants.map(() => []);
    const bufs: number[][] = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let v = 0; v < variants.length; v++) {
        // the version's functions, committed (the database is thrown away), outside what is measured
        await sql.begin(async (tx) => {
          for (const text of variants[v].sql) await (tx as unknown as Sql).unsafe(text);
        });
        // what the previous run rolled back leaves dead rows and index entries behind: every run starts clean.
        // INDEX_CLEANUP ON: by default VACUUM skips the indexes when few pages hold dead rows, and the next run then
        // walked the dead entries of the same keys (24 more buffers per message for whichever version came second)
        await sql`VACUUM (INDEX_CLEANUP ON)`;
        const target = variants[v].target;
        if (target !== undefined) await analyzeDatabase(sql, target);
        const buffersBefore = await buffers();
        await sql
          .begin(async (tx) => {
            const t = tx as unknown as Sql;
            await t`SELECT set_config('stacks_pulse.defer_derived', 'on', true)`;
            const before = cpuMs(pid);
            for (const m of messages) await applyMessage(t, m, { fastBlocks: true });
            await t`SELECT derived_flush()`;
            cpu[v].push(cpuMs(pid) - before);
            throw new Rollback();
          })
          .catch((err: unknown) => {
            if (!(err instanceof Rollback)) throw err;
          });
        bufs[v].push((await buffers()) - buffersBefore);
      }
    }
    await (sql as unknown as { end(): Promise<void> }).end();

    const rows = variants.map((v, i) => ({
      functions: (path.relative(process.cwd(), v.dir) || '.') + (v.target === undefined ? '' : ` (statistics target ${v.target})`),
      median_ms: median(cpu[i]),
      min_ms: Math.min(...cpu[i]),
      per_message_us: Math.round((median(cpu[i]) * 1000) / messages.length),
      rounds_ms: cpu[i],
      buffers_per_message: Math.round(median(bufs[i]) / messages.length),
      rounds_buffers: bufs[i],
    }));
    const w = [Math.max(10, ...rows.map((r) => r.functions.length)) + 2, 12, 10, 16, 18];
    const pad = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('');
    const out = [pad(['functions', 'median ms', 'min ms', 'µs / message', 'buffers / message'])];
    for (const r of rows) {
      out.push(pad([r.functions, r.median_ms.toFixed(0), r.min_ms.toFixed(0), String(r.per_message_us), String(r.buffers_per_message)]));
    }
    process.stdout.write(out.join('\n') + '\n');
    process.stdout.write(JSON.stringify({ file, prefix: start, messages: messages.length, kinds: Object.fromEntries(kinds), runs: rows }) + '\n');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    if (!keep) await db.drop();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`projector-cpu: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
