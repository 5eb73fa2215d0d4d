/**
 * Nakamoto views and burn blocks beyond the goldens, on the replayed fuzzed-transactions-1 stream (13 Nakamoto blocks,
 * tenures 38–40, three signer signatures each) and a fork built on it: cursor paging through a tenure, signer signatures
 * after a reorg, the burn block of a fork, average block times against now(), and the migration's backfill of the
 * signatures from event_log.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sqlDir } from '../../src/store/migrate.js';
import { deliver, get } from '../helpers/http.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const lines = readFixture('fuzzed-transactions-1');
const blockMsgs: Json[] = lines.filter((l) => l.path === '/new_block').map((l) => JSON.parse(l.body));
const byHeight = new Map(blockMsgs.map((b) => [b.block_height as number, b]));
const hex = (byte: string, bytes: number) => '0x' + byte.repeat(bytes);

/** A block message on `parent` (a copy of block 12's with new hashes, no transactions). */
function forkBlock(parent: Json, o: { height: number; id: string; burnHash: string; burnHeight: number; time: number; sigs: string[]; tenure: number }): Json {
  const base = byHeight.get(12)!;
  return {
    ...base,
    block_height: o.height,
    block_hash: hex(o.id + 'b', 32),
    index_block_hash: hex(o.id + 'c', 32),
    parent_block_hash: parent.block_hash,
    parent_index_block_hash: parent.index_block_hash,
    burn_block_hash: o.burnHash,
    burn_block_height: o.burnHeight,
    burn_block_time: o.time - 5,
    block_time: o.time,
    tenure_height: o.tenure,
    signer_signature: o.sigs,
    transactions: [],
    events: [],
    matured_miner_rewards: [],
  };
}

