/**
 * The pure serializers of src/views (shared by REST and push) on rows recorded from real imports: each recorded stream
 * with recorded answers is imported once (test/helpers/fixture-db.ts), the rows behind every block, transaction, burn
 * block and microblock the reference answered for are read from that database, and what the serializer makes of them
 * alone, with no route and no HTTP, must equal the reference's recorded answer (fixtures/golden/<scenario>.json and
 * fixtures/golden-ext/<scenario>.json), wall-clock values aside. Then
 * hand-written rows for the edges a stream may not show or whose value is a rule: the unconfirmed microblock tx, a
 * missing block time, tenure heights, sponsored txs, the key order, dropped mempool txs, lock events in asset lists,
 * microblock parents and the supply figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createFixtureDatabase } from '../helpers/fixture-db.js';
import type { TestDatabase } from '../helpers/db.js';
import { FIXTURES_DIR, fixtureNames, readGolden, readGoldenExt } from '../helpers/fixtures.js';
import { stripVolatile, type GoldenEntry } from '../helpers/golden-compare.js';
import { blockV1Json, blockV2Json, v1BlockJson, listBlockMicroblocks, singleBlockMicroblocks } from '../../src/views/blocks.js';
import { addressAssetEventJson, mempoolTxJson, txJson } from '../../src/views/txs.js';
import { groupMicroblockRows, microblockJson, microblockPushJson, microStxToStx, supplyFigures, withThousands } from '../../src/views/explorer.js';
import { burnBlockJson } from '../../src/views/nakamoto.js';
import { ftBalancesJson, nftCountsJson, nftHistoryJson, nftHoldingsJson, nftMintsJson } from '../../src/views/tokens.js';
import type { HoldingRow, NftEventRow } from '../../src/store/tokens.js';
import { burnBlockByRef } from '../../src/store/burn-blocks.js';
import { microblockByHash, microblockPage } from '../../src/store/microblocks.js';
import { v1BlockExtras } from '../../src/store/blocks.js';
import { BLOCK_COLUMNS, type BlockDbRow } from '../../src/store/block-columns.js';
import { ABI_SUBQUERY, REPLACED_BY, TX_COLUMNS, txEvents, type MempoolDbRow, type TxDbRow } from '../../src/store/txs.js';
import type { MicroblockDbRow } from '../../src/store/microblocks.js';
import type { Sql } from '../../src/store/sql.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What the HTTP layer sends: the serializer's object as JSON. */
const asSent = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

async function blockRow(sql: Sql, indexBlockHash: string): Promise<BlockDbRow> {
  const [row] = await sql<BlockDbRow[]>`SELECT ${sql(BLOCK_COLUMNS)} FROM blocks WHERE index_block_hash = ${indexBlockHash}`;
  expect(row, `block ${indexBlockHash} is stored`).toBeDefined();
  return row;
}

