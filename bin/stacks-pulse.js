#!/usr/bin/env node
// Runs the compiled CLI (npm run build first; `npm start` builds when needed).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist/src/main.js');
if (!existsSync(entry)) execFileSync(process.execPath, [path.join(root, 'scripts/build-if-needed.mjs')], { stdio: 'inherit' });
await import(entry);
