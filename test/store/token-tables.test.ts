/**
 * The token tables of sql/0045_token_tables.sql, which the ingest keeps through the derived hook: ft_balances and
 * nft_totals (additive), nft_custody (the reference's rules, sql/0106: a block that becomes canonical writes its
 * newest event of each NFT it moves, an orphaned block takes nothing back); and the per-sender, per-type tx counts and
 * per-asset NFT mint counts of sql/0103_list_counts.sql (additive); nft_owner_counts (sql/0107: custody rows per owner,
 * kept by a trigger on custody); ft_principal_counts and ft_token_totals (sql/0112, kept by a trigger on ft_balances). After every fixture, after it is delivered again,
 * and after every block of a generated chain with forks and microblock streams, each equals the same figure computed
 * from the canonical anchored history (custody on the generated chain: from the blocks' flips, by a model of the
 * reference's rules); the migration's backfill equals a fresh ingest (custody: where no NFT event was orphaned).
 */
import { applied, testPipeline } from '../helpers/pipeline.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, emptyChainTables } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { checkOnFixture, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createLogger } from '../../src/logger.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

interface Tables {
  ft: string[];
  nftTotals: string[];
  custody: string[];
  senders: string[];
  mints: string[];
  /** nft_owner_counts (sql/0107): custody rows per owner and asset class; nft_owner_totals (sql/0114) per owner ('*') */
  owners: string[];
  /** ft_principal_counts and ft_token_totals (sql/0112): positive balances per principal, rows and supply per token */
  ftCounts: string[];
}

/** The maintained tables, as comparable lines (rows that net to nothing left out). */
async function maintained(sql: Sql): Promise<Tables> {
  const ft = await sql<{ l: string }[]>`
    SELECT concat_ws('|', principal, asset_identifier, received, sent, balance) AS l FROM ft_balances
    WHERE received <> 0 OR sent <> 0 ORDER BY 1`;
  const nftTotals = await sql<{ l: string }[]>`
    SELECT concat_ws('|', principal, asset_identifier, received, sent) AS l FROM nft_totals
    WHERE received <> 0 OR sent <> 0 ORDER BY 1`;
  const custody = await sql<{ l: string }[]>`
    SELECT concat_ws('|', asset_identifier, value_hex, COALESCE(owner, '-'), tx_id, index_block_hash, block_height, tx_index, event_index) AS l
    FROM nft_custody ORDER BY 1`;
  const senders = await sql<{ l: string }[]>`
    SELECT concat_ws('|', sender_address, tx_type, n) AS l FROM sender_tx_counts WHERE n <> 0 ORDER BY 1`;
  const mints = await sql<{ l: string }[]>`
    SELECT concat_ws('|', asset_identifier, n) AS l FROM nft_mint_counts WHERE n <> 0 ORDER BY 1`;
  const owners = await sql<{ l: string }[]>`
    SELECT l FROM (
      SELECT concat_ws('|', owner, asset_identifier, n) AS l FROM nft_owner_counts
      UNION ALL
      SELECT concat_ws('|', owner, '*', n) FROM nft_owner_totals
    ) x ORDER BY 1`;
  const ftCounts = await sql<{ l: string }[]>`
    SELECT l FROM (
      SELECT concat_ws('|', 'principal', principal, positive) AS l FROM ft_principal_counts
      UNION ALL
      SELECT concat_ws('|', 'token', asset_identifier, holders, supply) FROM ft_token_totals
    ) x ORDER BY 1`;
  return { ft: ft.map((r) => r.l), nftTotals: nftTotals.map((r) => r.l), custody: custody.map((r) => r.l), senders: senders.map((r) => r.l), mints: mints.map((r) => r.l), owners: owners.map((r) => r.l), ftCounts: ftCounts.map((r) => r.l) };
}

