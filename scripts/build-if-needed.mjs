// Builds dist/ with tsc when it is missing or older than any source file (used by `npm start` and bin/).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist/src/main.js');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const stale = !existsSync(out) || Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'load'))) > statSync(out).mtimeMs;
if (stale) {
  process.stderr.write('building stacks-pulse (tsc)...\n');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], {
    stdio: 'inherit',
  });
}
