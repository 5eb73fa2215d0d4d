/**
 * Hooks across a crash: the service runs as a real child process, a real receiver HTTP server holds one POST open,
 * and the service is SIGKILLed while that delivery is in flight. After the restart (and the rest of the chain, forks
 * included) every payload arrives: at least once (the one in flight again, with the same delivery id in the body and
 * the x-stacks-pulse-delivery header), in chain order, and the union of what was applied minus what was rolled back
 * equals a brute-force filter over the stored canonical chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChainGenerator } from '../../load/generator/index.js';
import { createKey } from '../../src/auth/keys.js';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/instances.js';
import { replay } from '../helpers/service.js';
import type { FixtureLine } from '../helpers/fixtures.js';

interface Post {
  header: string | undefined;
  deliveryId: string;
  apply: { hash: string; txs: string[] }[];
  rollback: { hash: string; txs: string[] }[];
}

/** Records every POST; the `holdAt`-th one is held open (never answered) until released. */
class Receiver {
  readonly posts: Post[] = [];
  holdAt = Infinity;
  readonly held: http.ServerResponse[] = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const p = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          delivery_id: string;
          apply: { block_identifier: { hash: string }; transactions: { transaction_identifier: { hash: string } }[] }[];
          rollback: { block_identifier: { hash: string }; transactions: { transaction_identifier: { hash: string } }[] }[];
        };
        const blocks = (l: typeof p.apply) => l.map((b) => ({ hash: b.block_identifier.hash, txs: b.transactions.map((t) => t.transaction_identifier.hash) }));
        const header = req.headers['x-stacks-pulse-delivery'];
        this.posts.push({ header: Array.isArray(header) ? header[0] : header, deliveryId: p.delivery_id, apply: blocks(p.apply), rollback: blocks(p.rollback) });
        if (this.posts.length === this.holdAt) {
          this.held.push(res);
          return;
        }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let build: Build;
let db: TestDatabase;
const receiver = new Receiver();
const lines: FixtureLine[] = [];

beforeAll(async () => {
  [build, db] = await Promise.all([buildService(), createTestDatabase('sp_hooks_crash'), receiver.start()]).then(([b, d]) => [b, d] as const);
  const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 6, seed: 'hooks-crash', forks: true, forkEvery: 5, forkDepth: 2 });
  for await (const m of gen.messages()) lines.push({ id: String(lines.length + 1), timestamp: '', path: m.path, body: m.body });
  expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
}, 240_000);

afterAll(async () => {
  for (const r of receiver.held) r.destroy();
  await receiver.close();
  await db?.drop();
  build?.remove();
});

describe('hooks and a SIGKILL of the service', () => {
  it('SIGKILLed mid-delivery and restarted: every payload delivered at least once, in order, nothing lost', async () => {
    const env = {
      DATABASE_URL: db.url,
      OBSERVER_PORT: String(await freePort()),
      API_PORT: String(await freePort()),
      RATE_LIMIT_ANON_RPM: '0',
      HOOKS_RETRY_MIN_MS: '100',
      HOOKS_RETRY_MAX_MS: '400',
      HOOKS_TIMEOUT_MS: '60000',
    };
    const { key } = await createKey(db.sql, 'crash-owner');
    let svc: ChildService = await spawnService(build.main, 'serve', env);
    try {
      const half = Math.floor(lines.length / 2);
      expect((await replay(svc.observer!, lines.slice(0, half))).every((s) => s === 200)).toBe(true);

      // history from block 1, then the live chain; the 4th POST is held open: the service dies with it in flight
      receiver.holdAt = 4;
      const res = await fetch(svc.api + '/extended/v1/hooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({
          chain: 'stacks',
          name: 'transfers',
          networks: { testnet: { if_this: { scope: 'stx_event', actions: ['transfer'] }, then_that: { http_post: { url: receiver.url } }, start_block: 1 } },
        }),
      });
      expect(res.status).toBe(201);
      await until('the 4th POST, held open', () => receiver.held.length === 1);
      const inFlight = receiver.posts[3].deliveryId;
      process.kill(svc.pid, 'SIGKILL');
      await until('the service died', () => {
        try {
          process.kill(svc.pid, 0);
          return false;
        } catch {
          return true;
        }
      });
      const beforeRestart = receiver.posts.length;
      expect(beforeRestart).toBe(4);

      svc = await spawnService(build.main, 'serve', env);
      // the rest of the chain, with its forks, after the restart
      expect((await replay(svc.observer!, lines.slice(half))).every((s) => s === 200)).toBe(true);
      await until('the evaluator caught up and every delivery was made', async () => {
        const [r] = await db.sql<{ journal: string; pending: string }[]>`
          SELECT (SELECT count(*) FROM hook_chain) AS journal, (SELECT count(*) FROM hook_deliveries WHERE status = 'pending') AS pending`;
        return Number(r.journal) === 0 && Number(r.pending) === 0;
      });

      // the delivery in flight at the kill came again, with the same id
      expect(receiver.posts.slice(beforeRestart).map((p) => p.deliveryId)).toContain(inFlight);
      // the idempotency key: the header and the body agree
      for (const p of receiver.posts) expect(p.header).toBe(p.deliveryId);

      // in order: after dropping the ids already processed, ids strictly increase; the state is the canonical chain's
      const held = new Map<string, Set<string>>();
      const seen = new Set<string>();
      let last = 0;
      let rollbacks = 0;
      for (const d of receiver.posts) {
        if (seen.has(d.deliveryId)) continue;
        seen.add(d.deliveryId);
        expect(Number(d.deliveryId), 'deliveries in order').toBeGreaterThan(last);
        last = Number(d.deliveryId);
        for (const b of d.rollback) {
          rollbacks++;
          const txs = held.get(b.hash);
          expect(txs, 'a rollback of a block it was sent').toBeDefined();
          for (const t of b.txs) txs!.delete(t);
          if (!txs!.size) held.delete(b.hash);
        }
        for (const b of d.apply) {
          const txs = held.get(b.hash) ?? new Set<string>();
          for (const t of b.txs) txs.add(t);
          held.set(b.hash, txs);
        }
      }
      // nothing lost: every delivery the service made reached the receiver
      const [{ n }] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM hook_deliveries`;
      expect(seen.size).toBe(Number(n));
      const brute = await db.sql<{ h: string; t: string }[]>`
        SELECT DISTINCT e.index_block_hash AS h, e.tx_id AS t FROM events e
        JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
        WHERE t.canonical AND t.microblock_canonical AND e.event_type = 'stx_asset' AND e.asset_event_type = 'transfer' AND e.block_height >= 1`;
      const expected = new Map<string, Set<string>>();
      for (const r of brute) expected.set(r.h, (expected.get(r.h) ?? new Set<string>()).add(r.t));
      const norm = (m: Map<string, Set<string>>) => [...m.entries()].map(([b, t]) => [b, [...t].sort()]).sort();
      expect(expected.size).toBeGreaterThan(10);
      expect(norm(held)).toEqual(norm(expected));
      expect(rollbacks, 'the forks after the restart were rolled back').toBeGreaterThan(0);
    } finally {
      await svc.stop();
    }
  }, 600_000);
});