/** The same, computed from scratch over the canonical anchored events. */
async function recomputed(sql: Sql): Promise<Tables> {
  const ft = await sql<{ l: string }[]>`
    SELECT concat_ws('|', principal, asset_identifier, sum(received), sum(sent), sum(received) - sum(sent)) AS l FROM (
      SELECT recipient AS principal, asset_identifier, amount AS received, 0 AS sent FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'fungible_token_asset' AND recipient IS NOT NULL
      UNION ALL
      SELECT sender, asset_identifier, 0, amount FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'fungible_token_asset' AND sender IS NOT NULL
    ) d GROUP BY principal, asset_identifier HAVING sum(received) <> 0 OR sum(sent) <> 0 ORDER BY 1`;
  const nftTotals = await sql<{ l: string }[]>`
    SELECT concat_ws('|', principal, asset_identifier, sum(received), sum(sent)) AS l FROM (
      SELECT recipient AS principal, asset_identifier, 1 AS received, 0 AS sent FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset' AND recipient IS NOT NULL
      UNION ALL
      SELECT sender, asset_identifier, 0, 1 FROM events
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset' AND sender IS NOT NULL
    ) d GROUP BY principal, asset_identifier ORDER BY 1`;
  // the latest event of each NFT, found by a plain scan (no DISTINCT ON, unlike the migration)
  const custody = await sql<{ l: string }[]>`
    SELECT concat_ws('|', asset_identifier, value_hex, COALESCE(recipient, '-'), tx_id, index_block_hash, block_height, tx_index, event_index) AS l
    FROM (
      SELECT e.*, row_number() OVER (PARTITION BY asset_identifier, value_hex
        ORDER BY block_height DESC, tx_index DESC, event_index DESC) AS n
      FROM events e
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset'
    ) x WHERE n = 1 ORDER BY 1`;
  // per sender and type, and per type over every sender ('')
  const senders = await sql<{ l: string }[]>`
    SELECT concat_ws('|', s, tx_type, n) AS l FROM (
      SELECT sender_address AS s, tx_type, count(*) AS n FROM txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' GROUP BY sender_address, tx_type
      UNION ALL
      SELECT '', tx_type, count(*) FROM txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> '' GROUP BY tx_type
    ) c ORDER BY 1`;
  const mints = await sql<{ l: string }[]>`
    SELECT concat_ws('|', asset_identifier, count(*)) AS l FROM events
    WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
    GROUP BY asset_identifier ORDER BY 1`;
  // the owner counts are a function of the custody table as it stands (whatever rules wrote it)
  const owners = await sql<{ l: string }[]>`
    SELECT l FROM (
      SELECT concat_ws('|', owner, asset_identifier, count(*)) AS l FROM nft_custody WHERE owner IS NOT NULL
      GROUP BY owner, asset_identifier
      UNION ALL
      SELECT concat_ws('|', owner, '*', count(*)) FROM nft_custody WHERE owner IS NOT NULL GROUP BY owner
    ) x ORDER BY 1`;
  // the FT counts are a function of ft_balances as it stands (zero rows included: a token's holders count them)
  const ftCounts = await sql<{ l: string }[]>`
    SELECT l FROM (
      SELECT concat_ws('|', 'principal', principal, count(*)) AS l FROM ft_balances WHERE balance > 0 GROUP BY principal
      UNION ALL
      SELECT concat_ws('|', 'token', asset_identifier, count(*), sum(balance)) FROM ft_balances GROUP BY asset_identifier
    ) x ORDER BY 1`;
  return { ft: ft.map((r) => r.l), nftTotals: nftTotals.map((r) => r.l), custody: custody.map((r) => r.l), senders: senders.map((r) => r.l), mints: mints.map((r) => r.l), owners: owners.map((r) => r.l), ftCounts: ftCounts.map((r) => r.l) };
}

const tokenTables: DerivedTable<Tables> = {
  name: 'token tables and list counts',
  read: maintained,
  recompute: recomputed,
  /** the tables as the migrations' backfills build them from what is stored */
  // 0045 defines its first nft_custody_apply again, and 0106 and 0107 the custody applier and the row trigger: the
  // later migrations that replace them run too
  backfill: migrationBackfill(
    ['ft_balances', 'nft_totals', 'nft_custody', 'sender_tx_counts', 'nft_mint_counts'],
    [
      '0045_token_tables.sql',
      '0103_list_counts.sql',
      '0106_nft_custody_reference.sql',
      '0107_read_counts.sql',
      '0112_ft_counts.sql',
      '0114_nft_owner_totals.sql',
      '0121_nft_custody_batched.sql',
      '0122_nft_owner_counts_statement.sql',
    ],
  ),
};

