/**
 * GET /docs in a real browser: Debian's Chromium (headless, driven by playwright-core) loads the page, Swagger UI
 * fetches /extended/openapi.json and renders the endpoint list. Every request the page makes must go to the API
 * process itself (no CDN). Chromium must be installed at /usr/bin/chromium (.ci/run installs it): without it this test
 * fails, it does not skip.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { allEndpoints } from '../../src/api/endpoints.js';
import { openApiPath } from '../../src/api/openapi.js';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, type TestService } from '../helpers/service.js';

describe('GET /docs (headless Chromium)', () => {
  let svc: TestService;
  let browser: Browser | undefined;

  beforeAll(async () => {
    svc = await startTestService();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('renders the endpoint list from the served OpenAPI document, with local assets only', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));

    const res = await page.goto(svc.api + '/docs', { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    // Swagger UI renders one .opblock per operation (its path in data-path) once the document is loaded
    await page.waitForSelector('.opblock .opblock-summary [data-path]', { timeout: 120_000 });

    const paths = await page.$$eval('.opblock .opblock-summary [data-path]', (els) =>
      els.map((e) => (e.getAttribute('data-path') ?? e.textContent ?? '').replace(/\u200b/g, '').trim()),
    );
    for (const p of [
      '/extended',
      '/extended/v2/blocks/{height_or_hash}',
      '/extended/v1/tx/multiple',
      '/extended/v1/tx/mempool/stats',
      '/extended/v1/address/{principal}/{tx_id}/with_transfers',
    ]) {
      expect(paths, `rendered ${p}: ${JSON.stringify(paths)} ${JSON.stringify(consoleErrors)}`).toContain(p);
    }
    // the three legacy endpoints are shown as deprecated
    const deprecated = await page.$$eval('.opblock.opblock-deprecated .opblock-summary [data-path]', (els) =>
      els.map((e) => (e.getAttribute('data-path') ?? e.textContent ?? '').replace(/\u200b/g, '').trim()),
    );
    // exactly the operations declared deprecated (src/api/endpoints.ts)
    const declared = [...new Set(allEndpoints().filter((e) => e.deprecated && !e.hidden).map((e) => openApiPath(e.path)))];
    expect([...new Set(deprecated)].sort()).toEqual(declared.sort());
    expect(deprecated).toContain('/extended/v1/block');
    // Swagger UI lists problems it finds in the document (e.g. an unsupported jsonSchemaDialect) in an errors box
    expect(await page.$$eval('.errors-wrapper, .errors', (els) => els.map((e) => e.textContent ?? ''))).toEqual([]);
    expect(await page.title()).toMatch(/stacks-pulse/);

    const origin = new URL(svc.api).origin;
    const external = requested.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'));
    expect(external, 'requests outside the API process').toEqual([]);
    expect(requested).toContain(origin + '/extended/openapi.json');
    expect(failed).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 300_000);
});
