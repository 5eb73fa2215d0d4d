/**
 * principal_txs / principal_tx_counts (sql/0040_principal_txs.sql), the per-principal transaction index the address
 * transaction lists read: after every fixture and after every block of a generated chain with forks and microblock
 * streams, the maintained rows and counts equal the same figures computed from the canonical history; the migration's
 * backfill equals a fresh ingest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { checkOnFixture, checkOnGeneratedChain, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createLogger } from '../../src/logger.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

type Row = { principal: string; tx_id: string; index_block_hash: string; microblock_hash: string; roles: number };

async function maintainedRows(sql: Sql): Promise<string[]> {
  const rows = await sql<Row[]>`SELECT principal, tx_id, index_block_hash, microblock_hash, roles FROM principal_txs`;
  return rows.map((r) => `${r.principal} ${r.tx_id} ${r.index_block_hash} ${r.microblock_hash} ${r.roles}`).sort();
}

/** The same rows computed from scratch, from txs and events of canonical anchored blocks (not via the SQL function). */
async function recomputedRows(sql: Sql): Promise<string[]> {
  const rows = await sql<Row[]>`
    SELECT principal, tx_id, index_block_hash, microblock_hash,
      bit_or(role)::int | CASE WHEN bool_or(boot) THEN 256 ELSE 0 END AS roles
    FROM (SELECT d.*, d.index_block_hash IN (
        -- block 1 on top of a boot block: the txs it adopted from it (stored before block 1 was)
        SELECT b1.index_block_hash FROM blocks b1 JOIN blocks b0 ON b0.index_block_hash = b1.parent_index_block_hash
        WHERE b0.block_height = 0 AND b1.block_height = 1) AND d.microblock_hash = '' AND d.tx_id IN (
        SELECT x.tx_id FROM txs x JOIN blocks b ON b.index_block_hash = x.index_block_hash WHERE x.seq < b.seq) AS boot
    FROM (
      SELECT sender_address AS principal, tx_id, index_block_hash, microblock_hash, 1 AS role FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT sponsor_address, tx_id, index_block_hash, microblock_hash, 2 FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND sponsored
      UNION ALL SELECT token_transfer_recipient, tx_id, index_block_hash, microblock_hash, 4 FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT contract_call_contract_id, tx_id, index_block_hash, microblock_hash, 8 FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT smart_contract_contract_id, tx_id, index_block_hash, microblock_hash, 16 FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT p, e.tx_id, e.index_block_hash, e.microblock_hash,
          CASE e.event_type WHEN 'stx_asset' THEN 32 WHEN 'fungible_token_asset' THEN 64 ELSE 128 END
        FROM events e JOIN txs t USING (tx_id, index_block_hash, microblock_hash)
        CROSS JOIN LATERAL (VALUES (e.sender), (e.recipient)) v(p)
        WHERE t.canonical AND t.microblock_canonical AND t.index_block_hash <> ''
          AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
    ) d) d WHERE principal IS NOT NULL
    GROUP BY principal, tx_id, index_block_hash, microblock_hash`;
  return rows.map((r) => `${r.principal} ${r.tx_id} ${r.index_block_hash} ${r.microblock_hash} ${r.roles}`).sort();
}

async function maintainedCounts(sql: Sql): Promise<Record<string, string>> {
  const rows = await sql<{ principal: string; c: string }[]>`
    SELECT principal, stx_txs || '/' || transfer_txs || '/' || all_txs AS c FROM principal_tx_counts
    WHERE stx_txs <> 0 OR transfer_txs <> 0 OR all_txs <> 0`;
  return Object.fromEntries(rows.map((r) => [r.principal, r.c]));
}

/** The counts the rows give (a principal's transactions of each list). */
function countsOfRows(rows: string[]): Record<string, string> {
  const c = new Map<string, [number, number, number]>();
  for (const line of rows) {
    const [p, , , , r] = line.split(' ');
    const roles = Number(r);
    const v = c.get(p) ?? [0, 0, 0];
    if (roles & 63 && !(roles & 256)) v[0]++;
    if (roles & 253) v[1]++;
    if (!(roles & 256) || roles & 224) v[2]++;
    c.set(p, v);
  }
  return Object.fromEntries([...c].map(([p, v]) => [p, v.join('/')]));
}

/** principal_txs and its counts: the rows from the history, the counts from those rows. */
const principalTxs: DerivedTable<{ rows: string[]; counts: Record<string, string> }> = {
  name: 'principal_txs, principal_tx_counts',
  read: async (sql) => ({ rows: await maintainedRows(sql), counts: await maintainedCounts(sql) }),
  recompute: async (sql) => {
    const rows = await recomputedRows(sql);
    return { rows, counts: countsOfRows(rows) };
  },
  // the migration's statements again over what is stored
  backfill: migrationBackfill(['principal_txs', 'principal_tx_counts'], ['0040_principal_txs.sql']),
};

describe('principal_txs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_ptxs');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: equals the canonical history after a replay; the migration's backfill equals the ingest`, async () => {
      await checkOnFixture(db.sql, log, name, principalTxs, { redeliver: false });
    });
  }

  it('a generated chain with forks and microblock streams: equal after every block', async () => {
    const gen = { blocks: 30, txsPerBlock: 6, seed: 'ptxs', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 3 };
    await checkOnGeneratedChain(db.sql, log, gen, principalTxs, { after: ['/new_block', '/new_microblocks'] });
    expect(Object.keys(await maintainedCounts(db.sql)).length).toBeGreaterThan(5);
  });
});
