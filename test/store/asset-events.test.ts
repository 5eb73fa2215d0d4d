/**
 * /extended/v1/address/{principal}/assets (sql/0110): `total` from the maintained per-principal count and the page
 * from each arm's newest rows. On every fixture and on a generated chain with forks and microblock streams (the
 * unconfirmed stream included), for the principals with the most asset events, every page, total and height cut
 * equals the plain statement (the reference's: every STX/FT/NFT event the principal sent or received and every STX
 * lock of its address, counted and sorted whole). The counts equal the canonical history after every block, after a
 * re-delivery and after their backfill.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, expectBackfillEquals, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import { principalAssetEvents } from '../../src/store/principal-txs.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

/** The plain statement: every asset event of the principal up to the height, as the route prints them, in order. */
async function plain(sql: Sql, p: string, maxHeight: number): Promise<string[]> {
  const rows = await sql<{ api: unknown }[]>`
    SELECT e.api FROM events e JOIN txs t USING (tx_id, index_block_hash, microblock_hash)
    WHERE e.canonical AND e.microblock_canonical AND e.block_height <= ${maxHeight}
      AND ((e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
            AND (e.sender = ${p} OR e.recipient = ${p}))
        OR (e.event_type = 'stx_lock' AND e.locked_address = ${p}))
    ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC`;
  return rows.map((r) => JSON.stringify(r.api));
}

async function countsNow(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`SELECT principal || '|' || n AS l FROM asset_event_counts WHERE n <> 0 ORDER BY 1`;
  return rows.map((r) => r.l);
}

/** The counts from the canonical anchored history: each event once per distinct principal among its roles. */
async function countsFromHistory(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT p || '|' || count(*) AS l FROM (
      SELECT DISTINCT e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index, x.p
      FROM events e
      CROSS JOIN LATERAL (VALUES (CASE WHEN e.event_type = 'stx_lock' THEN NULL ELSE e.sender END),
                                 (CASE WHEN e.event_type = 'stx_lock' THEN NULL ELSE e.recipient END),
                                 (CASE WHEN e.event_type = 'stx_lock' THEN e.locked_address END)) x(p)
      WHERE e.canonical AND e.microblock_canonical AND e.index_block_hash <> '' AND x.p IS NOT NULL
        AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset', 'stx_lock')
    ) d GROUP BY p ORDER BY 1`;
  return rows.map((r) => r.l);
}

const assetEventCounts: DerivedTable<string[]> = {
  name: 'asset_event_counts',
  read: countsNow,
  recompute: countsFromHistory,
  backfill: migrationBackfill(['asset_event_counts'], ['0110_asset_event_counts.sql']),
};

/** Pages, totals and height cuts of the busiest principals against the plain statement; returns the rows compared. */
async function pagesAgree(sql: Sql): Promise<number> {
  const [{ tip }] = await sql<{ tip: number }[]>`SELECT COALESCE(max(block_height), 0)::int AS tip FROM blocks WHERE canonical`;
  const busiest = await sql<{ p: string }[]>`
    (SELECT principal AS p FROM asset_event_counts ORDER BY n DESC, principal LIMIT 4)
    UNION
    -- a principal with STX locks, where the chain has any
    (SELECT locked_address FROM events WHERE event_type = 'stx_lock' AND canonical ORDER BY block_height DESC, locked_address LIMIT 1)
    UNION
    -- one of the unconfirmed stream, where there is one
    (SELECT sender FROM events WHERE index_block_hash = '' AND sender IS NOT NULL AND canonical AND microblock_canonical
      ORDER BY event_index LIMIT 1)`;
  let compared = 0;
  for (const { p } of busiest) {
    for (const maxHeight of [tip, tip + 1, Math.floor(tip / 2), 1]) {
      const want = await plain(sql, p, maxHeight);
      for (const [limit, offset] of [[20, 0], [3, 0], [3, 4], [100, 1], [5, Math.max(0, want.length - 2)], [5, want.length], [5, want.length + 3]]) {
        const got = await principalAssetEvents(sql, p, maxHeight, { limit, offset });
        const page = want.slice(offset, offset + limit);
        const label = `${p} ≤ ${maxHeight} limit ${limit} offset ${offset}`;
        expect(got.rows.map((r) => JSON.stringify(r.api)), label).toEqual(page);
        expect(got.total, label).toBe(page.length ? want.length : 0);
        compared += page.length;
      }
    }
  }
  return compared;
}

describe('assets: maintained counts and bounded pages', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_asset_events');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: pages and totals equal the plain statement; counts equal the history, after a re-delivery and their backfill`, async () => {
      await checkOnFixture(db.sql, log, name, assetEventCounts);
      expect(await pagesAgree(db.sql)).toBeGreaterThan(0);
    });
  }

  it('a generated chain with forks and microblock streams: counts after every block, pages with the unconfirmed stream', async () => {
    let unconfirmedSeen = false;
    // the pages, once, while the unconfirmed stream has asset events
    const onMessage = async (m: { path: string }) => {
      if (m.path !== '/new_microblocks' || unconfirmedSeen) return;
      const [{ n }] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM events WHERE index_block_hash = '' AND canonical AND microblock_canonical AND sender IS NOT NULL`;
      if (n > 0) {
        unconfirmedSeen = true;
        expect(await pagesAgree(db.sql)).toBeGreaterThan(0);
      }
    };
    const gen = { blocks: 50, txsPerBlock: 8, seed: 'assets', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 3 };
    await checkOnGeneratedChain(db.sql, log, gen, assetEventCounts, { onMessage });
    expect(unconfirmedSeen).toBe(true);
    expect(await pagesAgree(db.sql)).toBeGreaterThan(50);
    await expectBackfillEquals(db.sql, assetEventCounts);
  });
});
