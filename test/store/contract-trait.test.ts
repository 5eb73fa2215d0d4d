/**
 * Contracts by trait (sql/0108): the trait is checked once per distinct deployed function list
 * (contract_function_lists, kept by a trigger on txs) and the matching deploys come from an expression index. On every
 * fixture and on a generated chain with forks (which deploys one template again and again), for traits made of each
 * deployed function, of two functions, and of one no contract has, every page equals what the plain statement gives
 * (the GIN containment over every canonical deploy, in storage order, sorted by height: the reference's tie order);
 * the dictionary equals the distinct function lists of the stored deploys, and contract_deploys (sql/0113) the canonical
 * deploys of the txs table (after every block of the generated chain too), after a re-delivery and after their backfill.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, expectBackfillEquals, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import { contractsByTrait } from '../../src/store/contract-lists.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

async function dictionary(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`SELECT functions_md5 || '|' || functions::text AS l FROM contract_function_lists ORDER BY 1`;
  return rows.map((r) => r.l);
}

async function dictionaryFromDeploys(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT DISTINCT md5(f::text) || '|' || f::text AS l
    FROM (SELECT (contract_abi::jsonb) -> 'functions' AS f FROM txs
          WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL) x
    WHERE f IS NOT NULL ORDER BY 1`;
  return rows.map((r) => r.l);
}

/** contract_deploys (sql/0113) as lines, and the same computed from the txs table as it stands. */
async function deployRows(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT concat_ws('|', tx_id, index_block_hash, microblock_hash, functions_md5, seq, microblock_sequence, tx_index, block_height) AS l
    FROM contract_deploys ORDER BY 1`;
  return rows.map((r) => r.l);
}
async function deploysFromTxs(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT concat_ws('|', tx_id, index_block_hash, microblock_hash, md5(((contract_abi::jsonb) -> 'functions')::text), seq,
      microblock_sequence, tx_index, block_height) AS l
    FROM txs WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical AND microblock_canonical
      AND (contract_abi::jsonb) -> 'functions' IS NOT NULL
    ORDER BY 1`;
  return rows.map((r) => r.l);
}

/** contract_deploys alone: what the ingest keeps after every block and microblock. */
const contractDeploys: DerivedTable<string[]> = { name: 'contract_deploys', read: deployRows, recompute: deploysFromTxs };

/** The dictionary and contract_deploys, with the backfill of both. */
const traitTables: DerivedTable<{ dictionary: string[]; deploys: string[] }> = {
  name: 'contract_function_lists, contract_deploys',
  read: async (sql) => ({ dictionary: await dictionary(sql), deploys: await deployRows(sql) }),
  recompute: async (sql) => ({ dictionary: await dictionaryFromDeploys(sql), deploys: await deploysFromTxs(sql) }),
  backfill: migrationBackfill(['contract_function_lists', 'contract_deploys'], ['0108_contract_function_lists.sql', '0113_contract_deploys.sql']),
};

/** The statement by_trait ran before sql/0108: every canonical deploy rechecked, in storage order, sorted by height. */
async function plain(sql: Sql, trait: unknown[], limit: number, offset: number): Promise<string[]> {
  const rows = await sql<{ tx_id: string }[]>`
    WITH stored AS MATERIALIZED (
      SELECT tx_id, block_height FROM txs
      WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical AND microblock_canonical
        AND ((contract_abi::jsonb) -> 'functions') @> ${sql.json(trait as never)}::jsonb
      ORDER BY seq, microblock_sequence, tx_index
    )
    SELECT tx_id FROM stored ORDER BY block_height DESC LIMIT ${limit} OFFSET ${offset}`;
  return rows.map((r) => r.tx_id);
}

/** Traits to ask for: each deployed function (as the route builds it), two together, and one nobody has. */
async function traits(sql: Sql): Promise<unknown[][]> {
  const fns = await sql<{ f: { name: string; access: string; args: { type: unknown }[]; outputs: unknown } }[]>`
    SELECT DISTINCT ON ((f ->> 'name'), f::text) f
    FROM (SELECT jsonb_array_elements((contract_abi::jsonb) -> 'functions') AS f FROM txs
          WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical) x
    ORDER BY (f ->> 'name'), f::text LIMIT 40`;
  const shaped = fns.map(({ f }) => ({ name: f.name, access: f.access, args: f.args.map((a) => ({ type: a.type })), outputs: f.outputs }));
  const out: unknown[][] = shaped.map((f) => [f]);
  if (shaped.length >= 2) out.push([shaped[0], shaped[shaped.length - 1]]);
  out.push([{ name: 'no-such-function', access: 'public', args: [], outputs: { type: 'bool' } }]);
  return out;
}

async function pagesAgree(sql: Sql): Promise<number> {
  let matched = 0;
  for (const trait of await traits(sql)) {
    for (const [limit, offset] of [[20, 0], [3, 0], [3, 2], [50, 7]]) {
      const got = (await contractsByTrait(sql, trait, { limit, offset })).map((r) => r.tx_id);
      expect(got, `${JSON.stringify(trait).slice(0, 80)} limit ${limit} offset ${offset}`).toEqual(await plain(sql, trait, limit, offset));
      matched += got.length;
    }
  }
  return matched;
}

describe('contracts by trait: one containment check per distinct function list', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_contract_trait');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: every page equals the plain statement; the dictionary equals the deploys' lists, after a re-delivery and its backfill`, async () => {
      await checkOnFixture(db.sql, log, name, traitTables);
      await pagesAgree(db.sql);
    });
  }

  it('a generated chain with forks: one template deployed many times, pages equal the plain statement', async () => {
    const gen = { blocks: 80, txsPerBlock: 6, seed: 'trait', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 4 };
    await checkOnGeneratedChain(db.sql, log, gen, contractDeploys, { after: ['/new_block', '/new_microblocks'] });
    // orphaned deploys left the table
    const [{ orphaned }] = await db.sql<{ orphaned: number }[]>`
      SELECT count(*)::int AS orphaned FROM txs WHERE NOT canonical AND contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL`;
    expect(orphaned).toBeGreaterThan(0);
    const [{ deploys }] = await db.sql<{ deploys: number }[]>`
      SELECT count(*)::int AS deploys FROM txs WHERE canonical AND contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL`;
    expect(deploys).toBeGreaterThan(5);
    // fewer lists than deploys: that is what the dictionary saves
    expect((await dictionary(db.sql)).length).toBeLessThan(deploys);
    expect(await dictionary(db.sql)).toEqual(await dictionaryFromDeploys(db.sql));
    expect(await pagesAgree(db.sql)).toBeGreaterThan(20);
    await expectBackfillEquals(db.sql, traitTables);
  });
});
