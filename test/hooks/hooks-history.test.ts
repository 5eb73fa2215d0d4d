/**
 * A hook's history (backfill) built in the database (sql/functions/hooks.sql, insertHistoryDeliveries) gives exactly the deliveries
 * the evaluator gives when it reads and matches the same history block by block (src/hooks/payload.ts): the same
 * blocks, in the same order, with the same payload blocks, for every scope the database decides, with and without
 * decode_clarity_values and include_contract_abi, print `contains`, deployments by trait and expire_after_occurrence, on a generated chain with forks and microblock streams; and the
 * dense stx_event history holds exactly the txs a plain query finds. A chunk with a block too large for one payload
 * is split by the evaluator, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createLogger } from '../../src/logger.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { HookRunner, sqlMatchOf } from '../../src/hooks/runner.js';
import type { HookPredicate } from '../../src/hooks/predicate.js';
import { SIP09, SIP10 } from '../../src/hooks/evaluate.js';
import { insertHook, type StoredPredicate } from '../../src/store/hooks.js';

const log = createLogger('silent');
let db: TestDatabase;
let n = 0;

const OPTS = { timeoutMs: 1000, allowedHosts: [], retryMinMs: 1000, retryMaxMs: 1000, concurrency: 1 };

/** The deliveries a new hook with this predicate gets from its history, evaluated one way or the other. */
async function history(p: HookPredicate, inDatabase: boolean, maxPayloadBytes = 4 << 20) {
  const runner = new HookRunner(db.sql, log, { ...OPTS, maxPayloadBytes });
  n++;
  const hook = await insertHook(db.sql, {
    uuid: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
    owner: 'test',
    name: `history ${n}`,
    version: 1,
    network: 'testnet',
    predicate: p as unknown as StoredPredicate,
    url: 'http://127.0.0.1:9/',
    authorization_header: null,
    secret: 'x',
  });
  await runner.backfill(hook!, { inDatabase });
  const rows = await db.sql<{ action: string; block_height: string; index_block_hash: string; block: unknown }[]>`
    SELECT action, block_height, index_block_hash, block FROM hook_deliveries WHERE hook_id = ${hook!.id} ORDER BY id`;
  const [{ occurrences }] = await db.sql<{ occurrences: string }[]>`SELECT occurrences FROM hooks WHERE id = ${hook!.id}`;
  return { rows, occurrences: Number(occurrences), profile: runner.history };
}

