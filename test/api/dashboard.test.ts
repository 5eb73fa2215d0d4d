/**
 * GET /dashboard in a real browser: Debian's Chromium (headless, driven by playwright-core) opens the page on a fresh
 * database, a fixture is replayed into the observer, and the page must follow it over Socket.IO: tip height, last
 * 20 blocks, mempool counts, one watched address, a disconnect resumed by cursor without duplicate rows, and a reorg
 * (orphaned block marked, not dropped). Expected values come from the fixture and from the REST API after the replay.
 * Chromium must be installed at /usr/bin/chromium (.ci/run installs it): without it this test fails, it does not skip.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { readFixture, type FixtureLine } from '../helpers/fixtures.js';


interface FixtureBlock {
  line: number;
  height: number;
  index_block_hash: string;
  block_hash: string;
}

function fixtureBlocks(lines: FixtureLine[]): FixtureBlock[] {
  return lines.flatMap((l, line) => {
    if (l.path !== '/new_block') return [];
    const b = JSON.parse(l.body) as { block_height: number; index_block_hash: string; block_hash: string };
    return [{ line, height: b.block_height, index_block_hash: b.index_block_hash, block_hash: b.block_hash }];
  });
}

/** The STX transfer party with transfers in the most of the given line ranges (then the most transfers): it has
 * history before the watch starts and transfers after it. */
function busyPrincipal(lines: FixtureLine[], cuts: number[]): string {
  const score = new Map<string, { parts: Set<number>; n: number }>();
  lines.forEach((l, i) => {
    if (l.path !== '/new_block') return;
    const b = JSON.parse(l.body) as { events?: { type: string; stx_transfer_event?: { sender: string; recipient: string } }[] };
    for (const e of b.events ?? []) {
      if (e.type !== 'stx_transfer_event' || !e.stx_transfer_event) continue;
      for (const p of [e.stx_transfer_event.sender, e.stx_transfer_event.recipient]) {
        const s = score.get(p) ?? { parts: new Set<number>(), n: 0 };
        s.parts.add(cuts.filter((c) => i >= c).length);
        s.n++;
        score.set(p, s);
      }
    }
  });
  const best = [...score.entries()].sort((a, b) => b[1].parts.size - a[1].parts.size || b[1].n - a[1].n)[0];
  if (!best) throw new Error('fixture has no STX transfer');
  return best[0];
}


interface Watched {
  page: Page;
  external: string[];
  failed: string[];
  errors: string[];
  /** answers of 400 and more: url status */
  bad: string[];
}

