/**
 * Stacking beyond the goldens: burnchain rewards and slot holders through a burn-chain fork and through Stacks reorgs
 * (the reference's rules), PoX cycles following their block's canonical state, the migrations' backfills equal to a
 * fresh ingest, and pool delegations (newest per stacker, revocations, expiry, paging, after_block, height).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, emptyChainTables } from '../helpers/db.js';
import { fixtureNames, readFixture } from '../helpers/fixtures.js';
import { replay, startTestService, type TestService } from '../helpers/service.js';
import { poxOpBlock, poxPrint } from '../helpers/pox-print.js';
import { createLogger } from '../../src/logger.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { sqlDir } from '../../src/store/migrate.js';
import { cv, decodePoxPrintEvent } from '../../src/chain/pox.js';
import { codec } from '../../src/chain/native.js';
import { isValidBitcoinAddress, poxAddressToBtc, stacksToBtcAddress } from '../../src/chain/btc-address.js';
import { stackedPercent } from '../../src/views/pox.js';
import type { Sql } from '../../src/store/sql.js';
import { deliverOk, get } from '../helpers/http.js';

const log = createLogger('silent');
const hex32 = () => '0x' + randomBytes(32).toString('hex');
const testnetAddress = () => codec.stacksAddressFromParts(26, randomBytes(20));

describe('address helpers', () => {
  it('validates BTC addresses as bitcoinjs does and encodes PoX addresses on both networks', () => {
    for (const a of ['mxXw9bceXuFB6HZjqriS527kTqt5H9VczT', '36hQtSEXBMevo5chpxhfAGiCTSC34QKgda', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'tb1pf4x64urhdsdmadxxhv2wwjv6e3evy59auu2xaauu3vz3adxtskfschm453']) {
      expect(isValidBitcoinAddress(a), a).toBe(true);
    }
    for (const a of ['notanaddress', 'mxXw9bceXuFB6HZjqriS527kTqt5H9VczU', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr', 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B']) {
      expect(isValidBitcoinAddress(a), a).toBe(false);
    }
    expect(stacksToBtcAddress('ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B')).toBe('n1mQvxXsVcw89UTSviqxRn2mumUuFkSrik');
    expect(stacksToBtcAddress('notanaddress')).toBeNull();
    const hash = Buffer.from('164247d6f2b425ac5771423ae6c80c754f7172b0', 'hex');
    expect(poxAddressToBtc(0, hash, false)).toBe('mhYeZXrSEuyf2wbJ14qZ2apG7ofMLDj9Ss');
    const p2wpkh = poxAddressToBtc(4, hash, true)!;
    expect(p2wpkh).toMatch(/^bc1q/);
    expect(isValidBitcoinAddress(p2wpkh)).toBe(true);
    expect(poxAddressToBtc(6, Buffer.alloc(32, 7), false)).toMatch(/^tb1p/);
    expect(poxAddressToBtc(9, hash, false)).toBeNull();
  });

  it('stacked_amount_percent is the quotient rounded half-up to 20 decimals, times 100', () => {
    expect(stackedPercent(457500900000000000n, 1372502700000000000n)).toBe(33.333333333333336);
    expect(stackedPercent(686251350000000000n, 1372502700000000000n)).toBe(50);
    expect(stackedPercent(2n, 3n)).toBe(66.66666666666667);
    expect(stackedPercent(1n, 0n)).toBeNull();
  });
});

describe('burnchain rewards and slot holders through the service', () => {
  let svc: TestService;
  const R1 = 'mxXw9bceXuFB6HZjqriS527kTqt5H9VczT';
  const R2 = 'mpgvmF9DSDBrbxUY4rbsPmWkYakoDXr19j';
  const burn = (hash: string, height: number, rewards: [string, number][], holders: string[]) => ({
    id: '0',
    timestamp: '',
    path: '/new_burn_block',
    body: JSON.stringify({
      burn_block_hash: hash,
      burn_block_height: height,
      burn_amount: 1000,
      reward_recipients: rewards.map(([recipient, amt]) => ({ recipient, amt })),
      reward_slot_holders: holders,
      consensus_hash: '0x' + 'ab'.repeat(20),
      parent_burn_block_hash: '0x' + '00'.repeat(32),
    }),
  });
  const A = hex32();
  const B = hex32();
  const C = hex32();

  beforeAll(async () => {
    svc = await startTestService({ STACKS_CHAIN_ID: '0x80000000' });
    const statuses = await replay(svc.observer, [
      // heights of different digit counts: the order is numeric (a text sort would put 999 first)
      burn(A, 999, [[R1, 10], [R2, 20]], [R1, R2]),
      burn(B, 1000, [[R1, 5]], [R1]),
      // a burn-chain fork: another block at 1000
      burn(C, 1000, [[R2, 7]], [R2]),
    ]);
    expect(statuses).toEqual([200, 200, 200]);
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('a burn block at an existing height replaces the slot holders at or above it; rewards stay (the reference rule)', async () => {
    const holders = await get(svc.api, '/extended/v1/burnchain/reward_slot_holders');
    expect(holders.body.total).toBe(3);
    expect(holders.body.results.map((r: any) => [r.burn_block_hash, r.slot_index])).toEqual([
      [C, 0],
      [A, 1],
      [A, 0],
    ]);
    const rewards = await get(svc.api, '/extended/v1/burnchain/rewards');
    expect(rewards.body.results.map((r: any) => [r.burn_block_height, r.reward_recipient, r.reward_amount])).toEqual([
      [1000, R1, '5'],
      [1000, R2, '7'],
      [999, R2, '20'],
      [999, R1, '10'],
    ]);
    expect(rewards.body.results.every((r: any) => r.canonical && r.burn_amount === '1000')).toBe(true);
  });

  it('a recipient by BTC address or by the Stacks address of the same hash; invalid addresses are 400s', async () => {
    const stx = codec.bitcoinToStacksAddress(R1);
    for (const a of [R1, stx]) {
      expect((await get(svc.api, `/extended/v1/burnchain/rewards/${a}/total`)).body).toEqual({ reward_recipient: R1, reward_amount: '15' });
      const page = await get(svc.api, `/extended/v1/burnchain/rewards/${a}?limit=1&offset=1`);
      expect(page.body).toMatchObject({ limit: 1, offset: 1 });
      expect(page.body.results.map((r: any) => r.reward_amount)).toEqual(['10']);
      const slots = await get(svc.api, `/extended/v1/burnchain/reward_slot_holders/${a}`);
      expect(slots.body.total).toBe(1);
    }
    for (const p of ['/rewards/zz', '/rewards/zz/total', '/reward_slot_holders/zz']) {
      expect((await get(svc.api, '/extended/v1/burnchain' + p)).status).toBe(400);
    }
    expect((await get(svc.api, '/extended/v1/burnchain/rewards?limit=251')).status).toBe(400);
  });
});

/** The stacking tables without their serial ids, in a stable order. */
async function stackingTables(sql: Sql) {
  return {
    rewards: await sql`SELECT canonical, burn_block_hash, burn_block_height::text, burn_amount::text, reward_recipient, reward_amount::text, reward_index
      FROM burnchain_rewards ORDER BY burn_block_hash, reward_index`,
    holders: await sql`SELECT canonical, burn_block_hash, burn_block_height::text, address, slot_index
      FROM reward_slot_holders ORDER BY burn_block_hash, slot_index`,
    cycles: await sql`SELECT * FROM pox_cycles ORDER BY cycle_number, index_block_hash`,
    sets: await sql`SELECT * FROM pox_sets ORDER BY cycle_number, index_block_hash, signing_key`,
    eventCycles: await sql`SELECT * FROM pox_event_cycles ORDER BY value_md5`,
  };
}