describe('token tables (ft_balances, nft_totals, nft_custody, nft_owner_counts, FT counts) and the list counts (sender_tx_counts, nft_mint_counts)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_tokens');
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function reset() {
    await emptyChainTables(db.sql);
  }

  for (const name of fixtureNames()) {
    it(`${name}: equal to the canonical history after a replay and a re-delivery; the backfill equals the ingest`, async () => {
      await checkOnFixture(db.sql, log, name, tokenTables);
    });
  }

  it('a generated chain with forks and microblock streams: equal after every block; the backfill equals the ingest', async () => {
    await reset();
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 8, seed: 'tokens', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 3 });
    type BlockFlag = { index_block_hash: string; canonical: boolean; block_height: number };
    const flags = async () => new Map((await db.sql<BlockFlag[]>`SELECT index_block_hash, canonical, block_height::int FROM blocks`).map((b) => [b.index_block_hash, b]));
    // the reference's custody, folded here from the blocks' flips: the restored blocks from the top down, then the new
    // block, each writing its newest event of every NFT it moves; an orphaned block writes nothing
    const custodyModel = new Map<string, string>();
    type Ev = { asset_identifier: string; value_hex: string; recipient: string | null; tx_id: string; index_block_hash: string; block_height: string; tx_index: number; event_index: number; microblock_sequence: number };
    const newer = (a: Ev, b: Ev) => a.microblock_sequence - b.microblock_sequence || a.tx_index - b.tx_index || a.event_index - b.event_index;
    async function writeBlock(hash: string) {
      const rows = await db.sql<Ev[]>`
        SELECT e.asset_identifier, e.value_hex, e.recipient, e.tx_id, e.index_block_hash, e.block_height::text, e.tx_index, e.event_index, t.microblock_sequence
        FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
        WHERE e.index_block_hash = ${hash} AND e.event_type = 'non_fungible_token_asset' AND e.canonical AND e.microblock_canonical`;
      const best = new Map<string, Ev>();
      for (const r of rows) {
        const k = `${r.asset_identifier}|${r.value_hex}`;
        const cur = best.get(k);
        if (!cur || newer(r, cur) > 0) best.set(k, r);
      }
      for (const [k, r] of best) custodyModel.set(k, [k, r.recipient ?? '-', r.tx_id, r.index_block_hash, r.block_height, r.tx_index, r.event_index].join('|'));
    }
    let before = await flags();
    let blocks = 0;
    let staleSeen = false;
    for await (const m of gen.messages()) {
      expect((await applied(pipeline, m.path, m.body)).status).toBe(200);
      if (m.path !== '/new_block') continue;
      blocks++;
      const after = await flags();
      const own = (JSON.parse(m.body) as { index_block_hash: string }).index_block_hash;
      const restored = [...after.values()]
        .filter((b) => b.canonical && !before.get(b.index_block_hash)?.canonical && b.index_block_hash !== own)
        .sort((a, b) => b.block_height - a.block_height);
      for (const b of restored) await writeBlock(b.index_block_hash);
      if (after.get(own)?.canonical && !before.get(own)?.canonical) await writeBlock(own);
      before = after;
      const now = await maintained(db.sql);
      const truth = await recomputed(db.sql);
      expect({ ...now, custody: [] }, `after block message ${blocks}`).toEqual({ ...truth, custody: [] });
      expect(now.custody, `custody after block message ${blocks}`).toEqual([...custodyModel.values()].sort());
      if (now.custody.join() !== truth.custody.join()) staleSeen = true;
    }
    // the chain orphaned NFT events whose owners the reference keeps: the model and the table kept them too
    expect(staleSeen).toBe(true);
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
    const end = await maintained(db.sql);
    expect(end.ft.length).toBeGreaterThan(3);
    expect(end.custody.length).toBeGreaterThan(3);
    expect(end.senders.length).toBeGreaterThan(10);
    expect(end.mints.length).toBeGreaterThan(0);
    // a fork orphaned some token events: the tables had to take them out again
    const [orphaned] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events WHERE NOT canonical AND event_type IN ('fungible_token_asset', 'non_fungible_token_asset')`;
    expect(orphaned.n).toBeGreaterThan(0);
    // the backfill rebuilds custody from the canonical events (it cannot know what orphaned blocks wrote)
    const truth = await recomputed(db.sql);
    await tokenTables.backfill!(db.sql);
    const back = await maintained(db.sql);
    // the owner and FT counts are functions of the custody and balance tables the backfill rebuilt (which has no
    // zero rows of touched keys: a token's holders count them)
    expect({ ...back, owners: [], ftCounts: [] }).toEqual({ ...end, custody: truth.custody, owners: [], ftCounts: [] });
    const rebuilt = await recomputed(db.sql);
    expect(back.owners).toEqual(rebuilt.owners);
    expect(back.ftCounts).toEqual(rebuilt.ftCounts);
    expect(end.ftCounts.length).toBeGreaterThan(3);
    expect(end.owners.length).toBeGreaterThan(3);
  });
});