async function txRow(sql: Sql, txId: string, indexBlockHash: string, microblockHash: string): Promise<TxDbRow> {
  const [row] = await sql<TxDbRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId} AND x.index_block_hash = ${indexBlockHash} AND x.microblock_hash = ${microblockHash}`;
  expect(row, `tx ${txId} in ${indexBlockHash} is stored`).toBeDefined();
  return row;
}

async function mempoolRow(sql: Sql, txId: string): Promise<MempoolDbRow> {
  const [row] = await sql<MempoolDbRow[]>`
    SELECT x.tx_id, x.api, x.status, ${sql.unsafe(REPLACED_BY)}, x.receipt_time, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ${txId}`;
  expect(row, `mempool tx ${txId} is stored`).toBeDefined();
  return row;
}

const pathOf = (e: GoldenEntry) => e.request.split('?')[0];
const queryOf = (e: GoldenEntry) => new URLSearchParams(e.request.split('?')[1] ?? '');
/** Block 1's txs: where boot txs were adopted, the reference's order among tied indexes is storage order (fixtures/README.md). */
const txsAsSet = (b: Json): Json => (b.height === 1 && Array.isArray(b.txs) ? { ...b, txs: [...b.txs].sort() } : b);

const scenarios = fixtureNames().filter((n) => existsSync(path.join(FIXTURES_DIR, 'golden', `${n}.json`)));

describe('serializers on recorded rows, against the reference answers', () => {
  it('every recorded stream has recorded answers', () => {
    expect(scenarios).toEqual(fixtureNames());
  });

  for (const scenario of scenarios) {
    describe(scenario, () => {
      const golden = readGolden<GoldenEntry[]>(`${scenario}.json`).filter((e) => e.status === 200);
      // the GETs of the other families (fixtures/golden-ext), answered 200
      const ext = existsSync(path.join(FIXTURES_DIR, 'golden-ext', `${scenario}.json`))
        ? readGoldenExt<GoldenEntry[]>(`${scenario}.json`).filter((e) => typeof e.request === 'string' && e.status === 200)
        : [];
      const microblockAnswers = ext.filter((e) => /^\/extended\/v1\/microblock(\/0x[0-9a-f]{64})?$/.test(pathOf(e)));
      let db: TestDatabase;
      beforeAll(async () => {
        db = await createFixtureDatabase(scenario, 'sp_views');
      }, 600_000);
      afterAll(async () => {
        await db?.drop();
      });

      it('blockV2Json: every block answered alone or in a list', async () => {
        const wanted: Json[] = [];
        for (const e of golden) {
          const p = pathOf(e);
          if (p === '/extended/v2/blocks') wanted.push(...(e.body as Json).results);
          else if (p.startsWith('/extended/v2/blocks/')) wanted.push(e.body as Json);
        }
        expect(wanted.length, 'the reference answered v2 blocks').toBeGreaterThan(0);
        for (const want of wanted) {
          const row = await blockRow(db.sql, want.index_block_hash);
          expect(asSent(blockV2Json(row)), `${scenario} v2 block ${want.height}`).toEqual(want);
        }
      });

      it('v1BlockJson: single lookups and list pages, with their stored microblocks and txs', async () => {
        let compared = 0;
        for (const e of golden) {
          const p = pathOf(e);
          if (p === '/extended/v1/block') {
            const page = (e.body as Json).results as Json[];
            const rows = await Promise.all(page.map((b) => blockRow(db.sql, b.index_block_hash)));
            const extras = await v1BlockExtras(db.sql, rows, false);
            expect(rows.map((r) => txsAsSet(asSent(v1BlockJson(r, extras, false)) as Json)), e.request).toEqual(page.map(txsAsSet));
            compared += rows.length;
          } else if (/^\/extended\/v1\/block\/(0x[0-9a-f]{64}|by_height\/\d+|by_burn_block_height\/\d+)$/.test(p)) {
            const want = e.body as Json;
            const row = await blockRow(db.sql, want.index_block_hash);
            const got = v1BlockJson(row, await v1BlockExtras(db.sql, [row], true), true);
            expect(txsAsSet(asSent(got) as Json), e.request).toEqual(txsAsSet(want));
            compared++;
          }
        }
        expect(compared, 'the reference answered v1 blocks').toBeGreaterThan(0);
      });

      it('txJson and mempoolTxJson: every transaction looked up by id, with its page of events', async () => {
        let mined = 0;
        for (const e of golden) {
          if (!/^\/extended\/v1\/tx\/0x[0-9a-f]{64}$/.test(pathOf(e))) continue;
          const want = stripVolatile(e.body) as Json;
          const q = queryOf(e);
          const excludeFunctionArgs = q.get('exclude_function_args') === 'true';
          if (want.block_hash === undefined) {
            // a mempool tx (pending or dropped): receipt times are the recording's wall clock
            const row = await mempoolRow(db.sql, want.tx_id);
            expect(stripVolatile(asSent(mempoolTxJson(row, { excludeFunctionArgs }))), e.request).toEqual(want);
            continue;
          }
          const microblockHash = want.microblock_hash === '0x' ? '' : want.microblock_hash;
          const indexBlockHash = want.is_unanchored ? '' : (await blockByHash(db.sql, want.block_hash));
          const row = await txRow(db.sql, want.tx_id, indexBlockHash, microblockHash);
          const limit = Number(q.get('event_limit')) || 20;
          const offset = Number(q.get('event_offset') ?? 0);
          const events = await txEvents(db.sql, row, { limit, offset });
          expect(stripVolatile(asSent(txJson(row, { events, excludeFunctionArgs }))), e.request).toEqual(want);
          mined++;
        }
        expect(mined, 'the reference answered mined txs by id').toBeGreaterThan(0);
      });

      it('burnBlockJson: every burn block answered alone or in a list', async () => {
        const wanted: Json[] = [];
        for (const e of ext) {
          const p = pathOf(e);
          if (p === '/extended/v2/burn-blocks') wanted.push(...(e.body as Json).results);
          else if (/^\/extended\/v2\/burn-blocks\/[^/]+$/.test(p)) wanted.push(e.body as Json);
        }
        expect(wanted.length, 'the reference answered burn blocks').toBeGreaterThan(0);
        for (const want of wanted) {
          const row = await burnBlockByRef(db.sql, { hash: want.burn_block_hash });
          expect(row, `burn block ${want.burn_block_hash}`).toBeDefined();
          expect(asSent(burnBlockJson(row!)), `${scenario} burn block ${want.burn_block_height}`).toEqual(want);
        }
      });

      if (microblockAnswers.length) {
        it('microblockJson: microblocks looked up by hash, and list pages grouped from their rows', async () => {
          for (const e of microblockAnswers) {
            const want = e.body as Json;
            if (pathOf(e) === '/extended/v1/microblock') {
              const page = await microblockPage(db.sql, { limit: want.limit, offset: want.offset });
              expect(asSent(groupMicroblockRows(page.rows)), e.request).toEqual(want.results);
            } else {
              const found = await microblockByHash(db.sql, want.microblock_hash);
              expect(found, e.request).toBeDefined();
              expect(asSent(microblockJson(found!.row, found!.txIds)), e.request).toEqual(want);
            }
          }
        });
      }
    });
  }
});

/** The index block hash of the canonical block with this block hash. */
async function blockByHash(sql: Sql, blockHash: string): Promise<string> {
  const [r] = await sql<{ h: string }[]>`SELECT index_block_hash AS h FROM blocks WHERE block_hash = ${blockHash} AND canonical`;
  expect(r, `canonical block ${blockHash}`).toBeDefined();
  return r.h;
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-written rows: one edge each.

const H = (c: string) => '0x' + c.repeat(64);

function txRowOf(over: Partial<TxDbRow> = {}): TxDbRow {
  return {
    tx_id: H('1'),
    index_block_hash: H('2'),
    microblock_hash: '',
    block_hash: H('3'),
    block_height: 7,
    block_time: 1_700_000_100,
    burn_block_time: 1_700_000_000,
    burn_block_height: 107,
    parent_burn_block_time: 1_699_999_400,
    parent_block_hash: H('4'),
    tx_index: 2,
    microblock_sequence: 2147483647,
    status: 'success',
    raw_result: '0x0703', // (ok true)
    vm_error: null,
    event_count: 0,
    execution_cost_read_count: 1,
    execution_cost_read_length: 2,
    execution_cost_runtime: 3,
    execution_cost_write_count: 4,
    execution_cost_write_length: 5,
    canonical: true,
    microblock_canonical: true,
    api: {
      tx_id: H('1'),
      nonce: 5,
      fee_rate: '180',
      sender_address: 'ST2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7',
      sponsored: false,
      post_condition_mode: 'deny',
      post_conditions: [],
      anchor_mode: 'any',
      tx_type: 'token_transfer',
      token_transfer: { recipient_address: 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5', amount: '1000', memo: '0x00' },
    } as unknown as TxDbRow['api'],
    ...over,
  };
}

function blockRowOf(over: Partial<BlockDbRow> = {}): BlockDbRow {
  return {
    index_block_hash: H('a'),
    block_hash: H('b'),
    block_height: 12,
    block_time: 1_700_000_600,
    burn_block_time: 1_700_000_500,
    burn_block_hash: H('c'),
    burn_block_height: 112,
    parent_index_block_hash: H('d'),
    parent_block_hash: H('e'),
    parent_microblock_hash: H('f'),
    parent_microblock_sequence: 3,
    miner_txid: H('9'),
    tenure_height: 11,
    signer_bitvec: null,
    tx_count: 4,
    execution_cost_read_count: 10,
    execution_cost_read_length: 20,
    execution_cost_runtime: 30,
    execution_cost_write_count: 40,
    execution_cost_write_length: 50,
    canonical: true,
    ...over,
  };
}

describe('txJson on hand-written rows', () => {
  it('an anchored tx: placement fields from the row, result decoded, payload last (the reference key order)', () => {
    const j = txJson(txRowOf());
    expect(j).toMatchObject({
      block_hash: H('3'),
      block_height: 7,
      block_time: 1_700_000_100,
      block_time_iso: '2023-11-14T22:15:00.000Z',
      burn_block_time_iso: '2023-11-14T22:13:20.000Z',
      parent_burn_block_time_iso: '2023-11-14T22:03:20.000Z',
      tx_status: 'success',
      tx_result: { hex: '0x0703', repr: '(ok true)' },
      is_unanchored: false,
      microblock_hash: '0x',
      microblock_canonical: true,
      events: [],
      execution_cost_write_length: 5,
    });
    const keys = Object.keys(j);
    expect(keys.slice(0, 2)).toEqual(['tx_id', 'nonce']);
    expect(keys.slice(-2)).toEqual(['tx_type', 'token_transfer']);
    // the placement sits between the static head and the payload
    expect(keys.indexOf('sponsored')).toBeLessThan(keys.indexOf('block_hash'));
    expect(keys.indexOf('events')).toBeLessThan(keys.indexOf('tx_type'));
  });

  it('a tx of the unconfirmed microblock stream: no block hash, unanchored, its microblock named', () => {
    const j = txJson(txRowOf({ block_hash: '', index_block_hash: '', microblock_hash: H('5'), microblock_sequence: 0, block_time: 0 }));
    expect(j).toMatchObject({
      block_hash: '0x',
      is_unanchored: true,
      microblock_hash: H('5'),
      microblock_sequence: 0,
      // no block time yet: the burn block's
      block_time: 1_700_000_000,
      block_time_iso: '2023-11-14T22:13:20.000Z',
    });
  });

  it('no times at all: the ISO strings are empty where the reference prints them empty', () => {
    const j = txJson(txRowOf({ block_time: 0, burn_block_time: 0, parent_burn_block_time: 0 }));
    expect(j).toMatchObject({ block_time: 0, block_time_iso: '', burn_block_time_iso: '', parent_burn_block_time_iso: '' });
  });

  it('a sponsored tx keeps its sponsor fields from the stored static JSON; a failed one its vm_error and result', () => {
    const api = { ...(txRowOf().api as unknown as Json), sponsored: true, sponsor_address: 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5', sponsor_nonce: 9 };
    const j = txJson(txRowOf({ api: api as TxDbRow['api'], status: 'abort_by_response', raw_result: '0x080100000000000000000000000000000001', vm_error: null }));
    expect(j).toMatchObject({ sponsored: true, sponsor_address: 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5', sponsor_nonce: 9, tx_status: 'abort_by_response' });
    expect(j.tx_result).toEqual({ hex: '0x080100000000000000000000000000000001', repr: '(err u1)' });
    expect(txJson(txRowOf({ status: 'abort_by_post_condition', vm_error: 'post-condition check failed' })).vm_error).toBe('post-condition check failed');
  });

  it('the events given are embedded as given', () => {
    const events = [{ event_index: 0, event_type: 'stx_asset' }];
    expect(txJson(txRowOf({ event_count: 1 }), { events }).events).toBe(events);
  });
});

describe('mempoolTxJson on hand-written rows', () => {
  const row: MempoolDbRow = { tx_id: H('1'), api: txRowOf().api, status: 'pending', replaced_by_tx_id: null, receipt_time: 1_700_000_000 };

  it('a pending tx: its status, receipt time and payload last', () => {
    const j = mempoolTxJson(row);
    expect(j).toMatchObject({ tx_status: 'pending', replaced_by_tx_id: null, receipt_time: 1_700_000_000, receipt_time_iso: '2023-11-14T22:13:20.000Z' });
    expect(Object.keys(j).slice(-2)).toEqual(['tx_type', 'token_transfer']);
  });

  it('a dropped tx names what replaced it; a status given overrides the stored one', () => {
    const dropped = { ...row, status: 'dropped_replace_by_fee', replaced_by_tx_id: H('6') };
    expect(mempoolTxJson(dropped)).toMatchObject({ tx_status: 'dropped_replace_by_fee', replaced_by_tx_id: H('6') });
    expect(mempoolTxJson(row, { status: 'dropped_stale_garbage_collect' }).tx_status).toBe('dropped_stale_garbage_collect');
  });
});

describe('addressAssetEventJson', () => {
  it("prints a lock event as the reference's asset list does, and leaves every other event alone", () => {
    const lock = { event_index: 3, event_type: 'stx_lock', stx_lock_event: { locked_amount: '5000', unlock_height: 250, locked_address: 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5' } };
    expect(addressAssetEventJson(lock)).toEqual({ ...lock, stx_lock_event: { ...lock.stx_lock_event, locked_amount: '1', unlock_height: 1 } });
    expect(lock.stx_lock_event.locked_amount).toBe('5000'); // the stored event is not changed
    const transfer = { event_index: 1, event_type: 'stx_asset', asset: { amount: '7' } };
    expect(addressAssetEventJson(transfer)).toBe(transfer);
    expect(addressAssetEventJson(null)).toBeNull();
  });
});

describe('block serializers on hand-written rows', () => {
  it('blockV2Json: every field from the row, the height and hash renamed, the times also as ISO strings', () => {
    const row = blockRowOf();
    // what the v2 form leaves out (the v1 form has the parent microblock; the bitvec only marks a Nakamoto block)
    const { block_height, block_hash, parent_microblock_hash, parent_microblock_sequence, signer_bitvec, ...same } = row;
    void [parent_microblock_hash, parent_microblock_sequence, signer_bitvec];
    expect(blockV2Json(row)).toEqual({
      ...same,
      height: block_height,
      hash: block_hash,
      block_time_iso: '2023-11-14T22:23:20.000Z',
      burn_block_time_iso: '2023-11-14T22:21:40.000Z',
    });
  });

  it('no tenure height in the payload: its own height before Nakamoto, -1 for a signed (Nakamoto) block', () => {
    expect(blockV2Json(blockRowOf({ tenure_height: null })).tenure_height).toBe(12);
    expect(blockV2Json(blockRowOf({ tenure_height: null, signer_bitvec: '0x0100' })).tenure_height).toBe(-1);
    expect(blockV2Json(blockRowOf({ tenure_height: 0, signer_bitvec: '0x0100' })).tenure_height).toBe(0);
  });

  it('blockV1Json: a block without a time of its own takes the burn block time', () => {
    const meta = { txs: [H('1')], microblocks_accepted: [], microblocks_streamed: [], microblock_tx_count: {} };
    expect(blockV1Json(blockRowOf({ block_time: 0 }), meta)).toMatchObject({ block_time: 1_700_000_500, block_time_iso: '2023-11-14T22:21:40.000Z', txs: [H('1')] });
    expect(blockV1Json(blockRowOf(), meta)).toMatchObject({ block_time: 1_700_000_600, parent_microblock_hash: H('f'), parent_microblock_sequence: 3 });
  });

  it('microblocks of a block: accepted from the parent stream, streamed on the block, in the orders of the reference', () => {
    const b = blockRowOf();
    const mb = (hash: string, seq: number, parent: string, confirmedBy: string) => ({ microblock_hash: hash, microblock_sequence: seq, parent_index_block_hash: parent, index_block_hash: confirmedBy });
    // two microblocks on the parent that this block confirmed, one streamed on this block, one the parent confirmed
    const rows = [mb(H('1'), 1, H('d'), H('a')), mb(H('0'), 0, H('d'), H('a')), mb(H('7'), 0, H('a'), ''), mb(H('8'), 0, H('e'), H('d'))];
    const counts = new Map([[H('0'), 2], [H('1'), 1]]);
    expect(singleBlockMicroblocks(b, rows, counts)).toEqual({
      microblocks_accepted: [H('0'), H('1')],
      microblocks_streamed: [H('7')],
      microblock_tx_count: { [H('0')]: 2, [H('1')]: 1 },
    });
    // the list form: accepted newest first; "streamed" = the microblocks the parent confirmed
    expect(listBlockMicroblocks(b, rows, counts)).toEqual({
      microblocks_accepted: [H('1'), H('0')],
      microblocks_streamed: [H('8')],
      microblock_tx_count: { [H('1')]: 1, [H('0')]: 2 },
    });
  });
});

describe('microblock serializers on hand-written rows', () => {
  const row: MicroblockDbRow = {
    microblock_hash: H('5'),
    microblock_sequence: 2,
    microblock_parent_hash: H('4'),
    block_height: 13,
    block_hash: '',
    parent_block_height: null,
    parent_block_hash: null,
    parent_burn_block_height: 112,
    parent_burn_block_hash: H('c'),
    parent_burn_block_time: 0,
    canonical: true,
    microblock_canonical: true,
  };

  it('an unconfirmed microblock with no stored parent: the parent height below its own, hashes as 0x, no ISO time', () => {
    expect(microblockJson(row, [H('1')])).toEqual({
      canonical: true,
      microblock_canonical: true,
      microblock_hash: H('5'),
      microblock_sequence: 2,
      microblock_parent_hash: H('4'),
      block_height: 13,
      parent_block_height: 12,
      parent_block_hash: '0x',
      parent_burn_block_hash: H('c'),
      parent_burn_block_time: 0,
      parent_burn_block_time_iso: '',
      parent_burn_block_height: 112,
      block_hash: '0x',
      txs: [H('1')],
    });
  });

  it('the push form: the same values, in the order the reference pushes them', () => {
    const confirmed = { ...row, block_hash: H('b'), parent_block_height: 11, parent_block_hash: H('e'), parent_burn_block_time: 1_700_000_500 };
    const push = microblockPushJson(confirmed, []);
    expect(push).toEqual(microblockJson(confirmed, []));
    expect(Object.keys(push).slice(-5)).toEqual(['txs', 'parent_burn_block_height', 'parent_burn_block_hash', 'parent_burn_block_time', 'parent_burn_block_time_iso']);
    expect(push).toMatchObject({ parent_block_height: 11, parent_block_hash: H('e'), parent_burn_block_time_iso: '2023-11-14T22:21:40.000Z' });
  });
});

describe('supply figures', () => {
  it('micro-STX as STX with six decimals, thousands marked, negative amounts kept', () => {
    expect(microStxToStx(1_234_500_000n)).toBe('1234.500000');
    expect(microStxToStx(-1n)).toBe('-0.000001');
    expect(withThousands('1234567.000001')).toBe('1,234,567.000001');
    expect(withThousands('999')).toBe('999');
  });

  it('the percentage is 100.00 of a non-empty supply and NaN of an empty one (the reference divides by itself)', () => {
    expect(supplyFigures(1_000_000_000_000n)).toEqual({
      unlocked_percent: '100.00',
      total_stx: '1000000.000000',
      total_stx_year_2050: '2318000000.000000',
      unlocked_stx: '1000000.000000',
    });
    expect(supplyFigures(0n).unlocked_percent).toBe('NaN');
  });
});

describe('token serializers on hand-written rows', () => {
  const A = 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5';
  const B = 'ST2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';
  const NFT = `${A}.punks::punk`;
  const holding: HoldingRow = { asset_identifier: NFT, value_hex: '0x0100000000000000000000000000000007', block_height: 9, tx_id: H('1'), total: 2 };
  const event: NftEventRow = { tx_id: H('1'), index_block_hash: H('2'), microblock_hash: '', event_index: 3, asset_event_type: 'transfer', sender: A, recipient: B, value_hex: '0x0100000000000000000000000000000007', total: 1 };

  it('FT balances: received − sent per asset, sorted by asset id as the reference compares them', () => {
    const rows = [
      { asset_identifier: `${B}.zeta::z`, received: '10', sent: '4' },
      { asset_identifier: `${A}.alpha::a`, received: '18446744073709551616', sent: '1' },
    ];
    const j = ftBalancesJson(rows);
    expect(Object.keys(j)).toEqual([`${A}.alpha::a`, `${B}.zeta::z`]);
    expect(j[`${A}.alpha::a`]).toEqual({ balance: '18446744073709551615', total_sent: '1', total_received: '18446744073709551616' });
    expect(j[`${B}.zeta::z`]).toEqual({ balance: '6', total_sent: '4', total_received: '10' });
    expect(nftCountsJson([{ asset_identifier: NFT, received: '3', sent: '3' }])).toEqual({ [NFT]: { count: '0', total_sent: '3', total_received: '3' } });
  });

  it('NFT holdings, history and mints: the value decoded; a tx id, or with tx metadata the tx (rows whose tx is not found left out)', () => {
    const value = { hex: '0x0100000000000000000000000000000007', repr: 'u7' };
    expect(nftHoldingsJson([holding], undefined)).toEqual([{ asset_identifier: NFT, value, block_height: 9, tx_id: H('1') }]);
    expect(nftHistoryJson([event], undefined)).toEqual([{ sender: A, recipient: B, event_index: 3, asset_event_type: 'transfer', tx_id: H('1') }]);
    expect(nftMintsJson([{ ...event, asset_event_type: 'mint', sender: null }], undefined)).toEqual([{ recipient: B, event_index: 3, value, tx_id: H('1') }]);
    const txs = new Map([[H('1'), txRowOf()]]);
    const [withTx] = nftHoldingsJson([holding, { ...holding, tx_id: H('8') }], txs) as Json[];
    expect(nftHoldingsJson([holding, { ...holding, tx_id: H('8') }], txs)).toHaveLength(1);
    expect(withTx.tx).toEqual(txJson(txRowOf(), { events: [], excludeFunctionArgs: false }));
    expect(withTx).not.toHaveProperty('tx_id');
  });
});