/** Empties the four tables and runs their migrations again (both files are re-runnable): the backfill. */
async function backfill(sql: Sql) {
  await sql`TRUNCATE burnchain_rewards, reward_slot_holders, pox_cycles, pox_sets, pox_event_cycles`;
  for (const f of ['0030_burnchain_rewards.sql', '0031_pox_cycles.sql', '0032_pox_event_cycles.sql']) {
    await sql.begin((tx) => tx.unsafe(readFileSync(path.join(sqlDir(), f), 'utf8')));
  }
}

describe('derived stacking tables: reorgs and backfill', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_stacking');
  });
  afterAll(async () => db?.drop());

  async function reset() {
    await emptyChainTables(db.sql);
  }

  for (const name of fixtureNames()) {
    it(`${name}: the migrations' backfill equals what the ingest wrote`, async () => {
      await reset();
      const pipeline = testPipeline(db.sql, log);
      for (const l of readFixture(name)) expect((await applied(pipeline, l.path, l.body)).status).toBe(200);
      const ingested = await stackingTables(db.sql);
      await backfill(db.sql);
      expect(await stackingTables(db.sql)).toEqual(ingested);
    });
  }

  it('a generated chain with forks: rewards of the burn blocks of orphaned Stacks blocks are non-canonical; backfill equals ingest', async () => {
    await reset();
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 2, seed: 'stacking', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 4 });
    for await (const m of gen.messages()) expect((await applied(pipeline, m.path, m.body)).status).toBe(200);
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);

    const expected = await db.sql<{ burn_block_hash: string; canonical: boolean }[]>`
      SELECT r.burn_block_hash, NOT EXISTS (SELECT 1 FROM blocks b WHERE b.burn_block_hash = r.burn_block_hash AND NOT b.canonical) AS canonical
      FROM burnchain_rewards r ORDER BY r.id`;
    const actual = await db.sql<{ burn_block_hash: string; canonical: boolean }[]>`
      SELECT burn_block_hash, canonical FROM burnchain_rewards ORDER BY id`;
    expect(actual.length).toBeGreaterThan(3);
    expect(actual).toEqual(expected);
    expect(actual.some((r) => !r.canonical)).toBe(true);

    const ingested = await stackingTables(db.sql);
    await backfill(db.sql);
    expect(await stackingTables(db.sql)).toEqual(ingested);
  });

  it('epoch-3-transition: one cycle row per reward set, following its block through a reorg; backfill equals ingest', async () => {
    await reset();
    const pipeline = testPipeline(db.sql, log);
    for (const l of readFixture('epoch-3-transition')) expect((await applied(pipeline, l.path, l.body)).status).toBe(200);
    const cycles = await db.sql<{ cycle_number: string; index_block_hash: string; canonical: boolean; total_signers: number }[]>`
      SELECT cycle_number::text, index_block_hash, canonical, total_signers FROM pox_cycles ORDER BY cycle_number`;
    expect(cycles.map((c) => [c.cycle_number, c.canonical, c.total_signers])).toEqual([
      ['11', true, 0],
      ['12', true, 3],
      ['13', true, 3],
      ['14', true, 3],
    ]);
    const ingested = await stackingTables(db.sql);
    // every pox-4 stack-stx / stack-extend of the fixture has its cycle range indexed, as the decoder reads it
    const ranges = await db.sql<{ value_hex: string; start_cycle_id: string | null; end_cycle_id: string | null }[]>`
      SELECT DISTINCT e.value_hex, c.start_cycle_id::text, c.end_cycle_id::text FROM events e
      JOIN pox_event_cycles c ON c.value_md5 = md5(e.value_hex) WHERE e.contract_id LIKE '%.pox-4'`;
    expect(ranges.length).toBeGreaterThan(5);
    for (const r of ranges) {
      const d = decodePoxPrintEvent(r.value_hex)!;
      const want = [d.data.start_cycle_id, d.data.end_cycle_id].map((v) => (v === null || v === undefined ? null : String(v)));
      expect([r.start_cycle_id, r.end_cycle_id]).toEqual(want);
    }
    await backfill(db.sql);
    expect(await stackingTables(db.sql)).toEqual(ingested);

    // the block of cycle 14 stops being canonical, then is restored
    const hash = cycles[3].index_block_hash;
    await db.sql`SELECT derived_apply(${[hash]}::text[], -1)`;
    const [off] = await db.sql`SELECT count(*)::int AS n FROM pox_sets WHERE canonical AND cycle_number = 14`;
    expect(off.n).toBe(0);
    expect((await db.sql`SELECT canonical FROM pox_cycles WHERE cycle_number = 14`)[0].canonical).toBe(false);
    await db.sql`SELECT derived_apply(${[hash]}::text[], 1)`;
    expect(await stackingTables(db.sql)).toEqual(ingested);
  });
});

