// Builds dist/ with tsc when it is missing or older than any source file (used by `npm start` and bin/).
// The first build takes a while (about 2 minutes on a small machine): say so before starting, and when done.
// STACKS_PULSE_ROOT (tests only) points it at another checkout.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const root = process.env.STACKS_PULSE_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist/src/main.js');

function newest(dir) {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const missing = !existsSync(out);
const stale = missing || Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'load'))) > statSync(out).mtimeMs;
if (stale) {
  const started = Date.now();
  process.stderr.write(
    `building stacks-pulse: compiling the TypeScript sources into dist/ (${missing ? 'first start' : 'sources changed'}; ` +
      'this takes a minute or two, once) …\n',
  );
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  process.stderr.write(`built in ${Math.round((Date.now() - started) / 1000)} s; starting …\n`);
}
