/**
 * The pure serializers of src/views/bns.ts, src/views/pox.ts and src/views/v3.ts on rows read from imported recorded
 * streams through the store functions the routes use: what a serializer makes of those rows alone, with no route and
 * no HTTP, must equal the reference's recorded answer (fixtures/golden-ext/<scenario>.json: the BNS v1 names and
 * address answers, the /extended/v1/pox{2,3,4} event lists, the /extended/v2/pox cycles, signers and stackers). The
 * v3 summaries have no recorded answers: they are compared field by field with the recorded v1 answer of the same
 * transaction (fixtures/golden). Then hand-written rows for the edges whose value is a rule: BNS-V2 names without an
 * owner or renewal height, names of expired or revoked parents, signers of an empty cycle, who stacks with a signer,
 * sponsored and pending v3 summaries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createFixtureDatabase } from '../helpers/fixture-db.js';
import type { TestDatabase } from '../helpers/db.js';
import { FIXTURES_DIR, fixtureNames, readGolden, readGoldenExt } from '../helpers/fixtures.js';
import type { GoldenEntry } from '../helpers/golden-compare.js';
import { nameInfo, ownedNames, subdomainInfo, v2NameInfo, BNS_BLOCKCHAIN } from '../../src/views/bns.js';
import { cycleStackers, poxCycleJson, poxEventsJson, poxSignerJson, signerStackersJson, stackedPercent } from '../../src/views/pox.js';
import { mempoolSummaryJson, principalTxJson, txSummaryJson } from '../../src/views/v3.js';
import { currentNames, currentNameSet, latestSubdomain, nameOfSubdomain, namesOwnedBy, type BnsNameRow, type BnsSubdomainRow } from '../../src/store/bns.js';
import { bnsV2Names, bnsV2NamesOwnedBy, type BnsV2NameRow } from '../../src/store/bns-v2.js';
import {
  poxCycle,
  poxCycles,
  poxEvents,
  poxEventsOfStacker,
  poxEventsOfTx,
  poxSignerEvents,
  poxSigners,
  type PoxSignerRow,
  type PoxVersion,
} from '../../src/store/pox.js';
import { recordedNetwork } from '../../src/store/network.js';
import { principalTxPage, type MempoolSummaryRow, type PrincipalTxV3Row } from '../../src/store/principals-v3.js';
import { codec } from '../../src/chain/native.js';
import { cv } from '../../src/chain/pox.js';
import { poxPrint, POX4_TESTNET } from '../helpers/pox-print.js';
import type { Sql } from '../../src/store/sql.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What the HTTP layer sends: the serializer's object as JSON. */
const asSent = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const pathOf = (e: GoldenEntry) => e.request.split('?')[0];

const answered = (scenario: string): GoldenEntry[] =>
  existsSync(path.join(FIXTURES_DIR, 'golden-ext', `${scenario}.json`))
    ? readGoldenExt<GoldenEntry[]>(`${scenario}.json`).filter((e) => typeof e.request === 'string' && e.status === 200)
    : [];

/** The canonical block with this block hash: its index block hash. */
async function indexHashOf(sql: Sql, blockHash: string): Promise<string> {
  const [r] = await sql<{ h: string }[]>`SELECT index_block_hash AS h FROM blocks WHERE block_hash = ${blockHash} AND canonical`;
  expect(r, `canonical block ${blockHash}`).toBeDefined();
  return r.h;
}

// Every recorded stream; those whose recorded answers hold names, and the one whose answers hold PoX cycles with data.
const SCENARIOS = fixtureNames();
const BNS_SCENARIOS = ['mainnet-out-of-order-microblock', 'mainnet-reorg-scenario2'];
const POX_SCENARIO = 'epoch-3-transition';

