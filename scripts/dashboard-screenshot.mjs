#!/usr/bin/env node
// Regenerates docs/dashboard.png: starts the service on a fresh PostgreSQL database (the test helpers'
// startTestService, TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres), opens /dashboard in headless
// Chromium (/usr/bin/chromium, or CHROMIUM_PATH), replays a fixture into the observer while watching its busiest
// address, and screenshots the page.
//
//   node scripts/dashboard-screenshot.mjs [fixture] [out.png]     (default: epoch-3-transition docs/dashboard.png)
//
// Fixtures come from STACKS_FIXTURES_DIR or ../shared/fixtures, as in the tests. Builds dist/ first when needed.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root); // the fixture helper resolves ../shared/fixtures from the working directory
const fixture = process.argv[2] ?? 'epoch-3-transition';
const out = path.resolve(root, process.argv[3] ?? 'docs/dashboard.png');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  process.exit(1);
}

// dist/ holds the compiled test helpers too (tsconfig includes test/)
execFileSync(process.execPath, [path.join(root, 'scripts/build-if-needed.mjs')], { stdio: 'inherit' });
const helper = path.join(root, 'dist/test/helpers/service.js');
if (!existsSync(helper) || statSync(helper).mtimeMs < statSync(path.join(root, 'test/helpers/service.ts')).mtimeMs) {
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
}
const { startTestService, replay } = await import(path.join(root, 'dist/test/helpers/service.js'));
const { readFixture } = await import(path.join(root, 'dist/test/helpers/fixtures.js'));
const { chromium } = await import('playwright-core');

const lines = readFixture(fixture);
const blocks = lines.flatMap((l, i) => (l.path === '/new_block' ? [{ line: i, ...JSON.parse(l.body) }] : []));
if (!blocks.length) throw new Error(`${fixture} has no block`);
const lastHeight = blocks.at(-1).block_height;

// the busiest STX transfer party
const count = new Map();
for (const b of blocks) {
  for (const e of b.events ?? []) {
    if (e.type !== 'stx_transfer_event') continue;
    for (const p of [e.stx_transfer_event.sender, e.stx_transfer_event.recipient]) count.set(p, (count.get(p) ?? 0) + 1);
  }
}
const principal = [...count.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];

const svc = await startTestService();
let browser;
try {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${svc.api}/dashboard`, { waitUntil: 'load' });
  await page.waitForFunction(() => document.getElementById('conn')?.dataset.state === 'connected', null, { timeout: 15_000 });

  const half = blocks[Math.floor(blocks.length / 2)].line;
  await replay(svc.observer, lines.slice(0, half));
  if (principal) {
    await page.fill('#watch-input', principal);
    await page.click('#watch-form button');
    await page.waitForFunction(() => /loaded/.test(document.getElementById('watch-status')?.textContent ?? ''), null, { timeout: 15_000 });
  }
  // the rest a line at a time, so the mempool chart gets points over a few seconds
  for (const l of lines.slice(half)) {
    await replay(svc.observer, [l]);
    await new Promise((r) => setTimeout(r, 25));
  }
  await page.waitForFunction((h) => document.getElementById('tip-height')?.textContent === String(h), lastHeight, { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 1000)); // last stats refresh and chart draw
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${path.relative(root, out)} (${fixture}, tip #${lastHeight}${principal ? `, watching ${principal}` : ''})`);
} finally {
  await browser?.close();
  await svc.stop();
}
