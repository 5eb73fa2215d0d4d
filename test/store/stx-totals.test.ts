/**
 * Growth support in the ingest: stx_totals (sql/0012_stx_totals.sql), the principals' STX totals the ingest keeps up to
 * date, always equals the sum over the canonical anchored chain — through forks, microblock streams, the boot block and
 * re-deliveries — and the balance answer read from it equals the one summed from history; and the pipeline re-analyzes
 * a database that fills from empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase, type TestDatabase, emptyChainTables } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { checkOnFixture, checkOnGeneratedChain, type DerivedTable } from '../helpers/derived.js';
import { createLogger } from '../../src/logger.js';
import { stxBalance } from '../../src/answers/index.js';
import { migrate } from '../../src/store/migrate.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

type Totals = Record<string, { received: string; sent: string; fees: string; rewards: string }>;

/** stx_totals as principal → totals, rows that net to nothing left out. */
async function maintained(sql: Sql): Promise<Totals> {
  const rows = await sql<{ principal: string; received: string; sent: string; fees: string; rewards: string }[]>`
    SELECT principal, received::text, sent::text, fees::text, rewards::text FROM stx_totals
    WHERE received <> 0 OR sent <> 0 OR fees <> 0 OR rewards <> 0 ORDER BY principal`;
  return Object.fromEntries(rows.map(({ principal, ...t }) => [principal, t]));
}

/** The same totals summed from scratch over canonical anchored rows. */
async function recomputed(sql: Sql): Promise<Totals> {
  const rows = await sql<{ principal: string; received: string; sent: string; fees: string; rewards: string }[]>`
    SELECT principal, sum(received)::text AS received, sum(sent)::text AS sent, sum(fees)::text AS fees, sum(rewards)::text AS rewards
    FROM (
      SELECT recipient AS principal, amount AS received, 0 AS sent, 0 AS fees, 0 AS rewards FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'stx_asset' AND recipient IS NOT NULL
      UNION ALL
      SELECT sender, 0, amount, 0, 0 FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'stx_asset' AND sender IS NOT NULL
      UNION ALL
      SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 0, 0, fee_rate, 0 FROM txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL
      SELECT recipient, 0, 0, 0, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
      FROM miner_rewards WHERE canonical
    ) d WHERE principal IS NOT NULL
    GROUP BY principal
    HAVING sum(received) <> 0 OR sum(sent) <> 0 OR sum(fees) <> 0 OR sum(rewards) <> 0
    ORDER BY principal`;
  return Object.fromEntries(rows.map(({ principal, ...t }) => [principal, t]));
}

const stxTotals: DerivedTable<Totals> = { name: 'stx_totals', read: maintained, recompute: recomputed };

describe('stx_totals', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_totals');
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function reset() {
    await emptyChainTables(db.sql);
  }

  for (const name of fixtureNames()) {
    it(`${name}: equals the canonical chain's sums after a replay, and after it is delivered again`, async () => {
      await checkOnFixture(db.sql, log, name, stxTotals);
    });
  }

  it('a generated chain with forks and microblock streams: equal after every block', async () => {
    await checkOnGeneratedChain(db.sql, log, { blocks: 30, txsPerBlock: 6, seed: 'totals', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 3 }, stxTotals);
    expect(Object.keys(await maintained(db.sql)).length).toBeGreaterThan(5);
  });

  it('the balance read from the totals equals the one summed from history, unconfirmed microblocks included', async () => {
    // the database of the previous test: a generated chain ending with a microblock stream or not, both heights
    const [tip] = await db.sql<{ h: number; burn: number }[]>`
      SELECT block_height AS h, burn_block_height AS burn FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    const principals = Object.keys(await maintained(db.sql));
    expect(principals.length).toBeGreaterThan(5);
    for (const p of principals) {
      for (const h of [tip.h, tip.h + 1]) {
        const fast = await stxBalance(db.sql, p, h, tip.burn, true);
        // the history path: what stxBalance does below the tip, asked for the same height through a plain sum
        const [slow] = await db.sql<{ received: string; sent: string; fees: string; rewards: string }[]>`
          SELECT
            (SELECT COALESCE(SUM(amount), 0) FROM events WHERE event_type = 'stx_asset' AND recipient = ${p} AND canonical AND microblock_canonical AND block_height <= ${h})::text AS received,
            (SELECT COALESCE(SUM(amount), 0) FROM events WHERE event_type = 'stx_asset' AND sender = ${p} AND canonical AND microblock_canonical AND block_height <= ${h})::text AS sent,
            (SELECT COALESCE(SUM(fee_rate), 0) FROM txs WHERE ((sender_address = ${p} AND NOT sponsored) OR (sponsor_address = ${p} AND sponsored)) AND canonical AND microblock_canonical AND block_height <= ${h})::text AS fees,
            (SELECT COALESCE(SUM(coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced), 0) FROM miner_rewards WHERE recipient = ${p} AND canonical AND block_height <= ${h})::text AS rewards`;
        expect({ received: fast.total_received, sent: fast.total_sent, fees: fast.total_fees_sent, rewards: fast.total_miner_rewards_received }, `${p} at ${h}`).toEqual(slow);
        const below = await stxBalance(db.sql, p, h - 1, tip.burn, false);
        expect(below.balance).toMatch(/^-?\d+$/);
      }
    }
  });

  it('while a database fills from empty, the pipeline runs ANALYZE as its count of stored messages doubles', async () => {
    await reset();
    // pg_stat's manual-ANALYZE time (autovacuum's own runs are counted apart, in last_autoanalyze)
    const analyzed = async () => {
      await db.sql`SELECT pg_stat_clear_snapshot()`;
      const [r] = await db.sql<{ t: Date | null }[]>`SELECT last_analyze AS t FROM pg_stat_user_tables WHERE relname = 'txs'`;
      return r.t;
    };
    const before = await analyzed();
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 30, txsPerBlock: 2, seed: 'analyze', forks: false });
    let n = 0;
    for await (const m of gen.messages()) {
      expect((await applied(pipeline, m.path, m.body)).status).toBe(200);
      n++;
    }
    expect(n).toBeGreaterThan(64);
    let after = await analyzed();
    for (let i = 0; i < 100 && (after === null || (before !== null && after <= before)); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await analyzed();
    }
    expect(after).not.toBeNull();
    if (before) expect(after!.getTime()).toBeGreaterThan(before.getTime());
  });

  it('a database ingested before the migration gets its totals from what is stored', async () => {
    const expected = await maintained(db.sql);
    await db.sql`DELETE FROM stx_totals`;
    await db.sql`DELETE FROM schema_migrations WHERE version = '0012_stx_totals.sql'`;
    await migrate(db.sql);
    expect(await maintained(db.sql)).toEqual(expected);
  });
});
