/**
 * /extended/v1/microblock (sql/0111): the page walks the newest canonical microblocks and their txs in index order
 * instead of sorting the whole microblock × tx product. On every fixture and on a generated chain with forks and
 * microblock streams (the recorded streams' orphaned microblocks and the unconfirmed stream included), every page equals the plain
 * statement's: the product joined, sorted and cut whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase, type TestDatabase, emptyChainTables } from '../helpers/db.js';
import { fixtureNames, readFixture } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import { microblockPage } from '../../src/store/microblocks.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

async function plain(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT m.microblock_hash || '|' || m.index_block_hash || '|' || t.tx_id AS l
    FROM microblocks m
    JOIN txs t ON t.microblock_hash = m.microblock_hash AND t.index_block_hash = m.index_block_hash AND t.canonical AND t.microblock_canonical
    WHERE m.canonical AND m.microblock_canonical
    ORDER BY m.block_height DESC, m.microblock_sequence DESC, t.tx_index DESC`;
  return rows.map((r) => r.l);
}

async function pagesAgree(sql: Sql): Promise<number> {
  const want = await plain(sql);
  let compared = 0;
  for (const [limit, offset] of [[20, 0], [1, 0], [7, 3], [30, 25], [200, 0], [5, Math.max(0, want.length - 2)], [5, want.length + 1]]) {
    const got = await microblockPage(sql, { limit, offset });
    // the page's rows carry the microblock's hash, and its anchor through block_hash; the tx ids identify the row
    expect(got.rows.map((r) => r.tx_id), `limit ${limit} offset ${offset}`).toEqual(want.slice(offset, offset + limit).map((l) => l.split('|')[2]));
    expect(got.rows.map((r) => r.microblock_hash)).toEqual(want.slice(offset, offset + limit).map((l) => l.split('|')[0]));
    compared += got.rows.length;
  }
  return compared;
}

describe('microblock list: bounded pages', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_microblock_list');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: every page equals the plain statement's`, async () => {
      await emptyChainTables(db.sql);
      const pipeline = testPipeline(db.sql, log);
      for (const l of readFixture(name)) expect((await applied(pipeline, l.path, l.body)).status).toBe(200);
      await pagesAgree(db.sql);
    });
  }

  it('a generated chain with forks and microblock streams: pages after every few blocks', async () => {
    await emptyChainTables(db.sql);
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 60, txsPerBlock: 6, seed: 'microblock-list', forks: true, forkEvery: 5, forkDepth: 2, microblockEvery: 2 });
    let n = 0;
    let compared = 0;
    for await (const m of gen.messages()) {
      expect((await applied(pipeline, m.path, m.body)).status).toBe(200);
      if (++n % 25 === 0) compared += await pagesAgree(db.sql);
    }
    compared += await pagesAgree(db.sql);
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
    const [{ n: streamed }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM microblocks`;
    expect(streamed).toBeGreaterThan(20);
    expect(compared).toBeGreaterThan(200);
  });
});