describe('hook history built in the database', () => {
  beforeAll(async () => {
    db = await createTestDatabase('sp_test_hook_history');
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 80, txsPerBlock: 8, seed: 'hook-history', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 3 });
    for await (const m of gen.messages()) expect((await applied(pipeline, m.path, m.body)).status).toBe(200);
    await pipeline.stop();
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
  }, 600_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('gives the same deliveries as the evaluator, block by block, for every scope it decides', async () => {
    const pick = async <T>(q: Promise<T[]>): Promise<T> => {
      const [r] = await q;
      expect(r).toBeDefined();
      return r;
    };
    const print = await pick(db.sql<{ c: string }[]>`
      SELECT contract_id AS c FROM events WHERE event_type = 'smart_contract_log' AND canonical GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
    const ft = await pick(db.sql<{ a: string }[]>`
      SELECT asset_identifier AS a FROM events WHERE event_type = 'fungible_token_asset' AND canonical GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
    const nft = await pick(db.sql<{ a: string }[]>`
      SELECT asset_identifier AS a FROM events WHERE event_type = 'non_fungible_token_asset' AND canonical GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
    const call = await pick(db.sql<{ c: string; m: string }[]>`
      SELECT contract_call_contract_id AS c, api::jsonb -> 'contract_call' ->> 'function_name' AS m FROM txs
      WHERE tx_type = 'contract_call' AND canonical GROUP BY 1, 2 ORDER BY count(*) DESC, 1, 2 LIMIT 1`);
    const deployer = await pick(db.sql<{ s: string }[]>`
      SELECT sender_address AS s FROM txs WHERE tx_type = 'smart_contract' AND canonical GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
    const tx = await pick(db.sql<{ t: string }[]>`
      SELECT tx_id AS t FROM txs WHERE tx_type = 'contract_call' AND canonical AND microblock_canonical ORDER BY block_height DESC, tx_index LIMIT 1`);
    // deployments implementing the traits (the generated contracts implement none): ABIs given to three of them
    const deploys = await db.sql<{ t: string }[]>`
      SELECT tx_id AS t FROM txs WHERE tx_type = 'smart_contract' AND status = 'success' AND canonical AND microblock_canonical
      ORDER BY block_height, tx_index LIMIT 3`;
    expect(deploys.length).toBe(3);
    const fns = (names: string[], access = 'public') => names.map((name) => ({ name, access, args: [], outputs: { type: 'bool' } }));
    const abis = [
      { functions: [...fns(SIP09), ...fns(['get-counter'], 'read_only')] },
      { functions: [...fns(SIP10.filter((f) => f !== 'get-name')), ...fns(['get-name'], 'private')] },
      { functions: fns([...SIP10, ...SIP10]) },
    ];
    for (let i = 0; i < 3; i++) await db.sql`UPDATE txs SET contract_abi = ${JSON.stringify(abis[i])}::text::json WHERE tx_id = ${deploys[i].t}`;
    // a piece of a printed value's Clarity text that some prints have and others not
    const printed = await pick(db.sql<{ r: string }[]>`
      SELECT api::json -> 'contract_log' -> 'value' ->> 'repr' AS r FROM events
      WHERE event_type = 'smart_contract_log' AND contract_id = ${print.c} AND canonical ORDER BY block_height DESC LIMIT 1`);
    const piece = / \(n u(\d)/.exec(printed.r)?.[0];
    expect(piece).toBeDefined();
    const predicates: HookPredicate[] = [
      { if_this: { scope: 'print_event', contract_identifier: print.c, contains: piece! } },
      { if_this: { scope: 'print_event', contract_identifier: '*', contains: '"ping"' }, decode_clarity_values: true },
      { if_this: { scope: 'print_event', contract_identifier: '*', contains: '' } },
      { if_this: { scope: 'print_event', contract_identifier: '*', contains: 'pïng' } },
      // literal regular expressions, anchored or not, are text tests too
      { if_this: { scope: 'print_event', contract_identifier: print.c, matches_regex: 'event "ping"' }, decode_clarity_values: true },
      { if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: '^tuple' } },
      { if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: 'tuple$' } },
      { if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: '^$' } },
      { if_this: { scope: 'contract_deployment', implement_trait: 'sip09' }, include_contract_abi: true },
      { if_this: { scope: 'contract_deployment', implement_trait: 'sip10' } },
      { if_this: { scope: 'contract_deployment', implement_trait: '*' } },
      { if_this: { scope: 'stx_event', actions: ['transfer'] }, expire_after_occurrence: 3 },
      { if_this: { scope: 'print_event', contract_identifier: print.c, contains: piece! }, expire_after_occurrence: 2, start_block: 20 },
      { if_this: { scope: 'block_height', higher_than: 0 }, expire_after_occurrence: 1000 },
      { if_this: { scope: 'stx_event', actions: ['transfer'] } },
      { if_this: { scope: 'stx_event', actions: ['mint', 'transfer', 'lock', 'burn'] }, decode_clarity_values: true, start_block: 5, end_block: 60 },
      { if_this: { scope: 'print_event', contract_identifier: print.c }, decode_clarity_values: true },
      { if_this: { scope: 'print_event', contract_identifier: '*' } },
      { if_this: { scope: 'ft_event', asset_identifier: ft.a, actions: ['mint', 'transfer'] } },
      { if_this: { scope: 'ft_event', asset_identifier: ft.a, actions: ['burn'] } },
      { if_this: { scope: 'nft_event', asset_identifier: nft.a, actions: ['mint', 'transfer'] }, decode_clarity_values: true },
      { if_this: { scope: 'contract_call', contract_identifier: call.c, method: call.m }, decode_clarity_values: true },
      { if_this: { scope: 'contract_call', contract_identifier: call.c, method: 'no-such-method' } },
      { if_this: { scope: 'txid', equals: tx.t.toUpperCase().replace('0X', '0x') } },
      { if_this: { scope: 'contract_deployment', deployer: deployer.s }, include_contract_abi: true },
      { if_this: { scope: 'contract_deployment', deployer: '*' }, include_contract_abi: true, decode_clarity_values: true },
      { if_this: { scope: 'block_height', between: [10, 30] } },
      { if_this: { scope: 'block_height', higher_than: 70 }, include_contract_abi: true },
    ];
    for (const p of predicates) {
      expect(sqlMatchOf(p), JSON.stringify(p.if_this)).toBeDefined();
      const inDb = await history(p, true);
      const here = await history(p, false);
      // the database did the work (no rows read into the service), the evaluator did it the other way
      expect(inDb.profile.statement).toBeGreaterThan(0);
      expect(inDb.profile.read).toBe(0);
      expect(here.profile.statement).toBe(0);
      expect(inDb.rows, JSON.stringify(p)).toEqual(here.rows);
      // byte for byte: what is sent is the stored payload as it reads back, keys in the order they were written
      expect(JSON.stringify(inDb.rows), JSON.stringify(p)).toBe(JSON.stringify(here.rows));
      expect(inDb.occurrences).toBe(here.occurrences);
      // the generated chain burns no tokens and calls no such method: those two match nothing, every other matches
      const none =
        (p.if_this.scope === 'ft_event' && p.if_this.actions[0] === 'burn') ||
        (p.if_this.scope === 'contract_call' && p.if_this.method === 'no-such-method') ||
        (p.if_this.scope === 'print_event' && (p.if_this.contains === 'pïng' || /^\^|\$$/.test(p.if_this.matches_regex ?? '')));
      if (none) expect(here.rows).toEqual([]);
      else expect(here.rows.length, JSON.stringify(p)).toBeGreaterThan(0);
      if (p.if_this.scope === 'contract_deployment' && p.if_this.implement_trait !== undefined) {
        // a private function does not count: the second ABI lacks sip10's get-name
        const txs = here.rows.flatMap((r) => (r.block as { transactions: { transaction_identifier: { hash: string } }[] }).transactions.map((t) => t.transaction_identifier.hash));
        const want = { sip09: [deploys[0].t], sip10: [deploys[2].t], '*': [deploys[0].t, deploys[2].t] }[p.if_this.implement_trait];
        expect(txs).toEqual(want);
      }
      if (p.expire_after_occurrence !== undefined) expect(here.occurrences, JSON.stringify(p)).toBeLessThanOrEqual(p.expire_after_occurrence);
      if (p.expire_after_occurrence !== undefined && p.expire_after_occurrence < 10) expect(here.occurrences).toBe(p.expire_after_occurrence);
    }
  });

  it('the dense stx_event history holds exactly the txs a plain query finds, one delivery per block, in chain order', async () => {
    const { rows } = await history({ if_this: { scope: 'stx_event', actions: ['transfer'] } }, true);
    const got = rows.map((r) => ({
      height: Number(r.block_height),
      hash: r.index_block_hash,
      txs: (r.block as { transactions: { transaction_identifier: { hash: string } }[] }).transactions.map((t) => t.transaction_identifier.hash),
    }));
    const plain = await db.sql<{ height: number; hash: string; txs: string[] }[]>`
      SELECT b.block_height::int AS height, b.index_block_hash AS hash, array_agg(t.tx_id ORDER BY t.microblock_sequence, t.tx_index) AS txs
      FROM blocks b JOIN txs t ON t.index_block_hash = b.index_block_hash AND t.microblock_canonical
      WHERE b.canonical AND EXISTS (
        SELECT 1 FROM events e WHERE e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash AND e.microblock_hash = t.microblock_hash
          AND e.microblock_canonical AND e.event_type = 'stx_asset' AND e.asset_event_type = 'transfer')
      GROUP BY b.block_height, b.index_block_hash ORDER BY b.block_height`;
    expect(plain.length).toBeGreaterThan(40);
    expect(got).toEqual(plain.map((r) => ({ height: r.height, hash: r.hash, txs: r.txs })));
  });

  it('splits a block too large for one payload as the evaluator does', async () => {
    const p: HookPredicate = { if_this: { scope: 'block_height', higher_than: 0 } };
    // small enough that full blocks need several payloads, large enough for any single tx
    const limit = 6000;
    const inDb = await history(p, true, limit);
    const here = await history(p, false, limit);
    expect(inDb.rows).toEqual(here.rows);
    expect(JSON.stringify(inDb.rows)).toBe(JSON.stringify(here.rows));
    const heights = inDb.rows.map((r) => Number(r.block_height));
    expect(new Set(heights).size).toBeLessThan(heights.length);
  });

  it('leaves to the evaluator what the database cannot decide exactly', () => {
    // PostgreSQL's regular expressions are not RE2's: only literals (with ^ / $) are decided there
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: 'x+' } })).toBeUndefined();
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: 'a.b' } })).toBeUndefined();
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: '\\(tuple' } })).toBeUndefined();
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: 'a^b' } })).toBeUndefined();
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: '^ab$' } })).toEqual({
      printContract: '*',
      text: { value: 'ab', start: true, end: true },
    });
    expect(sqlMatchOf({ if_this: { scope: 'print_event', contract_identifier: '*', matches_regex: 'x+' }, expire_after_occurrence: 3 })).toBeUndefined();
  });
});
