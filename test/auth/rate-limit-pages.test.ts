// Rate limits never stand between a person and the service's own pages: static assets (dashboard, docs, OpenAPI
// document) are not rate limited, RATE_LIMIT_EXEMPT exempts trusted networks, and the dashboard shows a 429 of its API
// calls as a banner with the retry time (in Chromium).
import { describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.js';
import { launchChromium } from '../helpers/browser.js';
import { AccessControl, isStaticAsset } from '../../src/auth/access.js';
import { MemoryRateLimiter } from '../../src/auth/rate-limit.js';

async function statuses(base: string, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(base + path);
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe('static assets and exempt networks', () => {
  it('the dashboard files, docs and OpenAPI document are never rate limited; the API is', async () => {
    const svc = await startTestService({ RATE_LIMIT_ANON_RPM: '2', RATE_LIMIT_EXEMPT: 'none' });
    try {
      for (const p of ['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/style.css', '/docs', '/extended/openapi.json', '/extended/openapi.yaml']) {
        expect(await statuses(svc.api, p, 4), p).toEqual([200, 200, 200, 200]);
      }
      expect(await statuses(svc.api, '/extended', 3)).toEqual([200, 200, 429]);
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('RATE_LIMIT_EXEMPT: clients in those networks are not limited, others are', async () => {
    const exempt = await startTestService({ RATE_LIMIT_ANON_RPM: '1', RATE_LIMIT_EXEMPT: '127.0.0.1/8,::1/128' });
    const other = await startTestService({ RATE_LIMIT_ANON_RPM: '1', RATE_LIMIT_EXEMPT: '10.0.0.0/8' });
    try {
      expect(await statuses(exempt.api, '/extended', 4)).toEqual([200, 200, 200, 200]);
      expect(await statuses(other.api, '/extended', 2)).toEqual([200, 429]);
    } finally {
      await Promise.all([exempt.stop(), other.stop()]);
    }
  }, 300_000);

  it('unit: networks and paths', async () => {
    const a = new AccessControl({ anonRpm: 1, keyRpm: 1, trustProxy: false, limiter: new MemoryRateLimiter(), keys: undefined, exempt: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.7'] });
    for (const ip of ['10.1.2.3', '::ffff:10.9.9.9', '2001:db8::1', '192.168.1.7']) expect(a.isExempt(ip), ip).toBe(true);
    for (const ip of ['11.0.0.1', '192.168.1.8', '2001:db9::1', 'garbage']) expect(a.isExempt(ip), ip).toBe(false);
    expect((await a.check('10.0.0.1', undefined)).allowed && (await a.check('10.0.0.1', undefined)).allowed).toBe(true);
    expect(isStaticAsset('/dashboard/vendor/socket.io.min.js')).toBe(true);
    expect(isStaticAsset('/dashboards')).toBe(false);
    expect(isStaticAsset('/extended/v1/tx/mempool')).toBe(false);
  });
});

describe('dashboard on a 429', () => {
  it('loads, and shows a banner with the retry time instead of a raw JSON page', async () => {
    const svc = await startTestService({ RATE_LIMIT_ANON_RPM: '2', RATE_LIMIT_EXEMPT: 'none' });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const res = await page.goto(svc.api + '/dashboard', { waitUntil: 'load' });
      expect(res?.status()).toBe(200);
      expect(await page.title()).toBe('stacks-pulse dashboard');
      const banner = page.locator('#rate-limit');
      await banner.waitFor({ state: 'visible', timeout: 120_000 });
      expect(await banner.textContent()).toMatch(/rate limiting this browser \(HTTP 429\).*Retrying in \d+ s/);
      expect(Number(await banner.getAttribute('data-retry-in'))).toBeGreaterThan(0);
      // the rest of the page is there
      expect(await page.locator('#blocks-panel').isVisible()).toBe(true);
      // the chain panel says why it is empty instead of waiting for a block it was refused
      expect(await page.locator('#tip-empty').textContent()).toMatch(/rate limited.*Retrying in \d+ s/);
      // nothing sticks out of the header or the banner, however long the server's message
      const overflow = await page.evaluate(() => {
        const over = (sel: string) => {
          const el = document.querySelector(sel) as HTMLElement;
          return el.scrollWidth > el.clientWidth;
        };
        return { header: over('header'), banner: over('#rate-limit'), page: document.documentElement.scrollWidth > window.innerWidth };
      });
      expect(overflow).toEqual({ header: false, banner: false, page: false });
    } finally {
      await browser.close();
      await svc.stop();
    }
  }, 300_000);
});
