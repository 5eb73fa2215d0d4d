/**
 * Blocks endpoints against replayed real node streams: parameter errors, cursor paging over the whole chain,
 * agreement between the v1 and v2 forms, reorgs and microblock metadata.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { z } from 'zod';
import { parseInput } from '../../src/api/endpoint.js';
import { HeightOrHash, blockRef } from '../../src/api/schemas/params.js';
import { get } from '../helpers/http.js';

/** The router's validation of the v2 block path parameter, as a function (throws the 400 message). */
function parseHeightOrHash(raw: string) {
  const r = parseInput({ params: z.object({ height_or_hash: HeightOrHash }) }, { params: { height_or_hash: raw } });
  if (!r.ok) throw new Error(r.message);
  return blockRef((r.params as { height_or_hash: string | number }).height_or_hash);
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('parseHeightOrHash', () => {
  it('accepts latest, hashes in any case with or without 0x, and coerced integers', () => {
    expect(parseHeightOrHash('latest')).toEqual({ latest: true });
    const h = 'AB'.repeat(32);
    expect(parseHeightOrHash(h)).toEqual({ hash: '0x' + h.toLowerCase() });
    expect(parseHeightOrHash('0x' + h)).toEqual({ hash: '0x' + h.toLowerCase() });
    expect(parseHeightOrHash('12')).toEqual({ height: 12 });
  });
  it('coerces numbers as the reference does (0x10 is height 16)', () => {
    expect(parseHeightOrHash('0x10')).toEqual({ height: 16 });
  });
  it('rejects everything else with a 400 naming the parameter', () => {
    for (const bad of ['LATEST', 'latest2', 'abc', '1.5', '', '-1']) {
      expect(() => parseHeightOrHash(bad), bad).toThrow(/params\/height_or_hash/);
    }
  });
});

describe('blocks API on mocknet', () => {
  let svc: TestService;
  let tip: number;
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: 'mocknet' });
    const [t] = await svc.db.sql<{ h: number }[]>`SELECT max(block_height)::int AS h FROM blocks WHERE canonical`;
    tip = t.h;
    expect(tip).toBeGreaterThan(5);
  });
  afterAll(async () => svc?.stop());

  it('malformed parameters are 400s that name the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['/extended/v2/blocks/abc', /^params\/height_or_hash must be equal to constant/],
      ['/extended/v2/blocks/-1', /params\/height_or_hash/],
      ['/extended/v2/blocks?limit=31', /^querystring\/limit must be <= 30$/],
      ['/extended/v2/blocks?offset=-301', /^querystring\/offset must be >= -300$/],
      ['/extended/v2/blocks?offset=x', /^querystring\/offset must be integer$/],
      ['/extended/v2/blocks?cursor=0x12', /^querystring\/cursor must match pattern/],
      ['/extended/v1/block?limit=1.5', /^querystring\/limit must be integer$/],
      ['/extended/v1/block?offset=-1', /^querystring\/offset must be >= 0$/],
      ['/extended/v1/block/by_height/abc', /^params\/height must be integer$/],
      ['/extended/v1/block/by_height/-3', /^params\/height must be >= 0$/],
      ['/extended/v1/block/by_burn_block_height/1.5', /^params\/burn_block_height must be integer$/],
      ['/extended/v1/block/0xzz', /params\/hash/],
    ];
    for (const [path, msg] of cases) {
      const r = await get(svc, path);
      expect(r.status, path).toBe(400);
      expect(r.body.statusCode, path).toBe(400);
      expect(r.body.message, path).toMatch(msg);
    }
  });

  it('v2 cursor paging walks the whole chain without gaps, both ways', async () => {
    const seen: number[] = [];
    let page = await get(svc, '/extended/v2/blocks?limit=4');
    expect(page.body.total).toBe(tip);
    const first = page.body.cursor;
    for (;;) {
      expect(page.status).toBe(200);
      expect(page.body.cursor).toBe(page.body.results[0].index_block_hash);
      seen.push(...page.body.results.map((b: Json) => b.height));
      if (!page.body.prev_cursor) break;
      page = await get(svc, `/extended/v2/blocks?limit=4&cursor=${page.body.prev_cursor}`);
    }
    expect(seen).toEqual(Array.from({ length: tip }, (_, i) => tip - i));
    // and back up through next_cursor to the first page
    const up: number[] = [];
    for (;;) {
      up.push(page.body.results[0].height);
      if (!page.body.next_cursor) break;
      page = await get(svc, `/extended/v2/blocks?limit=4&cursor=${page.body.next_cursor}`);
    }
    expect(page.body.cursor).toBe(first);
    expect(up).toEqual([...up].sort((a, b) => a - b));
  });

  it('v2 offsets move relative to the cursor; unknown cursors are 404, empty pages have total 0', async () => {
    const anchor = (await get(svc, `/extended/v2/blocks/${tip - 5}`)).body;
    const r = await get(svc, `/extended/v2/blocks?limit=2&offset=1&cursor=${anchor.index_block_hash}`);
    expect(r.body.results.map((b: Json) => b.height)).toEqual([tip - 6, tip - 7]);
    const newer = await get(svc, `/extended/v2/blocks?limit=2&offset=-2&cursor=${anchor.index_block_hash}`);
    expect(newer.body.results.map((b: Json) => b.height)).toEqual([tip - 3, tip - 4]);
    const gone = await get(svc, `/extended/v2/blocks?cursor=0x${'ab'.repeat(32)}`);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toBe('Cursor not found');
    const empty = await get(svc, '/extended/v2/blocks?offset=-1');
    expect(empty.body).toMatchObject({ total: 0, results: [], cursor: null, next_cursor: null, prev_cursor: null });
  });

  it('v2 single lookups agree by height, hash, index hash (any case) and latest', async () => {
    const byHeight = await get(svc, `/extended/v2/blocks/${tip - 1}`);
    expect(byHeight.status).toBe(200);
    const b = byHeight.body;
    expect(b.height).toBe(tip - 1);
    expect(b.tenure_height).toBe(b.height); // pre-Nakamoto chain
    for (const id of [b.hash, b.index_block_hash, b.hash.slice(2), '0x' + b.index_block_hash.slice(2).toUpperCase()]) {
      expect((await get(svc, `/extended/v2/blocks/${id}`)).body, id).toEqual(b);
    }
    expect((await get(svc, '/extended/v2/blocks/latest')).body.height).toBe(tip);
    expect((await get(svc, '/extended/v2/blocks/0')).status).toBe(404);
    expect((await get(svc, `/extended/v2/blocks/${tip + 1}`)).body.message).toBe('Block not found');
  });

  it('block execution cost is the sum of its txs; tx_count counts them', async () => {
    const rows = await svc.db.sql<{ index_block_hash: string; rc: number; rt: number; n: number }[]>`
      SELECT b.index_block_hash, sum(t.execution_cost_read_count)::float8 AS rc, sum(t.execution_cost_runtime)::float8 AS rt, count(*)::int AS n
      FROM blocks b JOIN txs t ON t.index_block_hash = b.index_block_hash
      WHERE b.canonical AND b.block_height > 1 GROUP BY b.index_block_hash`;
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const b = (await get(svc, `/extended/v2/blocks/${r.index_block_hash}`)).body;
      expect(b.execution_cost_read_count).toBe(r.rc);
      expect(b.execution_cost_runtime).toBe(r.rt);
      expect(b.tx_count).toBe(r.n);
    }
  });

  it('v1 list pages cover the chain and agree with the single lookups', async () => {
    const all: Json[] = [];
    for (let offset = 0; ; offset += 7) {
      const r = await get(svc, `/extended/v1/block?limit=7&offset=${offset}`);
      expect(r.body.total).toBe(tip);
      if (!r.body.results.length) break;
      all.push(...r.body.results);
    }
    expect(all.map((b) => b.height)).toEqual(Array.from({ length: tip }, (_, i) => tip - i));
    for (const b of all) {
      const single = (await get(svc, `/extended/v1/block/${b.hash}`)).body;
      expect(single.index_block_hash).toBe(b.index_block_hash);
      expect(single.txs).toEqual(b.txs);
      expect([...single.microblocks_accepted].sort()).toEqual([...b.microblocks_accepted].sort());
      expect(single.microblock_tx_count).toEqual(b.microblock_tx_count);
      expect((await get(svc, `/extended/v1/block/by_height/${b.height}`)).body).toEqual(single);
      const v2 = (await get(svc, `/extended/v2/blocks/${b.hash}`)).body;
      if (b.height > 1) expect(single.txs.length).toBe(v2.tx_count);
    }
  });

  it('v1 by hash: bare hex redirects to the 0x form; unknown hashes are 404', async () => {
    const b = (await get(svc, '/extended/v1/block/by_height/3')).body;
    const r = await get(svc, `/extended/v1/block/${b.hash.slice(2)}`);
    expect(r.status).toBe(302);
    expect(r.location).toBe(`/extended/v1/block/${b.hash}`);
    const nf = await get(svc, `/extended/v1/block/0x${'12'.repeat(32)}`);
    expect(nf.status).toBe(404);
    expect(nf.body.message).toBe('cannot find block by hash');
    expect((await get(svc, '/extended/v1/block/by_burn_block_height/99999999')).body.message).toBe('cannot find block by height');
  });

  it('the tip block lists its unconfirmed microblock stream as streamed', async () => {
    const mbs = await svc.db.sql<{ microblock_hash: string }[]>`
      SELECT m.microblock_hash FROM microblocks m JOIN blocks b ON b.index_block_hash = m.parent_index_block_hash
      WHERE b.canonical AND b.block_height = ${tip} AND m.microblock_canonical ORDER BY m.microblock_sequence`;
    const single = (await get(svc, `/extended/v1/block/by_height/${tip}`)).body;
    expect(single.microblocks_streamed).toEqual(mbs.map((m) => m.microblock_hash));
  });
});