describe('serializers on recorded rows, against the reference answers', () => {
  it('every recorded stream has recorded answers, and the ones with names and cycles are among them', () => {
    for (const s of SCENARIOS) expect(answered(s).length, s).toBeGreaterThan(0);
    expect(SCENARIOS).toEqual(expect.arrayContaining([...BNS_SCENARIOS, POX_SCENARIO]));
  });

  for (const scenario of SCENARIOS) {
    describe(scenario, () => {
      const ext = answered(scenario);
      let db: TestDatabase;
      beforeAll(async () => {
        db = await createFixtureDatabase(scenario, 'sp_views_np');
      }, 600_000);
      afterAll(async () => {
        await db?.drop();
      });

      it('nameInfo / subdomainInfo / v2NameInfo: every name answered', async () => {
        let compared = 0;
        for (const e of ext) {
          const m = /^\/v1\/names\/([^/]+)$/.exec(pathOf(e));
          if (!m) continue;
          const name = m[1];
          const want = e.body as Json;
          let got: unknown;
          if (name.split('.').length === 3) {
            const sub = await latestSubdomain(db.sql, name);
            expect(sub, e.request).toBeDefined();
            expect((await currentNames(db.sql, [nameOfSubdomain(name)])).length, `${e.request}: its name is current`).toBe(1);
            got = subdomainInfo(sub!);
          } else {
            const [row] = await currentNames(db.sql, [name]);
            if (row) got = nameInfo(row);
            else {
              const [v2] = await bnsV2Names(db.sql, [name]);
              expect(v2, `${e.request}: a v1 or BNS-V2 name is stored`).toBeDefined();
              got = v2NameInfo(v2);
            }
          }
          expect(asSent(got), `${scenario} ${e.request}`).toEqual(want);
          compared++;
        }
        if (BNS_SCENARIOS.includes(scenario)) expect(compared, 'the reference answered names').toBeGreaterThan(0);
      });

      it('ownedNames: every address answered', async () => {
        let compared = 0;
        let nonEmpty = 0;
        for (const e of ext) {
          const m = /^\/v1\/addresses\/stacks\/([^/]+)$/.exec(pathOf(e));
          if (!m) continue;
          const owned = await namesOwnedBy(db.sql, m[1]);
          const valid = await currentNameSet(db.sql, [...new Set([...owned.names, ...owned.subdomains.map((s) => s.name)])]);
          const v2 = (await bnsV2NamesOwnedBy(db.sql, m[1])).map((r) => r.name);
          const got = { names: [...new Set([...ownedNames(owned, valid), ...v2])].sort() };
          expect(got, `${scenario} ${e.request}`).toEqual(e.body);
          compared++;
          if ((e.body as Json).names.length) nonEmpty++;
        }
        expect(compared, 'the reference answered addresses').toBeGreaterThan(0);
        if (BNS_SCENARIOS.includes(scenario)) expect(nonEmpty, 'an address holds a name').toBeGreaterThan(0);
      });

      it('poxCycleJson / poxSignerJson / signerStackersJson: every cycle, signer and stacker page answered', async () => {
        const mainnet = (await recordedNetwork(db.sql)) === 1;
        let rows = 0;
        for (const e of ext) {
          const p = pathOf(e);
          const want = e.body as Json;
          let m: RegExpExecArray | null;
          if (p === '/extended/v2/pox/cycles') {
            const page = await poxCycles(db.sql, { limit: want.limit, offset: want.offset });
            expect(page.rows.map(poxCycleJson), e.request).toEqual(want.results);
            rows += page.rows.length;
          } else if ((m = /^\/extended\/v2\/pox\/cycles\/(\d+)$/.exec(p))) {
            const row = await poxCycle(db.sql, Number(m[1]));
            expect(row, e.request).toBeDefined();
            expect(poxCycleJson(row!), e.request).toEqual(want);
            rows++;
          } else if ((m = /^\/extended\/v2\/pox\/cycles\/(\d+)\/signers$/.exec(p))) {
            const cycle = Number(m[1]);
            const page = await poxSigners(db.sql, cycle, { limit: want.limit, offset: want.offset });
            const stackers = cycleStackers(await poxSignerEvents(db.sql, cycle), cycle);
            expect(page.rows.map((r) => poxSignerJson(r, stackers, mainnet)), e.request).toEqual(want.results);
            rows += page.rows.length;
          } else if ((m = /^\/extended\/v2\/pox\/cycles\/(\d+)\/signers\/(?:0x)?([0-9a-f]+)(\/stackers)?$/.exec(p))) {
            const cycle = Number(m[1]);
            const key = `0x${m[2]}`;
            const stackers = cycleStackers(await poxSignerEvents(db.sql, cycle), cycle);
            if (m[3]) {
              const all = signerStackersJson(stackers, key);
              expect(all.slice(want.offset, want.offset + want.limit), e.request).toEqual(want.results);
              rows += want.results.length;
            } else {
              const { rows: [row] } = await poxSigners(db.sql, cycle, { signingKey: key, limit: 1, offset: 0 });
              expect(row, e.request).toBeDefined();
              expect(poxSignerJson(row, stackers, mainnet), e.request).toEqual(want);
              rows++;
            }
          }
        }
        if (scenario === POX_SCENARIO) expect(rows, 'the reference answered cycles, signers and stackers').toBeGreaterThan(0);
      });

      it('poxEventsJson: every page of pox-2/3/4 events answered, by page, tx or stacker', async () => {
        let events = 0;
        for (const e of ext) {
          const m = /^\/extended\/v1\/(pox[234])\/(events|tx\/(0x[0-9a-fA-F]{64})|stacker\/([^/]+))$/.exec(pathOf(e));
          if (!m) continue;
          const version = m[1] as PoxVersion;
          const want = e.body as Json;
          const rows = m[2] === 'events'
            ? await poxEvents(db.sql, version, { limit: want.limit, offset: want.offset })
            : m[3] !== undefined
              ? await poxEventsOfTx(db.sql, version, m[3].toLowerCase())
              : await poxEventsOfStacker(db.sql, version, m[4]);
          expect(asSent(poxEventsJson(rows)), `${scenario} ${e.request}`).toEqual(want.results);
          events += want.results.length;
        }
        if (scenario === POX_SCENARIO) expect(events, 'the reference answered pox-4 events').toBeGreaterThan(0);
      });

      it('txSummaryJson / principalTxJson: each mined tx looked up by id, as its sender sees it, against the v1 answer', async () => {
        const golden = readGolden<GoldenEntry[]>(`${scenario}.json`).filter((e) => e.status === 200 && /^\/extended\/v1\/tx\/0x[0-9a-f]{64}$/.test(pathOf(e)));
        const bySender = new Map<string, Json[]>();
        for (const e of golden) {
          const v1 = e.body as Json;
          if (v1.block_hash === undefined) continue; // pending
          bySender.set(v1.sender_address, [...(bySender.get(v1.sender_address) ?? []), v1]);
        }
        let compared = 0;
        for (const [sender, txs] of bySender) {
          const page = await principalTxPage(db.sql, sender, { limit: 5000 });
          expect(page.next, `${sender}: every tx on one page`).toBeNull();
          for (const v1 of txs) {
            const blockHash = v1.is_unanchored ? '' : v1.block_hash;
            const row = page.rows.find((r) => r.tx_id === v1.tx_id && r.block_hash === blockHash);
            if (!row && v1.block_height === 1) {
              // a genesis tx adopted by block 1: left out of the v3 set, marked as such (sql/0040 bit 256)
              const marks = await db.sql<{ roles: number }[]>`SELECT roles FROM principal_txs WHERE principal = ${sender} AND tx_id = ${v1.tx_id}`;
              expect(marks.length, `${v1.tx_id}: adopted by block 1`).toBeGreaterThan(0);
              for (const m of marks) expect(m.roles & 256, `${v1.tx_id}: adopted by block 1`).toBe(256);
              continue;
            }
            expect(row, `${v1.tx_id} is among ${sender}'s txs`).toBeDefined();
            const want = {
              tx_id: v1.tx_id,
              sender: { address: v1.sender_address, nonce: v1.nonce },
              sponsor: v1.sponsored ? { address: v1.sponsor_address, nonce: v1.sponsor_nonce } : null,
              fee_rate: v1.fee_rate,
              block: {
                height: v1.block_height,
                hash: v1.block_hash,
                index_hash: v1.is_unanchored ? '0x' : await indexHashOf(db.sql, v1.block_hash),
                time: v1.block_time,
                tx_index: v1.tx_index,
              },
              bitcoin_block: { height: v1.burn_block_height, time: v1.burn_block_time },
              status: v1.tx_status,
              ...v1TypePart(v1),
            };
            const got = asSent(txSummaryJson(row!)) as Json;
            if (v1.is_unanchored) {
              // the block time of a tx seen only in an unconfirmed microblock is its arrival time (as in stripVolatile)
              delete got.block.time;
              delete (want.block as Json).time;
            }
            expect(got, `${scenario} ${v1.tx_id}`).toEqual(want);
            const p = principalTxJson(row!) as Json;
            expect(p.transaction).toEqual(txSummaryJson(row!));
            expect(p.involvement, `${v1.tx_id}: its sender`).toBe('sender');
            compared++;
          }
        }
        expect(compared, 'the reference answered mined txs by id outside the genesis set').toBeGreaterThan(0);
      });
    });
  }
});