describe('Nakamoto views on fuzzed-transactions-1', () => {
  let svc: TestService;
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: 'fuzzed-transactions-1' });
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('pages through a tenure with cursors: every block once, newest first, prev/next cursors consistent', async () => {
    const tenure39 = blockMsgs.filter((b) => b.tenure_height === 39).sort((a, b) => b.block_height - a.block_height);
    expect(tenure39.map((b) => b.block_height)).toEqual([10, 9, 8, 7, 6, 5, 4, 3]);
    // the default anchor is the chain tip, which is in tenure 40: tenure 39 starts empty (the reference's rule)
    expect((await get(svc, '/extended/v2/block-tenures/39/blocks')).body).toMatchObject({ total: 0, results: [], cursor: null });

    const seen: number[] = [];
    const pages: Json[] = [];
    let cursor: string | null = tenure39[0].index_block_hash;
    while (cursor) {
      const r = await get(svc, `/extended/v2/block-tenures/39/blocks?limit=3&cursor=${cursor}`);
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(8);
      expect(r.body.cursor).toBe(cursor);
      seen.push(...r.body.results.map((b: Json) => b.height));
      for (const b of r.body.results) expect(b.tenure_height).toBe(39);
      pages.push(r.body);
      cursor = r.body.prev_cursor;
    }
    expect(seen).toEqual([10, 9, 8, 7, 6, 5, 4, 3]);
    expect(pages.map((p) => p.results.length)).toEqual([3, 3, 2]);
    // next_cursor of a page is the cursor of the page before it
    for (let i = 1; i < pages.length; i++) expect(pages[i].next_cursor).toBe(pages[i - 1].cursor);
    expect(pages[0].next_cursor).toBeNull();

    // offset moves the start within the tenure, both ways, from the cursor
    const at7 = byHeight.get(7)!.index_block_hash;
    const older = await get(svc, `/extended/v2/block-tenures/39/blocks?limit=2&cursor=${at7}&offset=2`);
    expect(older.body.results.map((b: Json) => b.height)).toEqual([5, 4]);
    const newer = await get(svc, `/extended/v2/block-tenures/39/blocks?limit=2&cursor=${at7}&offset=-3`);
    expect(newer.body.results.map((b: Json) => b.height)).toEqual([10, 9]);
    // past either end: an empty page, and with a cursor that is the reference's "Cursor not found"
    expect((await get(svc, `/extended/v2/block-tenures/39/blocks?cursor=${at7}&offset=-4`)).status).toBe(404);
    // a cursor outside the tenure
    expect((await get(svc, `/extended/v2/block-tenures/39/blocks?cursor=${byHeight.get(12)!.index_block_hash}`)).status).toBe(404);
    // tenure 0 is the whole chain, as /extended/v2/blocks
    const all = await get(svc, '/extended/v2/block-tenures/0/blocks?limit=5');
    const v2 = await get(svc, '/extended/v2/blocks?limit=5');
    expect(all.body).toEqual(v2.body);
  });

  it('burn blocks: the Stacks blocks each carries, mean block time (truncated) and tx count', async () => {
    const r = await get(svc, '/extended/v2/burn-blocks');
    expect(r.body.total).toBe(12);
    expect(r.body.results.map((b: Json) => [b.burn_block_height, b.stacks_blocks.length, b.avg_block_time])).toEqual([
      [244, 2, 2],
      [243, 8, 3], // gaps 2,5,4,4,4,4,4: 3.86 s, printed as the reference's integer 3
      [242, 2, 1],
    ]);
    const one = await get(svc, `/extended/v2/burn-blocks/${byHeight.get(5)!.burn_block_hash.slice(2).toUpperCase()}`);
    expect(one.body.burn_block_height).toBe(243);
    expect(one.body.stacks_blocks).toEqual(r.body.results[1].stacks_blocks);
    expect(one.body.total_tx_count).toBe(10);
  });

  it('a fork: signer signatures follow the canonical block, burn blocks are rebuilt, average times use now()', async () => {
    const b11 = byHeight.get(11)!;
    const b12 = byHeight.get(12)!;
    const now = Math.floor(Date.now() / 1000);
    const burnX = hex('7e', 32);
    const sigsA = [hex('a1', 65), hex('a2', 65)];
    const sigsB = [hex('b1', 65)];
    const f12 = forkBlock(b11, { height: 12, id: 'f', burnHash: burnX, burnHeight: 245, time: now - 20, sigs: sigsA.map((s) => s.slice(2).toUpperCase()), tenure: 41 });
    const f13 = forkBlock(f12, { height: 13, id: 'e', burnHash: burnX, burnHeight: 245, time: now - 10, sigs: sigsB, tenure: 41 });
    // the sibling alone does not win (first seen at equal height); its signatures are not served
    expect((await deliver(svc, '/new_block', f12)).status).toBe(200);
    expect((await get(svc, `/extended/v2/blocks/${f12.index_block_hash}/signer-signatures`)).body).toMatchObject({ total: 0, results: [] });
    expect((await get(svc, '/extended/v2/blocks/12/signer-signatures')).body.total).toBe(3);
    // the branch grows past the tip: reorg
    expect((await deliver(svc, '/new_block', f13)).status).toBe(200);
    const at12 = await get(svc, '/extended/v2/blocks/12/signer-signatures');
    expect(at12.body).toEqual({ limit: 500, offset: 0, total: 2, results: sigsA });
    expect((await get(svc, `/extended/v2/blocks/${b12.block_hash}/signer-signatures`)).body).toMatchObject({ total: 0, results: [] });
    expect((await get(svc, `/extended/v2/blocks/${f12.block_hash}/signer-signatures?offset=1&limit=1`)).body).toEqual({
      limit: 1,
      offset: 1,
      total: 2,
      results: [sigsA[1]],
    });
    expect((await get(svc, '/extended/v2/blocks/latest/signer-signatures')).body.results).toEqual(sigsB);

    // burn blocks: the fork's burn block carries the new branch; 244 keeps only block 11
    const latest = await get(svc, '/extended/v2/burn-blocks/latest');
    expect(latest.body).toMatchObject({ burn_block_hash: burnX, burn_block_height: 245, stacks_blocks: [f13.block_hash, f12.block_hash], avg_block_time: 10, total_tx_count: 0 });
    const b244 = await get(svc, '/extended/v2/burn-blocks/244');
    expect(b244.body.stacks_blocks).toEqual([b11.block_hash]);
    expect((await get(svc, `/extended/v2/burn-blocks/${b12.burn_block_hash}/blocks`)).body).toMatchObject({ total: 1, results: [{ height: 11 }] });
    const list = await get(svc, '/extended/v2/burn-blocks?limit=2');
    expect(list.body.total).toBe(13);
    expect(list.body.results.map((b: Json) => b.burn_block_height)).toEqual([245, 244]);
    // the legacy lookup answers a canonical block of that burn block first
    expect((await get(svc, `/extended/v1/block/by_burn_block_hash/${b12.burn_block_hash}`)).body).toMatchObject({ height: 11, canonical: true });
    expect((await get(svc, `/extended/v1/block/by_burn_block_hash/${burnX}`)).body).toMatchObject({ height: 13, canonical: true });

    // tenures: the new tenure holds the tip; tenure 40 now has one canonical block but counts both stored ones
    expect((await get(svc, '/extended/v2/block-tenures/41/blocks')).body).toMatchObject({ total: 2, results: [{ height: 13 }, { height: 12 }] });
    const t40 = await get(svc, `/extended/v2/block-tenures/40/blocks?cursor=${b11.index_block_hash}`);
    expect(t40.body).toMatchObject({ total: 2, results: [{ height: 11 }] });

    // average times: only the two fresh blocks are within 30 days; the older of them has no previous block there
    expect((await get(svc, '/extended/v2/blocks/average-times')).body).toEqual({ last_1h: 10, last_24h: 10, last_7d: 10, last_30d: 10 });
  });

  it("the migration's backfill of signer signatures from event_log equals what the ingest stored", async () => {
    const sql = svc.db.sql;
    const stored = await sql`SELECT index_block_hash, signer_signatures FROM blocks ORDER BY index_block_hash`;
    expect(stored.filter((r) => r.signer_signatures?.length).length).toBe(14);
    await sql`UPDATE blocks SET signer_signatures = NULL`;
    await sql.unsafe(readFileSync(path.join(sqlDir(), '0025_nakamoto.sql'), 'utf8'));
    const backfilled = await sql`SELECT index_block_hash, signer_signatures FROM blocks ORDER BY index_block_hash`;
    expect(backfilled).toEqual(stored);
  });
});
