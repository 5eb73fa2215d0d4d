/**
 * burn_block_ordinals (sql/0107): every burn height that carries a canonical Stacks block, ranked from the bottom, so
 * /extended/v2/burn-blocks?offset=N seeks its page instead of walking N heights. After every fixture, after it is
 * delivered again, and after every block of a generated chain with forks and microblock streams, the table equals the
 * ranking computed from the blocks, and a page at every offset equals the one the plain DISTINCT … OFFSET query gives;
 * the migration's backfill equals the ingest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, expectBackfillEquals, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import { burnBlockPage } from '../../src/store/burn-blocks.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

async function maintained(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`SELECT burn_block_height || '|' || ordinal AS l FROM burn_block_ordinals ORDER BY burn_block_height`;
  return rows.map((r) => r.l);
}

/** The ranking, from the blocks (a dense rank over the distinct canonical burn heights, from 0). */
async function recomputed(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT h || '|' || (dense_rank() OVER (ORDER BY h) - 1) AS l
    FROM (SELECT burn_block_height AS h FROM blocks WHERE canonical) b
    GROUP BY h ORDER BY h`;
  return rows.map((r) => r.l);
}

const ordinals: DerivedTable<string[]> = {
  name: 'burn_block_ordinals',
  read: maintained,
  recompute: recomputed,
  // 0107 also creates the NFT owner counts' row trigger that a later migration replaces
  backfill: migrationBackfill(['burn_block_ordinals'], ['0107_read_counts.sql', '0122_nft_owner_counts_statement.sql']),
};

/** Every page of `limit` heights at every offset up to one past the end, against the plain query. */
async function pagesAgree(sql: Sql, limit: number): Promise<number> {
  const [{ n }] = await sql<{ n: number }[]>`SELECT count(DISTINCT burn_block_height)::int AS n FROM blocks WHERE canonical`;
  for (let offset = 0; offset <= n + 1; offset++) {
    const plain = await sql<{ h: number }[]>`
      SELECT DISTINCT burn_block_height::int AS h FROM blocks WHERE canonical
      ORDER BY h DESC LIMIT ${limit} OFFSET ${offset}`;
    const page = await burnBlockPage(sql, { limit, offset });
    expect(page.rows.map((r) => Number(r.burn_block_height)), `offset ${offset}`).toEqual(plain.map((r) => r.h));
  }
  return n;
}

describe('burn_block_ordinals: the ranked canonical burn heights behind /extended/v2/burn-blocks?offset', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_burn_ordinals');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: equal to the blocks' ranking after a replay and a re-delivery; pages equal the plain query; the backfill equals the ingest`, async () => {
      await checkOnFixture(db.sql, log, name, ordinals);
      await pagesAgree(db.sql, 7);
    });
  }

  it('a generated chain with forks and microblock streams: equal after every block; pages agree at every offset', async () => {
    await checkOnGeneratedChain(db.sql, log, { blocks: 60, txsPerBlock: 2, seed: 'burn-ordinals', forks: true, forkEvery: 5, forkDepth: 3, microblockEvery: 4 }, ordinals);
    // a fork took heights out and put others in: the ranks above them had to move
    const [{ n: orphanedHeights }] = await db.sql<{ n: number }[]>`
      SELECT count(DISTINCT burn_block_height)::int AS n FROM blocks b
      WHERE NOT canonical AND NOT EXISTS (SELECT 1 FROM blocks c WHERE c.canonical AND c.burn_block_height = b.burn_block_height)`;
    expect(orphanedHeights).toBeGreaterThan(0);
    expect(await pagesAgree(db.sql, 5)).toBeGreaterThan(40);
    await expectBackfillEquals(db.sql, ordinals);
  });
});
