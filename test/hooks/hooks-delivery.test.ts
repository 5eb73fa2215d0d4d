/**
 * The delivery worker keeps hooks apart: receivers that never answer (each attempt waits for the full timeout) do not
 * hold back a healthy hook, even with one place per lane (HOOKS_CONCURRENCY=1). Every healthy delivery arrives, in
 * order, while the hanging ones have not even timed out once; and attempts answered together are all recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createLogger } from '../../src/logger.js';
import { HookRunner } from '../../src/hooks/runner.js';
import { insertDeliveries, insertHook, settleHook, type HookRow, type StoredPredicate } from '../../src/store/hooks.js';

const log = createLogger('silent');
let db: TestDatabase;
let server: http.Server;
let url = '';
const received = new Map<string, string[]>();
/** the hanging receivers' open requests; once `released`, they answer 503 at once */
const hung: http.ServerResponse[] = [];
let released = false;

async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function hook(name: string): Promise<HookRow> {
  const h = await insertHook(db.sql, {
    uuid: `00000000-0000-4000-8000-${(received.size + 1).toString(16).padStart(12, '0')}`,
    owner: 'test',
    name,
    version: 1,
    network: 'testnet',
    predicate: { if_this: { scope: 'stx_event', actions: ['transfer'] } } as unknown as StoredPredicate,
    url: `${url}/${name}`,
    authorization_header: null,
    secret: 'x',
  });
  await settleHook(db.sql, h!.id, 0);
  received.set(name, []);
  return h!;
}

const block = (height: number) => ({
  block_identifier: { index: height, hash: `0x${height.toString(16).padStart(64, '0')}` },
  parent_block_identifier: { index: height - 1, hash: `0x${(height - 1).toString(16).padStart(64, '0')}` },
  timestamp: 1_700_000_000 + height,
  transactions: [],
  metadata: { bitcoin_anchor_block_identifier: { index: height, hash: '0x00' }, stacks_block_hash: '0x00', block_time: 1_700_000_000 + height },
});

describe('hook delivery lanes', () => {
  beforeAll(async () => {
    db = await createTestDatabase('sp_test_hook_delivery');
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const name = (req.url ?? '/').slice(1);
        if (name.startsWith('hang')) {
          if (released) res.writeHead(503).end();
          else hung.push(res); // no answer until released
          return;
        }
        received.get(name)?.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { delivery_id: string }).delivery_id);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await db?.drop();
  });

  it('hanging receivers do not hold back a healthy hook, and every answer is recorded', async () => {
    // the hanging hooks' deliveries are the oldest: without lanes they would take the only place first
    const hanging = [await hook('hang-a'), await hook('hang-b'), await hook('hang-c')];
    const healthy = [await hook('ok-a'), await hook('ok-b')];
    const deliveries = [...hanging, ...healthy].flatMap((h) =>
      [1, 2, 3, 4, 5].map((height) => ({ hook_id: h.id, action: 'apply' as const, index_block_hash: block(height).block_identifier.hash, block_height: height, block: block(height) })),
    );
    await insertDeliveries(db.sql, deliveries);
    const ids = await db.sql<{ id: string; hook_id: string }[]>`SELECT id, hook_id FROM hook_deliveries ORDER BY id`;
    const runner = new HookRunner(db.sql, log, { maxPayloadBytes: 1 << 20, timeoutMs: 60_000, allowedHosts: [], retryMinMs: 100, retryMaxMs: 100, concurrency: 1 });
    runner.start();
    try {
      await until('the healthy hooks delivered', () => healthy.every((h) => received.get(h.name)!.length === 5), 15_000);
      // …while no hanging receiver's attempt has ended (they wait for the 60 s timeout)
      const [{ n }] = await db.sql<{ n: string }[]>`
        SELECT count(*) AS n FROM hook_attempts a JOIN hook_deliveries d ON d.id = a.delivery_id WHERE d.hook_id = ANY(${hanging.map((h) => h.id)}::bigint[])`;
      expect(Number(n)).toBe(0);
      for (const h of healthy) {
        const want = ids.filter((r) => Number(r.hook_id) === h.id).map((r) => String(r.id));
        expect(received.get(h.name)).toEqual(want);
      }
      await until('the healthy deliveries recorded', async () => {
        const rows = await db.sql<{ status: string; attempts: number }[]>`
          SELECT status, attempts FROM hook_deliveries WHERE hook_id = ANY(${healthy.map((h) => h.id)}::bigint[])`;
        return rows.length === 10 && rows.every((r) => r.status === 'delivered' && r.attempts === 1);
      });
      const [{ tries }] = await db.sql<{ tries: string }[]>`
        SELECT count(*) AS tries FROM hook_attempts a JOIN hook_deliveries d ON d.id = a.delivery_id
        WHERE d.hook_id = ANY(${healthy.map((h) => h.id)}::bigint[]) AND a.status_code = 200 AND a.error IS NULL`;
      expect(Number(tries)).toBe(10);
    } finally {
      // the hanging requests are answered so the runner stops at once
      released = true;
      for (const res of hung.splice(0)) res.writeHead(503).end();
      await runner.stop();
    }
    // the hanging hooks' first deliveries failed and wait for their retry; nothing of theirs was delivered
    const left = await db.sql<{ status: string }[]>`SELECT status FROM hook_deliveries WHERE hook_id = ANY(${hanging.map((h) => h.id)}::bigint[])`;
    expect(left.length).toBe(15);
    expect(left.every((r) => r.status === 'pending')).toBe(true);
  }, 120_000);
});