describe('pool delegations through the service', () => {
  const SCENARIO = 'regtest-env-pox-4-stack-stx-in-reward-phase-S1';
  const POOL = testnetAddress();
  const OTHER_POOL = testnetAddress();
  const [S1, S2, S3, S4, S5] = Array.from({ length: 5 }, testnetAddress);
  let svc: TestService;
  let tip: any;

  const delegate = (stacker: string, pool: string, amount: bigint, until: bigint | null) =>
    poxPrint('delegate-stx', stacker, {
      'amount-ustx': cv.uint(amount),
      'delegate-to': cv.principal(pool),
      'unlock-burn-height': until === null ? cv.none() : cv.some(cv.uint(until)),
      'pox-addr': cv.none(),
      'end-cycle-id': cv.none(),
      'start-cycle-id': cv.uint(7n),
    });
  const revoke = (stacker: string, pool: string) =>
    poxPrint('revoke-delegate-stx', stacker, { 'delegate-to': cv.principal(pool), 'end-cycle-id': cv.none(), 'start-cycle-id': cv.uint(7n) });

  /** The next block: one tx per print value (each a burnchain op tx, test/helpers/pox-print.ts). */
  async function nextBlock(prints: string[]): Promise<{ height: number; txids: string[] }> {
    const { body, txids } = poxOpBlock(tip, prints);
    await deliverOk(svc, '/new_block', body);
    tip = body;
    return { height: body.block_height, txids };
  }

  let first: { height: number; txids: string[] };
  let second: { height: number; txids: string[] };
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({ STACKS_CHAIN_ID: '0x80000000' }, { fixture: SCENARIO });
    const lines = readFixture(SCENARIO);
    tip = JSON.parse(lines.filter((l) => l.path === '/new_block').at(-1)!.body);
    const burn = BigInt(tip.burn_block_height);
    first = await nextBlock([
      delegate(S1, POOL, 100n, null),
      delegate(S2, POOL, 200n, burn + 100n),
      delegate(S3, POOL, 300n, null),
      delegate(S4, OTHER_POOL, 400n, null),
      delegate(S5, POOL, 500n, burn - 1n), // already expired
    ]);
    second = await nextBlock([revoke(S3, POOL), delegate(S1, POOL, 150n, null), delegate(S4, `${POOL}.pool-v1`, 450n, null)]);
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('the newest delegate-stx per stacker, revoked and expired ones left out, newest first, paged', async () => {
    const all = await get(svc.api, `/extended/v1/pox4/${POOL}/delegations`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(2);
    expect(all.body.results).toEqual([
      { stacker: S1, amount_ustx: '150', block_height: second.height, tx_id: second.txids[1] },
      { stacker: S2, amount_ustx: '200', burn_block_unlock_height: Number(BigInt(tip.burn_block_height) + 100n), block_height: first.height, tx_id: first.txids[1] },
    ]);
    const page = await get(svc.api, `/extended/v1/pox4/${POOL}/delegations?limit=1&offset=1`);
    expect(page.body).toMatchObject({ limit: 1, offset: 1, total: 2 });
    expect(page.body.results.map((r: any) => r.stacker)).toEqual([S2]);
    expect((await get(svc.api, `/extended/v1/pox4/${POOL}/delegations?offset=5`)).body).toMatchObject({ total: 0, results: [] });
  });

  it('height and after_block bound the events read; other pools and PoX versions are apart', async () => {
    const atFirst = await get(svc.api, `/extended/v1/pox4/${POOL}/delegations?height=${first.height}`);
    expect(atFirst.body.results.map((r: any) => [r.stacker, r.amount_ustx])).toEqual([
      [S3, '300'],
      [S2, '200'],
      [S1, '100'],
    ]);
    const after = await get(svc.api, `/extended/v1/pox4/${POOL}/delegations?after_block=${first.height}`);
    expect(after.body.results.map((r: any) => r.stacker)).toEqual([S1]);
    expect((await get(svc.api, `/extended/v1/pox4/${OTHER_POOL}/delegations`)).body.results.map((r: any) => r.stacker)).toEqual([S4]);
    // a contract pool of the same deployer is another pool
    const contractPool = await get(svc.api, `/extended/v1/pox4/${POOL}.pool-v1/delegations`);
    expect(contractPool.body.results.map((r: any) => [r.stacker, r.amount_ustx])).toEqual([[S4, '450']]);
    expect((await get(svc.api, `/extended/v1/pox3/${POOL}/delegations`)).body.total).toBe(0);
    expect((await get(svc.api, `/extended/v1/pox4/${POOL}/delegations?height=${second.height + 1}`)).status).toBe(404);
  });

  it('the events carry the reference fields; the stacker and tx views agree', async () => {
    const ev = await get(svc.api, `/extended/v1/pox4/stacker/${S2}`);
    expect(ev.body.results).toHaveLength(1);
    expect(ev.body.results[0]).toMatchObject({
      name: 'delegate-stx',
      stacker: S2,
      pox_addr: null,
      pox_addr_raw: '0x',
      tx_id: first.txids[1],
      data: { amount_ustx: '200', delegate_to: POOL, end_cycle_id: null, start_cycle_id: '7' },
    });
    const tx = await get(svc.api, `/extended/v1/pox4/tx/${first.txids[1]}`);
    expect(tx.body.results).toEqual(ev.body.results);
    const revoked = await get(svc.api, `/extended/v1/pox4/tx/${second.txids[0]}`);
    expect(revoked.body.results[0]).toMatchObject({ name: 'revoke-delegate-stx', data: { delegate_to: POOL } });
    expect(revoked.body.results[0].data).not.toHaveProperty('unlock_burn_height');
    const latest = await get(svc.api, '/extended/v1/pox4/events?limit=2');
    expect(latest.body.results.map((r: any) => r.tx_id)).toEqual([second.txids[2], second.txids[1]]);
  });
});