describe('blocks API across a reorg', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({}, { fixture: 'mainnet-reorg-scenario2' });
  });
  afterAll(async () => svc?.stop());

  it('orphaned blocks are found by v1 hash lookups (canonical false) but not by v2', async () => {
    const orphans = await svc.db.sql<{ block_hash: string; index_block_hash: string; block_height: number }[]>`
      SELECT block_hash, index_block_hash, block_height FROM blocks WHERE NOT canonical AND block_height > 0`;
    expect(orphans.length).toBeGreaterThan(0);
    for (const o of orphans) {
      const v1 = await get(svc, `/extended/v1/block/${o.block_hash}`);
      expect(v1.status).toBe(200);
      expect(v1.body.canonical).toBe(false);
      expect(v1.body.txs).toEqual([]);
      expect((await get(svc, `/extended/v2/blocks/${o.index_block_hash}`)).status).toBe(404);
      const sameHeight = (await get(svc, `/extended/v1/block/by_height/${o.block_height}`)).body;
      expect(sameHeight.canonical).toBe(true);
    }
  });

  it('accepted microblocks: sequence ascending in single lookups, descending in the list', async () => {
    const list = (await get(svc, '/extended/v1/block')).body.results as Json[];
    const withMbs = list.filter((b) => b.microblocks_accepted.length > 1);
    expect(withMbs.length).toBeGreaterThan(0);
    for (const b of withMbs) {
      const single = (await get(svc, `/extended/v1/block/${b.hash}`)).body;
      expect(single.microblocks_accepted).toEqual([...b.microblocks_accepted].reverse());
      const total = Object.values(single.microblock_tx_count as Record<string, number>).reduce((a, n) => a + n, 0);
      expect(total).toBeGreaterThan(0);
      // each accepted microblock's count is the number of its canonical txs
      for (const [hash, n] of Object.entries(single.microblock_tx_count as Record<string, number>)) {
        const [c] = await svc.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM txs WHERE microblock_hash = ${hash} AND canonical AND microblock_canonical`;
        expect(n, hash).toBe(c.n);
      }
    }
  });
});