/** The type member of a v3 summary, from the v1 answer of the same tx. */
function v1TypePart(v1: Json): Json {
  switch (v1.tx_type) {
    case 'token_transfer': {
      const memo = v1.token_transfer.memo as string;
      return {
        type: 'token_transfer',
        token_transfer: {
          recipient: v1.token_transfer.recipient_address,
          amount: v1.token_transfer.amount,
          memo: memo ? { hex: memo, repr: codec.memoToString(memo) } : null,
        },
      };
    }
    case 'smart_contract':
      return { type: 'smart_contract', smart_contract: { clarity_version: v1.smart_contract.clarity_version, contract_id: v1.smart_contract.contract_id } };
    case 'contract_call':
      return { type: 'contract_call', contract_call: { contract_id: v1.contract_call.contract_id, function_name: v1.contract_call.function_name } };
    case 'poison_microblock':
      return { type: 'poison_microblock' };
    case 'coinbase':
      return { type: 'coinbase', coinbase: { alt_recipient: v1.coinbase_payload.alt_recipient ?? null } };
    case 'tenure_change':
      return { type: 'tenure_change', tenure_change: { cause: v1.tenure_change_payload.cause } };
    default:
      throw new Error(`unexpected tx type ${v1.tx_type}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-written rows: one edge each.

const H = (c: string) => '0x' + c.repeat(64);
const A = 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';
const B = 'SP1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5';

describe('BNS serializers on hand-written rows', () => {
  const v1: BnsNameRow = {
    name: 'alice.btc',
    address: A,
    registered_at: 10,
    expire_block: 0,
    zonefile_hash: 'ab'.repeat(20),
    status: 'name-update',
    tx_id: H('1'),
    zonefile: '$ORIGIN alice.btc\n',
  };

  it('a v1 name: its latest operation as the status, its tx as last_txid, no null fields', () => {
    expect(nameInfo(v1)).toEqual({
      address: A,
      blockchain: BNS_BLOCKCHAIN,
      expire_block: 0,
      last_txid: H('1'),
      status: 'name-update',
      zonefile: '$ORIGIN alice.btc\n',
      zonefile_hash: 'ab'.repeat(20),
    });
    expect(Object.values(nameInfo(v1))).not.toContain(null);
  });

  it('a BNS-V2 name: no owner prints an empty address, no renewal height leaves expire_block out', () => {
    const row: BnsV2NameRow = {
      name: 'bob.btc',
      namespace_id: 'btc',
      contract_id: `${A}.BNS-V2`,
      nft_id: '7',
      op: 'transfer',
      owner: null,
      registered_at: 20,
      renewal_height: null,
      tx_id: H('2'),
      block_height: 21,
    };
    expect(v2NameInfo(row)).toEqual({ address: '', blockchain: 'stacks', last_txid: H('2'), status: 'transfer', zonefile_hash: '' });
    expect(v2NameInfo({ ...row, owner: B, renewal_height: 5000 })).toEqual({
      address: B,
      blockchain: 'stacks',
      last_txid: H('2'),
      status: 'transfer',
      zonefile_hash: '',
      expire_block: 5000,
    });
  });

  it('a subdomain: its owner, resolver and zonefile, status registered_subdomain', () => {
    const sub: BnsSubdomainRow = {
      fully_qualified_subdomain: 'x.alice.btc',
      name: 'alice.btc',
      owner: B,
      zonefile_hash: 'cd'.repeat(20),
      zonefile: 'zone',
      resolver: 'https://resolver.example',
      tx_id: H('3'),
    };
    expect(subdomainInfo(sub)).toEqual({
      address: B,
      blockchain: 'stacks',
      last_txid: H('3'),
      resolver: 'https://resolver.example',
      status: 'registered_subdomain',
      zonefile: 'zone',
      zonefile_hash: 'cd'.repeat(20),
    });
  });

  it('owned names: those of names no longer current (expired or revoked) left out, the rest once each, sorted', () => {
    const owned = {
      names: ['zed.btc', 'gone.btc', 'alice.btc', 'alice.btc'],
      subdomains: [
        { name: 'alice.btc', fqn: 'b.alice.btc' },
        { name: 'gone.btc', fqn: 'a.gone.btc' },
        { name: 'alice.btc', fqn: 'a.alice.btc' },
      ],
    };
    expect(ownedNames(owned, new Set(['alice.btc', 'zed.btc']))).toEqual(['a.alice.btc', 'alice.btc', 'b.alice.btc', 'zed.btc']);
    expect(ownedNames(owned, new Set())).toEqual([]);
  });
});

describe('PoX serializers on hand-written rows', () => {
  it('a cycle: the numeric columns read as text become numbers, the stacked amount stays a string', () => {
    expect(
      poxCycleJson({ cycle_number: '14', block_height: '50', index_block_hash: H('a'), total_weight: '9', total_stacked_amount: '18446744073709551616', total_signers: 3 }),
    ).toEqual({ block_height: 50, index_block_hash: H('a'), cycle_number: 14, total_weight: 9, total_stacked_amount: '18446744073709551616', total_signers: 3 });
  });

  it('a signer of a cycle with nothing stacked and no weight: both percentages null, no stackers counted', () => {
    const key = '0x02' + '11'.repeat(32);
    const row: PoxSignerRow = { signing_key: key, weight: '0', stacked_amount: '0', total_weight: '0', total_stacked_amount: '0' };
    const j = poxSignerJson(row, [], false);
    expect(j).toMatchObject({ signing_key: key, weight: 0, stacked_amount: '0', weight_percent: null, stacked_amount_percent: null, pooled_stacker_count: 0, solo_stacker_count: 0 });
    // the address of the key is the same key on either network, with that network's version
    expect(j.signer_address.startsWith('ST')).toBe(true);
    expect(poxSignerJson(row, [], true).signer_address.startsWith('SP')).toBe(true);
    expect(signerStackersJson([], key)).toEqual([]);
  });

  it("who stacks with a signer in a cycle: the newest covering event per stacker, pooled ones under their operator's key", () => {
    const K1 = '0x02' + '11'.repeat(32);
    const K2 = '0x03' + '22'.repeat(32);
    const [P, Q, S1, S2, S3, S4, S5, S6] = [
      'STQM73RQC4EX0A07KWG1J5ECZJYBZS4SJ4ERC6WN', 'ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5', 'STRYYQQ9M8KAF4NS7WNZQYY59X93XEKR31JP64CP',
      'STF9B75ADQAVXQHNEQ6KGHXTG7JP305J2GRWF3A2', 'ST18MDW2PDTBSCR1ACXYRJP2JX70FWNM6YY2VX4SS', 'ST29V10QEA7BRZBTWRFC4M70NJ4J6RJB5P1C6EE84',
      'STEW4ZNT093ZHK4NEQKX8QJGM2Y7WWJ2FQQS5C19', 'ST2PGGD0ZXAWEMY4EZ025RD1X47EEVH287SQKA8BC',
    ];
    const cycles = (start: number, end: number) => ({ 'start-cycle-id': cv.uint(start), 'end-cycle-id': cv.some(cv.uint(end)) });
    const stackStx = (who: string, key: string, amount: number, start: number, end: number) =>
      poxPrint('stack-stx', who, {
        'lock-amount': cv.uint(amount), 'lock-period': cv.uint(end - start), 'start-burn-height': cv.uint(100), 'unlock-burn-height': cv.uint(200),
        'signer-key': cv.buffer(key), ...cycles(start, end),
      });
    const delegated = (who: string, pool: string, amount: number, start: number, end: number) =>
      poxPrint('delegate-stack-stx', who, {
        'lock-amount': cv.uint(amount), 'unlock-burn-height': cv.uint(300), 'start-burn-height': cv.uint(90), 'lock-period': cv.uint(end - start),
        delegator: cv.principal(pool), ...cycles(start, end),
      });
    // newest first, as poxSignerEvents reads them
    const prints = [
      poxPrint('stack-aggregation-commit-indexed', P, { 'reward-cycle': cv.uint(5), 'amount-ustx': cv.uint(3000), 'signer-key': cv.buffer(K1), ...cycles(5, 6) }),
      stackStx(S2, K1, 2000, 5, 6),
      delegated(S1, P, 1000, 4, 7), // covers 5: the pool operator's key
      stackStx(S6, K1, 1000, 5, 6), // the same amount as S1: the two ordered by address
      stackStx(S3, K1, 9000, 6, 8), // does not cover 5
      poxPrint('stack-increase', S4, { 'increase-by': cv.uint(5), 'total-locked': cv.uint(5), 'signer-key': cv.buffer(K1), ...cycles(5, 6) }), // never counts
      delegated(S5, Q, 700, 5, 6), // its operator committed no key for 5
      stackStx(S2, K2, 50, 5, 6), // older than S2's newest covering event
    ];
    const rows = prints.map((value_hex, i) => ({ block_height: 10 - i, tx_id: H(String(i)), tx_index: 0, event_index: 0, value_hex, contract_id: POX4_TESTNET }));
    const stackers = cycleStackers(rows, 5);
    expect(signerStackersJson(stackers, K1)).toEqual([
      { stacker_address: S2, stacked_amount: '2000', pox_address: null, stacker_type: 'solo' },
      ...[
        { stacker_address: S1, stacked_amount: '1000', pox_address: null, stacker_type: 'pooled' },
        { stacker_address: S6, stacked_amount: '1000', pox_address: null, stacker_type: 'solo' },
      ].sort((a, b) => (a.stacker_address < b.stacker_address ? -1 : 1)),
    ]);
    expect(signerStackersJson(stackers, K2)).toEqual([]);
    const row: PoxSignerRow = { signing_key: K1, weight: '2', stacked_amount: '3000', total_weight: '3', total_stacked_amount: '4500' };
    expect(poxSignerJson(row, stackers, false)).toMatchObject({
      weight: 2,
      weight_percent: (2 / 3) * 100,
      stacked_amount_percent: stackedPercent(3000n, 4500n),
      pooled_stacker_count: 1,
      solo_stacker_count: 2,
    });
  });

  it('stacked percent: the quotient rounded half-up at 20 decimals before the ×100', () => {
    expect(stackedPercent(1n, 3n)).toBe(33.333333333333336);
    expect(stackedPercent(2n, 3n)).toBe(66.66666666666667);
    expect(stackedPercent(3n, 3n)).toBe(100);
    expect(stackedPercent(0n, 5n)).toBe(0);
    expect(stackedPercent(5n, 0n)).toBeNull();
  });
});

describe('v3 serializers on hand-written rows', () => {
  const base: PrincipalTxV3Row = {
    tx_id: H('1'),
    tx_type: 'token_transfer',
    sender_address: A,
    nonce: 4,
    sponsored: false,
    sponsor_address: null,
    sponsor_nonce: null,
    fee_rate: '300',
    token_transfer_recipient: B,
    token_transfer_amount: '1000',
    token_transfer_memo: null,
    clarity_version: null,
    smart_contract_contract_id: null,
    contract_call_contract_id: null,
    function_name: null,
    alt_recipient: null,
    tenure_cause: null,
    block_height: 12,
    microblock_sequence: 2147483647,
    tx_index: 3,
    index_block_hash: H('a'),
    microblock_hash: '',
    block_hash: H('b'),
    block_time: 1_700_000_600,
    burn_block_time: 1_700_000_500,
    burn_block_height: 112,
    status: 'success',
    roles: 1, // sender
    event_stx_sent: '1000',
    event_stx_received: '0',
  };

  it('the sender of an unsponsored transfer pays the fee: sent = the transfer + the fee', () => {
    const fee = BigInt(base.fee_rate);
    const sent = BigInt(base.event_stx_sent) + fee;
    expect(principalTxJson(base)).toEqual({
      transaction: txSummaryJson(base),
      involvement: 'sender',
      balance_changes: { stx: { sent: sent.toString(), received: '0', net: (-sent).toString() } },
      affected_balances: { stx: true, ft: false, nft: false },
    });
    expect(txSummaryJson(base)).toMatchObject({ sponsor: null, token_transfer: { recipient: B, amount: '1000', memo: null } });
  });

  it('a sponsored tx: the sponsor pays the fee, not the sender; the recipient is affected and pays nothing', () => {
    const sponsored = { ...base, sponsored: true, sponsor_address: B, sponsor_nonce: 9 };
    expect(txSummaryJson(sponsored)).toMatchObject({ sender: { address: A, nonce: 4 }, sponsor: { address: B, nonce: 9 } });
    expect((principalTxJson(sponsored) as Json).balance_changes.stx.sent).toBe(base.event_stx_sent);
    const asSponsor = principalTxJson({ ...sponsored, roles: 2, event_stx_sent: '0' }) as Json;
    expect(asSponsor.involvement).toBe('sponsor');
    expect(asSponsor.balance_changes.stx).toEqual({ sent: base.fee_rate, received: '0', net: `-${base.fee_rate}` });
    const asRecipient = principalTxJson({ ...base, roles: 4, event_stx_sent: '0', event_stx_received: '1000' }) as Json;
    expect(asRecipient).toMatchObject({ involvement: 'affected', balance_changes: { stx: { sent: '0', received: '1000', net: '1000' } }, affected_balances: { stx: true } });
  });

  it('an unconfirmed microblock tx: hashes as 0x, the burn block time as its time', () => {
    const j = txSummaryJson({ ...base, block_hash: '', index_block_hash: '', block_time: 0 }) as Json;
    expect(j.block).toEqual({ height: 12, hash: '0x', index_hash: '0x', time: base.burn_block_time, tx_index: 3 });
  });

  it('a pending coinbase or tenure change carries no payload member; a mined one does', () => {
    const pending: MempoolSummaryRow = { ...base, tx_type: 'coinbase', alt_recipient: B, receipt_time: 1_700_000_000, receipt_block_height: 11, status: 'pending' };
    expect(mempoolSummaryJson(pending)).toEqual({
      tx_id: H('1'),
      sender: { address: A, nonce: 4 },
      sponsor: null,
      fee_rate: '300',
      receipt_time: 1_700_000_000,
      receipt_block_height: 11,
      status: 'pending',
      type: 'coinbase',
    });
    expect(txSummaryJson({ ...base, tx_type: 'coinbase', alt_recipient: B })).toMatchObject({ type: 'coinbase', coinbase: { alt_recipient: B } });
    expect(mempoolSummaryJson({ ...pending, tx_type: 'tenure_change', tenure_cause: 'block_found' })).not.toHaveProperty('tenure_change');
  });
});