async function openDashboard(browser: Browser, svc: TestService, hash = ''): Promise<Watched> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const origin = new URL(svc.api).origin;
  const w: Watched = { page, external: [], failed: [], errors: [], bad: [] };
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) w.external.push(r.url());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) w.bad.push(`${r.url().slice(origin.length)} ${r.status()}`);
  });
  page.on('requestfailed', (r) => w.failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('console', (m) => {
    if (m.type() === 'error') w.errors.push(m.text());
  });
  page.on('pageerror', (e) => w.errors.push(String(e)));
  const res = await page.goto(`${svc.api}/dashboard${hash}`, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  await page.waitForFunction(() => document.getElementById('conn')?.dataset.state === 'connected', null, { timeout: 120_000 });
  return w;
}

const text = (page: Page, sel: string) => page.locator(sel).innerText();
const attrs = (page: Page, sel: string, name: string) =>
  page.$$eval(sel, (els, n) => els.map((e) => e.getAttribute(n) ?? ''), name);

async function restJson<T>(svc: TestService, p: string): Promise<T> {
  const r = await fetch(svc.api + p);
  expect(r.status, p).toBe(200);
  return (await r.json()) as T;
}

describe('GET /dashboard (headless Chromium)', () => {
  let browser: Browser | undefined;
  const shotDir = mkdtempSync(path.join(os.tmpdir(), 'dashboard-test-'));

  beforeAll(async () => {
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('serves the page, its script and the vendored libraries from the API process', async () => {
    const svc = await startTestService();
    try {
      const page = await fetch(svc.api + '/dashboard');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      for (const src of ['/dashboard/app.js', '/dashboard/style.css', '/dashboard/vendor/socket.io.min.js', '/dashboard/vendor/chart.umd.min.js']) {
        expect(html).toContain(src);
        const r = await fetch(svc.api + src);
        expect(r.status, src).toBe(200);
        expect((await r.arrayBuffer()).byteLength, src).toBeGreaterThan(1000);
      }
      expect(html).not.toMatch(/https?:\/\//); // no CDN
      const slash = await fetch(svc.api + '/dashboard/');
      expect(slash.status).toBe(200);
      expect(await slash.text()).toBe(html);
      expect((await fetch(svc.api + '/dashboard/vendor/..%2f..%2fpackage.json')).status).toBe(404);
      expect((await fetch(svc.api + '/dashboard/nope.js')).status).toBe(404);
      const root = await fetch(svc.api + '/', { redirect: 'manual' });
      expect(root.status).toBe(301);
      expect(root.headers.get('location')).toBe('/extended');
    } finally {
      await svc.stop();
    }
  });

  it('follows a replay from an empty database: tip, last 20 blocks, mempool, a watched address, resume by cursor', async () => {
    const lines = readFixture('epoch-3-transition');
    const blocks = fixtureBlocks(lines);
    const last = blocks.at(-1)!;
    // three parts, cut before the blocks at 40% and 70% of the fixture's blocks
    const cut1 = blocks[Math.floor(blocks.length * 0.4)].line;
    const cut2 = blocks[Math.floor(blocks.length * 0.7)].line;
    const principal = busyPrincipal(lines, [cut1, cut2]);
    const svc = await startTestService();
    try {
      const w = await openDashboard(browser!, svc);
      const { page } = w;

      // empty database: empty states, nothing broken
      expect(await text(page, '#tip-height')).toBe('—');
      expect(await page.locator('#tip-empty').isVisible()).toBe(true);
      expect(await page.locator('#blocks-empty').isVisible()).toBe(true);
      expect(await page.locator('#blocks tr').count()).toBe(0);
      await page.waitForFunction(() => document.getElementById('mempool-counts')!.children.length > 0);
      expect(await text(page, '#mempool-total')).toBe('0');

      // first part live, then watch the address (recent history over REST), second part live
      await replay(svc.observer, lines.slice(0, cut1));
      await page.fill('#watch-input', principal);
      await page.click('#watch-form button');
      await page
        .waitForFunction(() => /recent transaction\(s\) loaded/.test(document.getElementById('watch-status')!.textContent ?? ''), null, { timeout: 120_000 })
        .catch(async (e: Error) => {
          throw new Error(`${e.message}; status: ${await text(page, '#watch-status')}; bad: ${w.bad.join(', ')}; errors: ${w.errors.join(', ')}`);
        });
      await replay(svc.observer, lines.slice(cut1, cut2));
      const tipAfterTwoThirds = Math.max(...blocks.filter((b) => b.line < cut2).map((b) => b.height));
      await page.waitForFunction((h) => document.getElementById('tip-height')!.textContent === String(h), tipAfterTwoThirds, {
        timeout: 120_000,
      });

      // disconnect, replay the rest while away, reconnect: the page resumes from its last cursor
      const cursorBefore = await page.evaluate(() => {
        const d = (window as unknown as { dashboard: { socket: { disconnect(): void }; state: { cursor: string } } }).dashboard;
        d.socket.disconnect();
        return d.state.cursor;
      });
      expect(cursorBefore).toMatch(/^\d+$/);
      expect(await page.locator('#conn').getAttribute('data-state')).toBe('disconnected');
      await replay(svc.observer, lines.slice(cut2));
      expect(await text(page, '#tip-height')).toBe(String(tipAfterTwoThirds)); // nothing arrives while disconnected
      await page.evaluate(() => (window as unknown as { dashboard: { socket: { connect(): void } } }).dashboard.socket.connect());
      await page.waitForFunction(() => document.getElementById('conn')!.dataset.state === 'resumed');
      expect(await text(page, '#conn')).toBe(`connected · resumed from cursor ${cursorBefore}`);

      // tip and block list reach the fixture's last block
      await page.waitForFunction((h) => document.getElementById('tip-height')!.textContent === String(h), last.height, {
        timeout: 120_000,
      });
      const tip = await restJson<{ chain_tip: { block_height: number; block_hash: string; burn_block_height: number } }>(svc, '/extended');
      expect(tip.chain_tip.block_height).toBe(last.height);
      expect(await text(page, '#tip-hash')).toBe(tip.chain_tip.block_hash);
      expect(await text(page, '#tip-burn-height')).toBe(String(tip.chain_tip.burn_block_height));
      const rest = await restJson<{ results: { height: number; index_block_hash: string; tx_count: number }[] }>(
        svc,
        '/extended/v2/blocks?limit=20',
      );
      expect(rest.results.length).toBe(20);
      await page.waitForFunction(
        (want) => [...document.querySelectorAll('#blocks tr[data-state="canonical"]')].map((r) => r.getAttribute('data-index-block-hash')).join() === want,
        rest.results.map((b) => b.index_block_hash).join(),
        { timeout: 120_000 },
      );
      const rowHashes = await attrs(page, '#blocks tr', 'data-index-block-hash');
      expect(new Set(rowHashes).size).toBe(rowHashes.length); // no duplicate rows after the resume
      expect(rowHashes[0]).toBe(last.index_block_hash);
      const txCounts = await page.$$eval('#blocks tr[data-state="canonical"] td.tx-count', (els) => els.map((e) => Number(e.textContent)));
      expect(txCounts).toEqual(rest.results.map((b) => b.tx_count));
      // the chart plots the same blocks
      const chart = await page.evaluate(() => {
        const c = (window as unknown as { Chart: { getChart(id: string): { data: { labels: string[]; datasets: { data: number[] }[] } } } }).Chart.getChart(
          'chart-txs',
        );
        return { labels: c.data.labels, data: c.data.datasets[0].data };
      });
      expect(chart.labels).toEqual(rest.results.map((b) => `#${b.height}`).reverse());
      expect(chart.data).toEqual(rest.results.map((b) => b.tx_count).reverse());

      // mempool counts per type equal the REST stats, after the last message
      const stats = await restJson<{ tx_type_counts: Record<string, number> }>(svc, '/extended/v1/tx/mempool/stats');
      const total = Object.values(stats.tx_type_counts).reduce((a, b) => a + b, 0);
      await page.waitForFunction((t) => document.getElementById('mempool-total')!.textContent === String(t), total);
      for (const [type, n] of Object.entries(stats.tx_type_counts)) {
        expect(await text(page, `#mempool-counts tr[data-type="${type}"] td.num`)).toBe(String(n));
      }
      const pendingIds = await attrs(page, '#mempool-txs li', 'data-tx-id');
      expect(pendingIds.length).toBeGreaterThan(0);
      expect(new Set(pendingIds).size).toBe(pendingIds.length);
      const mempoolPoints = await page.evaluate(
        () => (window as unknown as { Chart: { getChart(id: string): { data: { datasets: { data: number[] }[] } } } }).Chart.getChart('chart-mempool').data.datasets[0].data.length,
      );
      expect(mempoolPoints).toBeGreaterThan(1);

      // the watched address shows its transactions (recent history + live), once each: every tx of its asset
      // events, and nothing that does not involve it
      const events = await restJson<{ results: { tx_id: string }[] }>(svc, `/extended/v1/tx/events?address=${principal}&limit=100`);
      const want = [...new Set(events.results.map((e) => e.tx_id))];
      expect(want.length).toBeGreaterThan(10); // more than the page loads as history: the rest came live
      expect(want.length).toBeLessThan(100);
      await page.waitForFunction(
        (ids) => ids.every((id) => document.querySelector(`#watch-txs li[data-tx-id="${id}"]`)),
        want,
        { timeout: 120_000 },
      );
      const shownIds = await attrs(page, '#watch-txs li', 'data-tx-id');
      expect(new Set(shownIds).size).toBe(shownIds.length);
      for (const id of shownIds) {
        const r = await fetch(`${svc.api}/extended/v1/address/${principal}/${id}/with_transfers`);
        expect(r.status, id).toBe(200);
        await r.arrayBuffer();
      }
      const sources = await attrs(page, '#watch-txs li', 'data-source');
      expect(sources).toContain('history');
      expect(sources).toContain('push'); // the second part live, the third replayed on resume
      const balance = await restJson<{ balance: string }>(svc, `/extended/v1/address/${principal}/stx`);
      const shownBalance = (await text(page, '#watch-balance-value')).replace(/[,\s]|STX/g, '').replace('.', '');
      expect(BigInt(shownBalance)).toBe(BigInt(balance.balance));
      expect(await text(page, '#watch-balance-updates')).toMatch(/^[1-9]\d* balance update\(s\)/);
      expect(await page.evaluate(() => (window as unknown as { dashboard: { state: { duplicatesIgnored: number } } }).dashboard.state.duplicatesIgnored)).toBe(0);

      // a click on a block shows its JSON from /extended/v2/blocks/{hash}
      await page.click(`#blocks tr[data-index-block-hash="${last.index_block_hash}"]`);
      await page.waitForFunction(() => document.getElementById('block-json')!.dataset.status === '200');
      const detail = await text(page, '#block-json');
      expect(detail.split('\n')[0]).toContain(`/extended/v2/blocks/${tip.chain_tip.block_hash}`);
      const shown = JSON.parse(detail.split('\n').slice(1).join('\n')) as { height: number; index_block_hash: string };
      expect(shown.height).toBe(last.height);
      expect(shown.index_block_hash).toBe(last.index_block_hash);

      const shot = path.join(shotDir, 'dashboard-replay.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);

      expect(w.external, 'requests outside the API process').toEqual([]);
      expect(w.failed).toEqual([]);
      expect(w.errors).toEqual([]);
      await page.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('marks the orphaned block of a reorg (mainnet-reorg-scenario2) and keeps it in the list', async () => {
    const lines = readFixture('mainnet-reorg-scenario2');
    const blocks = fixtureBlocks(lines);
    const top = Math.max(...blocks.map((b) => b.height));
    const svc = await startTestService();
    try {
      const w = await openDashboard(browser!, svc);
      const { page } = w;
      // up to the first block above height 1 live, then the connection drops (transport closed, as on a network
      // failure): the client reconnects by itself and resumes from its cursor; the fork and the reorg happen meanwhile
      const firstPushed = blocks.find((b) => b.height > 1)!;
      await replay(svc.observer, lines.slice(0, firstPushed.line + 1));
      await page.waitForFunction((h) => document.getElementById('tip-height')!.textContent === String(h), firstPushed.height);
      const cursorBefore = await page.evaluate(() => {
        const d = (window as unknown as { dashboard: { socket: { io: { engine: { close(): void } } }; state: { cursor: string } } }).dashboard;
        d.socket.io.engine.close();
        return d.state.cursor;
      });
      expect(cursorBefore).toMatch(/^\d+$/);
      await page.waitForFunction(() => document.getElementById('conn')!.dataset.state === 'reconnecting');
      await replay(svc.observer, lines.slice(firstPushed.line + 1));
      await page.waitForFunction(() => document.getElementById('conn')!.dataset.state === 'resumed', null, { timeout: 120_000 });
      expect(await text(page, '#conn')).toBe(`connected · resumed from cursor ${cursorBefore}`);
      await page.waitForFunction((h) => document.getElementById('tip-height')!.textContent === String(h), top, { timeout: 120_000 });

      // which fixture blocks lost: those the REST API no longer reports as canonical at their height
      const orphaned: FixtureBlock[] = [];
      for (const b of blocks) {
        const r = await restJson<{ index_block_hash: string }>(svc, `/extended/v1/block/by_height/${b.height}`);
        if (r.index_block_hash !== b.index_block_hash) orphaned.push(b);
      }
      expect(orphaned.length).toBeGreaterThan(0);
      const canonical = blocks.filter((b) => !orphaned.includes(b) && b.height > 1); // block 1 is never pushed
      await page.waitForFunction(
        (ids) => ids.every((id) => document.querySelector(`#blocks tr[data-index-block-hash="${id}"]`)?.getAttribute('data-state') === 'orphaned'),
        orphaned.map((b) => b.index_block_hash),
        { timeout: 120_000 },
      );
      await page.waitForFunction(
        (ids) => ids.every((id) => document.querySelector(`#blocks tr[data-index-block-hash="${id}"]`)?.getAttribute('data-state') === 'canonical'),
        canonical.map((b) => b.index_block_hash),
        { timeout: 120_000 },
      );
      const orphanRow = page.locator(`#blocks tr[data-index-block-hash="${orphaned[0].index_block_hash}"]`);
      expect(await orphanRow.locator('.tag').innerText()).toBe('orphaned');
      expect(await text(page, '#reorg-note')).toMatch(/^Reorg: \d+ block\(s\) orphaned, new tip #\d+/);
      const rowHashes = await attrs(page, '#blocks tr', 'data-index-block-hash');
      expect(new Set(rowHashes).size).toBe(rowHashes.length);

      // the orphaned block's JSON is still reachable (v2 answers for canonical blocks only: the page falls back to v1)
      await orphanRow.click();
      await page.waitForFunction(() => document.getElementById('block-json')!.dataset.status === '200');
      const detail = await text(page, '#block-json');
      const shown = JSON.parse(detail.split('\n').slice(1).join('\n')) as { canonical: boolean; hash: string };
      expect(shown.hash).toBe(orphaned[0].block_hash);
      expect(shown.canonical).toBe(false);

      // an invalid principal is refused with a visible message
      await page.fill('#watch-input', 'not-an-address');
      await page.click('#watch-form button');
      await page.waitForFunction(() => document.getElementById('watch-status')!.className === 'warn');

      const shot = path.join(shotDir, 'dashboard-reorg.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      expect(w.external).toEqual([]);
      // the invalid principal's REST lookups answer 400 (Chromium logs them as failed resources): nothing else failed
      expect(w.bad.filter((b) => !/\/not-an-address\/stx 400$|address=not-an-address&limit=50 400$/.test(b))).toEqual([]);
      expect(w.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
      await page.close();
    } finally {
      await svc.stop();
    }
  }, 300_000);
});
