/**
 * `npm run bench`: a short version of every load script, one after the other, each on a fresh database and service it
 * starts itself; the tables go to load/results/<date>.md (the scripts' own JSON files land beside it).
 *
 *   npm run bench                      # ingest, rest, push (when load/push exists), soak
 *   npm run bench -- --only ingest,soak
 *
 * Short versions: ingest --generate 300 blocks × 10 txs with forks; rest 3 s per endpoint; push with
 * PUSH_BENCH_ARGS (default `--self --short`); soak 30 s, 500 sockets, 200 req/s, one block per second.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist/load');

interface Step {
  name: string;
  script: string;
  args: string[];
}

const STEPS: Step[] = [
  { name: 'ingest', script: 'ingest.js', args: ['--self', '--generate', '300', '--txs-per-block', '10', '--forks', '--seed', 'bench'] },
  { name: 'rest', script: 'rest.js', args: ['--self', '--duration', '3', '--warmup', '1', '--connections', '50'] },
  { name: 'push', script: 'push.js', args: (process.env.PUSH_BENCH_ARGS ?? '--self --short').split(' ').filter(Boolean) },
  { name: 'soak', script: 'soak.js', args: ['--self', '--duration', '30', '--sockets', '500', '--rest-rate', '200', '--drain', '10'] },
];

function runStep(s: Step): Promise<{ code: number; stdout: string; stderr: string; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(DIST, s.script), ...s.args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      process.stdout.write(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr, seconds: (Date.now() - started) / 1000 }));
  });
}

async function main() {
  const i = process.argv.indexOf('--only');
  const only = i >= 0 ? (process.argv[i + 1] ?? '').split(',') : [];
  const steps = STEPS.filter((s) => !only.length || only.includes(s.name));
  const date = new Date().toISOString();
  const parts: string[] = [
    `# Benchmarks ${date}`,
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average before: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    '',
  ];
  let failed = 0;
  for (const s of steps) {
    if (!existsSync(path.join(DIST, s.script))) {
      parts.push(`## ${s.name}`, '', `skipped: dist/load/${s.script} does not exist`, '');
      continue;
    }
    process.stderr.write(`\n=== bench ${s.name}: node dist/load/${s.script} ${s.args.join(' ')}\n`);
    const r = await runStep(s);
    if (r.code !== 0) failed++;
    parts.push(
      `## ${s.name}`,
      '',
      `\`node dist/load/${s.script} ${s.args.join(' ')}\` — ${r.seconds.toFixed(0)} s, exit ${r.code}`,
      '',
      '```',
      r.stdout.trimEnd() || '(no output)',
      ...(r.code !== 0 ? ['', '--- stderr (last lines) ---', ...r.stderr.trimEnd().split('\n').slice(-15)] : []),
      '```',
      '',
    );
  }
  const dir = path.join(ROOT, 'load/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${date.slice(0, 10)}.md`);
  writeFileSync(file, parts.join('\n'));
  process.stderr.write(`\nwritten ${path.relative(process.cwd(), file)}\n`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
