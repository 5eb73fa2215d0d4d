/**
 * /extended/v3/principals/{principal}/… (the newest reference's cursor-paginated family; no recorded answers exist):
 * on every fixture, each route is cross-checked against what our v1/v2 routes answer for the same principals —
 * the same transactions in the same order with the same STX flows, the balance changes their events add up to, the
 * same STX/FT/NFT balances, nonces and pending transactions — every answer validates against the OpenAPI document,
 * and the cursors chain (next → current, previous → the page before). Then: walking a principal's transactions by
 * cursor while blocks are replayed between page requests neither misses nor repeats a row (offset paging repeats).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { fixtureNames, readFixture } from '../helpers/fixtures.js';
import { fetchAnswerChecker, type AnswerCheck } from '../helpers/openapi-validate.js';
import { get } from '../helpers/http.js';
import { decodeTx } from '../../src/chain/tx.js';
import { principalTxJson } from '../../src/views/v3.js';
import type { PrincipalTxV3Row } from '../../src/store/principals-v3.js';

type Json = any;

const sep = (path: string) => (path.includes('?') ? '&' : '?');

/** Every item of a v3 list, page after page by `cursor.next`; checks the cursor chain and a constant total. */
async function walkV3(svc: TestService, path: string, limit: number, check: AnswerCheck, maxPages = Infinity): Promise<{ items: Json[]; total: number; pages: number }> {
  const items: Json[] = [];
  let cursor: string | null = null;
  let prevCurrent: string | null = null;
  let total = -1;
  let pages = 0;
  for (;;) {
    const r: { status: number; body: Json } = await get(svc, `${path}${sep(path)}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { check });
    expect(r.status, path).toBe(200);
    const b = r.body;
    expect(b.limit).toBe(limit);
    if (cursor) expect(b.cursor.current, `${path}: a page starts at its cursor`).toBe(cursor);
    // (a walk that starts at a cursor of its own has rows before its first page)
    if (pages > 0 || !/[?&]cursor=/.test(path)) expect(b.cursor.previous, `${path}: previous is the first row of the page before`).toBe(prevCurrent);
    if (!b.results.length) {
      expect(b.total).toBe(0);
      expect(b.cursor).toEqual({ next: null, previous: null, current: null });
      break;
    }
    if (total >= 0) expect(b.total, `${path}: constant total`).toBe(total);
    total = b.total;
    items.push(...b.results);
    pages++;
    if (b.cursor.next === null) {
      expect(b.results.length).toBeLessThanOrEqual(limit);
      break;
    }
    expect(b.results.length).toBe(limit);
    if (pages >= maxPages) break;
    prevCurrent = b.cursor.current;
    cursor = b.cursor.next;
  }
  return { items, total: Math.max(total, 0), pages };
}

/** Every item of a v1/v2 offset list. */
async function walkOffset(svc: TestService, path: string, limit: number): Promise<Json[]> {
  const items: Json[] = [];
  for (let offset = 0; ; offset += limit) {
    const r = await get(svc, `${path}${sep(path)}limit=${limit}&offset=${offset}`);
    expect(r.status, path).toBe(200);
    items.push(...r.body.results);
    if (r.body.results.length < limit) break;
  }
  return items;
}

const big = (s: string) => BigInt(s);
const V1_TYPE: Record<string, string> = {
  token_transfer: 'token_transfer',
  smart_contract: 'smart_contract',
  contract_call: 'contract_call',
  poison_microblock: 'poison_microblock',
  coinbase: 'coinbase',
  tenure_change: 'tenure_change',
};

/** What the cross-checks met over all fixtures (the last suite asserts each kind was met at least once). */
const seen = {
  txs: 0,
  sponsored: 0,
  unconfirmed: 0,
  adoptedLeftOut: 0,
  ftChanges: 0,
  nftChanges: 0,
  ftBalances: 0,
  nftHeld: 0,
  locked: 0,
  pendingStx: 0,
  mempoolTxs: 0,
  missingNonces: 0,
};

/** The principals a fixture is checked with: busiest, token holders, mempool parties, sponsors, contracts, genesis. */
async function samplePrincipals(svc: TestService): Promise<string[]> {
  const rows = await svc.db.sql<{ p: string }[]>`
    (SELECT principal AS p FROM principal_tx_counts ORDER BY all_txs DESC, principal LIMIT 6)
    UNION (SELECT principal FROM ft_balances WHERE balance > 0 GROUP BY principal ORDER BY count(*) DESC, principal LIMIT 3)
    UNION (SELECT owner FROM nft_custody WHERE owner IS NOT NULL GROUP BY owner ORDER BY count(*) DESC, owner LIMIT 3)
    UNION (SELECT sender_address FROM mempool_txs WHERE NOT pruned GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2)
    UNION (SELECT token_transfer_recipient FROM mempool_txs WHERE NOT pruned AND token_transfer_recipient IS NOT NULL
           GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2)
    UNION (SELECT sponsor_address FROM txs WHERE sponsored AND canonical GROUP BY 1 ORDER BY 1 LIMIT 2)
    UNION (SELECT principal FROM principal_txs WHERE roles & 256 <> 0 GROUP BY 1 ORDER BY 1 LIMIT 2)
    UNION (SELECT principal FROM principal_tx_counts WHERE principal LIKE '%.%' ORDER BY all_txs DESC, principal LIMIT 2)
    UNION (SELECT sender_address FROM txs WHERE index_block_hash = '' AND canonical AND microblock_canonical GROUP BY 1 ORDER BY 1 LIMIT 2)`;
  return rows.map((r) => r.p).sort();
}

describe.each(fixtureNames())('v3 principals on %s, against v1/v2', (name) => {
  let svc: TestService;
  let check: AnswerCheck;
  let principals: string[] = [];
  let adopted = new Set<string>();

  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: name });
    check = await fetchAnswerChecker(svc.api);
    principals = await samplePrincipals(svc);
    expect(principals.length).toBeGreaterThan(3);
    // the boot block's genesis txs that block 1 adopted: the reference leaves their v3 rows non-canonical
    adopted = new Set((await svc.db.sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM principal_txs WHERE roles & 256 <> 0`).map((r) => r.tx_id));
  }, 600_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('transactions: the v2 list in the same order (genesis txs adopted by block 1 left out), same STX flows and txs', async () => {
    let compared = 0;
    for (const p of principals) {
      const v2all = await walkOffset(svc, `/extended/v2/addresses/${p}/transactions`, 50);
      const v2 = v2all.filter((r) => !adopted.has(r.tx.tx_id));
      seen.adoptedLeftOut += v2all.length - v2.length;
      const { items, total } = await walkV3(svc, `/extended/v3/principals/${p}/transactions`, 50, check);
      expect(items.map((r) => r.transaction.tx_id), p).toEqual(v2.map((r) => r.tx.tx_id));
      expect(total, p).toBe(v2.length);
      // small pages chain to the same list
      const small = await walkV3(svc, `/extended/v3/principals/${p}/transactions`, 3, check, 12);
      expect(small.items.map((r) => r.transaction.tx_id)).toEqual(items.slice(0, small.items.length).map((r) => r.transaction.tx_id));
      for (let i = 0; i < items.length; i++) {
        const [a, b] = [items[i], v2[i]];
        const t = a.transaction;
        const tx = b.tx;
        expect(a.balance_changes.stx.sent, `${p} ${tx.tx_id}`).toBe(b.stx_sent);
        expect(a.balance_changes.stx.received).toBe(b.stx_received);
        expect(big(a.balance_changes.stx.net)).toBe(big(b.stx_received) - big(b.stx_sent));
        expect(a.affected_balances.ft).toBe(b.events.ft.transfer + b.events.ft.mint + b.events.ft.burn > 0);
        expect(a.affected_balances.nft).toBe(b.events.nft.transfer + b.events.nft.mint + b.events.nft.burn > 0);
        const paysFee = tx.sponsored ? tx.sponsor_address === p : tx.sender_address === p;
        const stxMoved = b.events.stx.transfer + b.events.stx.mint + b.events.stx.burn > 0;
        expect(a.affected_balances.stx).toBe(paysFee || stxMoved || tx.token_transfer?.recipient_address === p);
        expect(a.involvement).toBe(tx.sender_address === p ? 'sender' : tx.sponsored && tx.sponsor_address === p ? 'sponsor' : 'affected');
        expect(t.tx_id).toBe(tx.tx_id);
        expect(t.sender).toEqual({ address: tx.sender_address, nonce: tx.nonce });
        expect(t.sponsor).toEqual(tx.sponsored ? { address: tx.sponsor_address, nonce: tx.sponsor_nonce } : null);
        expect(t.fee_rate).toBe(tx.fee_rate);
        expect(t.block).toEqual({ height: tx.block_height, hash: tx.block_hash, index_hash: t.block.index_hash, time: tx.block_time, tx_index: tx.tx_index });
        expect(t.bitcoin_block).toEqual({ height: tx.burn_block_height, time: tx.burn_block_time });
        expect(t.status).toBe(tx.tx_status);
        expect(t.type).toBe(V1_TYPE[tx.tx_type]);
        if (tx.tx_type === 'token_transfer') {
          expect(t.token_transfer.recipient).toBe(tx.token_transfer.recipient_address);
          expect(t.token_transfer.amount).toBe(tx.token_transfer.amount);
          expect(t.token_transfer.memo.hex).toBe(tx.token_transfer.memo);
        }
        if (tx.tx_type === 'smart_contract') expect(t.smart_contract.contract_id).toBe(tx.smart_contract.contract_id);
        if (tx.tx_type === 'contract_call') {
          expect(t.contract_call).toEqual({ contract_id: tx.contract_call.contract_id, function_name: tx.contract_call.function_name });
        }
        if (tx.tx_type === 'coinbase') expect(t.coinbase.alt_recipient).toBe(tx.coinbase_payload.alt_recipient ?? null);
        if (tx.tx_type === 'tenure_change') expect(t.tenure_change.cause).toBe(tx.tenure_change_payload.cause);
        compared++;
        seen.txs++;
        if (tx.sponsored) seen.sponsored++;
        if (tx.is_unanchored) seen.unconfirmed++;
      }
      // the rows of the v1 list (principal_stx_txs) are all there
      const v1 = await walkOffset(svc, `/extended/v1/address/${p}/transactions?unanchored=true`, 50);
      const ids = new Set(items.map((r) => r.transaction.tx_id));
      for (const r of v1) if (!adopted.has(r.tx_id)) expect(ids.has(r.tx_id), `${p} ${r.tx_id}`).toBe(true);
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('balance changes: what the fee and the principal\'s events add up to, per tx and across txs', async () => {
    let changes = 0;
    for (const p of principals) {
      const list = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=30`)).body.results as Json[];
      const perTx: Json[] = [];
      for (const row of list) {
        const t = row.transaction;
        const events = await walkOffset(svc, `/extended/v2/addresses/${p}/transactions/${t.tx_id}/events`, 50);
        // expected rows from the fee and the events
        const want = new Map<string, { type: string; id?: string; sent: bigint; received: bigint }>();
        const add = (type: string, id: string | undefined, sent: bigint, received: bigint) => {
          const k = `${type === 'stx' ? 1 : type === 'ft' ? 2 : 3}:${id ?? 'stx'}`;
          const cur = want.get(k) ?? { type, id, sent: 0n, received: 0n };
          want.set(k, { ...cur, sent: cur.sent + sent, received: cur.received + received });
        };
        const paysFee = t.sponsor ? t.sponsor.address === p : t.sender.address === p;
        if (paysFee) add('stx', undefined, big(t.fee_rate), 0n);
        for (const e of events) {
          const amount = e.type === 'nft' ? 1n : big(e.data.amount);
          add(e.type, e.type === 'stx' ? undefined : e.data.asset_identifier, e.data.sender === p ? amount : 0n, e.data.recipient === p ? amount : 0n);
        }
        const expected = [...want.entries()]
          .sort(([a], [b]) => (Number(a.split(':')[0]) - Number(b.split(':')[0])) || (a < b ? -1 : a > b ? 1 : 0))
          .map(([, w]) => ({
            asset: w.type === 'stx' ? { type: 'stx' } : { type: w.type, identifier: w.id },
            balance_change: { sent: w.sent.toString(), received: w.received.toString(), net: (w.received - w.sent).toString() },
          }));
        const got = await walkV3(svc, `/extended/v3/principals/${p}/transactions/${t.tx_id}/balance-changes`, 2, check);
        expect(got.items, `${p} ${t.tx_id}`).toEqual(expected);
        expect(got.total).toBe(expected.length);
        // the STX row is the tx's STX flow of the principal
        const stx = got.items.find((c) => c.asset.type === 'stx');
        expect(stx?.balance_change.sent ?? '0').toBe(row.balance_changes.stx.sent);
        expect(stx?.balance_change.received ?? '0').toBe(row.balance_changes.stx.received);
        perTx.push(...got.items.map((c) => ({ tx_id: t.tx_id, ...c })));
        seen.ftChanges += got.items.filter((c) => c.asset.type === 'ft').length;
        seen.nftChanges += got.items.filter((c) => c.asset.type === 'nft').length;
        changes += got.items.length;
      }
      if (!list.length) continue;
      // across the txs (ids comma-separated, in another order), walked in small pages: the same rows, newest tx first
      const ids = list.map((r) => r.transaction.tx_id).reverse();
      const across = await walkV3(svc, `/extended/v3/principals/${p}/balance-changes?tx_id=${ids.join(',')}`, 3, check);
      expect(across.items, p).toEqual(perTx);
      // repeated form, one page
      const repeated = await get(svc, `/extended/v3/principals/${p}/balance-changes?${ids.slice(0, 5).map((i) => `tx_id=${i}`).join('&')}&limit=50`, { check });
      expect(repeated.body.results).toEqual(perTx.filter((c) => ids.slice(0, 5).includes(c.tx_id)));
    }
    expect(changes).toBeGreaterThan(0);
  });

  it('balances: STX as v2 (with the mempool), FT as v2 (largest first), NFT as v1 holdings', async () => {
    for (const p of principals) {
      const v2 = (await get(svc, `/extended/v2/addresses/${p}/balances/stx?include_mempool=true`)).body;
      const v3 = (await get(svc, `/extended/v3/principals/${p}/balances/stx`, { check })).body;
      const locked = big(v2.locked);
      expect(v3.balance, p).toBe(v2.balance);
      expect(big(v3.available)).toBe(big(v2.balance) - locked);
      expect(v3.locked).toEqual(
        locked > 0n
          ? {
              amount: v2.locked,
              pox_version: v3.locked?.pox_version,
              lock_tx_id: v2.lock_tx_id,
              stacks_lock_height: v2.lock_height,
              burn_lock_height: v2.burnchain_lock_height,
              burn_unlock_height: v2.burnchain_unlock_height,
            }
          : null,
      );
      if (v3.locked) expect([1, 2, 3, 4]).toContain(v3.locked.pox_version);
      if (v3.locked) seen.locked++;
      if (v3.mempool) seen.pendingStx++;
      const [inb, out] = [big(v2.pending_balance_inbound), big(v2.pending_balance_outbound)];
      expect(v3.mempool).toEqual(
        inb > 0n || out > 0n
          ? { estimated_balance: (big(v3.available) + inb - out).toString(), inbound: v2.pending_balance_inbound, outbound: v2.pending_balance_outbound }
          : null,
      );

      const ftV2 = await walkOffset(svc, `/extended/v2/addresses/${p}/balances/ft`, 200);
      const ft = (await walkV3(svc, `/extended/v3/principals/${p}/balances/ft`, 2, check)).items;
      const key = (a: { asset_identifier?: string; token?: string; balance: string }) => `${a.asset_identifier ?? a.token}=${a.balance}`;
      expect(ft.map(key).sort(), p).toEqual(ftV2.map(key).sort());
      seen.ftBalances += ft.length;
      for (let i = 1; i < ft.length; i++) {
        const [a, b] = [ft[i - 1], ft[i]];
        expect(big(a.balance) > big(b.balance) || (a.balance === b.balance && a.asset_identifier < b.asset_identifier)).toBe(true);
      }
      for (const f of ft.slice(0, 5)) {
        const one = await get(svc, `/extended/v3/principals/${p}/balances/ft/${f.asset_identifier}`, { check });
        expect(one.body).toEqual(f);
      }
      const absent = 'SP000000000000000000002Q6VF78.no-such-token::nothing';
      expect((await get(svc, `/extended/v3/principals/${p}/balances/ft/${absent}`, { check })).body).toEqual({ asset_identifier: absent, balance: '0' });

      const nftV1 = await walkOffset(svc, `/extended/v1/tokens/nft/holdings?principal=${p}`, 200);
      const nft = (await walkV3(svc, `/extended/v3/principals/${p}/balances/nft`, 2, check)).items;
      const nkey = (a: Json) => `${a.asset_identifier}|${a.value.hex}|${a.value.repr}`;
      expect(nft.map(nkey).sort(), p).toEqual(nftV1.map(nkey).sort());
      seen.nftHeld += nft.length;
      const order = nft.map((n) => `${n.asset_identifier} ${n.value.hex}`);
      expect(order).toEqual([...order].sort());
    }
  });

  it('nonces as v1 (addresses only), pending transactions as v1 address mempool', async () => {
    for (const p of principals) {
      if (p.includes('.')) {
        const r = await get(svc, `/extended/v3/principals/${p}/nonces`, { check });
        expect(r.status).toBe(400);
        expect(r.body.message).toContain('params/principal must be a Stacks address');
      } else {
        const v1 = (await get(svc, `/extended/v1/address/${p}/nonces`)).body;
        const v3 = (await get(svc, `/extended/v3/principals/${p}/nonces`, { check })).body;
        expect(v3, p).toEqual({
          next_nonce: v1.possible_next_nonce,
          last_confirmed_nonce: v1.last_executed_tx_nonce,
          mempool: { last_nonce: v1.last_mempool_tx_nonce, pending_nonces: v1.detected_mempool_nonces, missing_nonces: v1.detected_missing_nonces },
        });
        if (v3.mempool.last_nonce === null && v3.last_confirmed_nonce !== null) expect(v3.next_nonce).toBe(v3.last_confirmed_nonce + 1);
        seen.missingNonces += v3.mempool.missing_nonces.length;
      }
      const v1 = await walkOffset(svc, `/extended/v1/address/${p}/mempool`, 50);
      const v3 = (await walkV3(svc, `/extended/v3/principals/${p}/mempool/transactions`, 2, check)).items;
      expect(v3.map((t) => t.tx_id).sort(), p).toEqual(v1.map((t) => t.tx_id).sort());
      for (let i = 1; i < v3.length; i++) {
        const [a, b] = [v3[i - 1], v3[i]];
        expect(a.receipt_time > b.receipt_time || (a.receipt_time === b.receipt_time && a.tx_id > b.tx_id)).toBe(true);
      }
      seen.mempoolTxs += v3.length;
      const byId = new Map(v1.map((t) => [t.tx_id, t]));
      for (const t of v3) {
        const m = byId.get(t.tx_id);
        expect(t.sender).toEqual({ address: m.sender_address, nonce: m.nonce });
        expect(t.fee_rate).toBe(m.fee_rate);
        expect(t.receipt_time).toBe(m.receipt_time);
        expect(t.status).toBe('pending');
        expect(t.type).toBe(V1_TYPE[m.tx_type]);
      }
    }
  });
});

describe('v3 principals: what the fixtures exercised', () => {
  it('every kind of row was cross-checked somewhere', () => {
    console.log('v3 cross-check coverage', seen);
    for (const [kind, n] of Object.entries(seen)) {
      // no fixture has a sponsored tx or a nonce gap: reported only (sponsors: the serializer suite below)
      if (kind === 'missingNonces' || kind === 'sponsored') continue;
      expect(n, kind).toBeGreaterThan(0);
    }
  });
});

describe('v3 principal tx serializer: sponsored txs', () => {
  const base: PrincipalTxV3Row = {
    tx_id: '0x' + '11'.repeat(32),
    tx_type: 'token_transfer',
    sender_address: 'ST1SENDER',
    nonce: 7,
    sponsored: true,
    sponsor_address: 'ST2SPONSOR',
    sponsor_nonce: 3,
    fee_rate: '180',
    token_transfer_recipient: 'ST3RECIPIENT',
    token_transfer_amount: '1000',
    token_transfer_memo: '0x' + '00'.repeat(34),
    clarity_version: null,
    smart_contract_contract_id: null,
    contract_call_contract_id: null,
    function_name: null,
    alt_recipient: null,
    tenure_cause: null,
    block_height: 5,
    microblock_sequence: 2147483647,
    tx_index: 1,
    index_block_hash: '0x' + '22'.repeat(32),
    microblock_hash: '',
    block_hash: '0x' + '33'.repeat(32),
    block_time: 1700000000,
    burn_block_time: 1700000000,
    burn_block_height: 100,
    status: 'success',
    roles: 0,
    event_stx_sent: '0',
    event_stx_received: '0',
  };

  it('the sponsor pays the fee; the sender of a sponsored tx does not', () => {
    const sponsor = principalTxJson({ ...base, roles: 2 });
    expect(sponsor.involvement).toBe('sponsor');
    expect(sponsor.balance_changes).toEqual({ stx: { sent: '180', received: '0', net: '-180' } });
    expect(sponsor.affected_balances).toEqual({ stx: true, ft: false, nft: false });
    expect((sponsor.transaction as Json).sponsor).toEqual({ address: 'ST2SPONSOR', nonce: 3 });
    const sender = principalTxJson({ ...base, roles: 1 | 32, event_stx_sent: '1000' });
    expect(sender.involvement).toBe('sender');
    expect(sender.balance_changes).toEqual({ stx: { sent: '1000', received: '0', net: '-1000' } });
    expect(sender.affected_balances).toEqual({ stx: true, ft: false, nft: false });
    const failed = principalTxJson({ ...base, roles: 1 });
    expect([failed.balance_changes, failed.affected_balances]).toEqual([
      { stx: { sent: '0', received: '0', net: '0' } },
      { stx: false, ft: false, nft: false },
    ]);
    const unsponsored = principalTxJson({ ...base, sponsored: false, sponsor_address: null, sponsor_nonce: null, roles: 1 });
    expect(unsponsored.balance_changes).toEqual({ stx: { sent: '180', received: '0', net: '-180' } });
    expect((unsponsored.transaction as Json).sponsor).toBeNull();
    const recipient = principalTxJson({ ...base, roles: 4 | 32, event_stx_received: '1000' });
    expect([recipient.involvement, recipient.affected_balances]).toEqual(['affected', { stx: true, ft: false, nft: false }]);
  });
});

describe('v3 principals: parameters', () => {
  let svc: TestService;
  let p = '';
  beforeAll(async () => {
    svc = await startTestService({}, { fixture: 'mocknet' });
    [{ p }] = await svc.db.sql<{ p: string }[]>`SELECT principal AS p FROM principal_tx_counts WHERE principal NOT LIKE '%.%' ORDER BY all_txs DESC LIMIT 1`;
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 400s naming the parameter, as the reference\'s schemas word them', async () => {
    const cases: [string, string][] = [
      ['/extended/v3/principals/nope/transactions', 'params/principal must be a Stacks address (S, then P, M, T or N'],
      [`/extended/v3/principals/${p}/transactions?limit=0`, 'querystring/limit must be >= 1'],
      [`/extended/v3/principals/${p}/transactions?limit=51`, 'querystring/limit must be <= 50'],
      [`/extended/v3/principals/${p}/balances/ft?limit=201`, 'querystring/limit must be <= 200'],
      [`/extended/v3/principals/${p}/transactions?cursor=12:3`, 'querystring/cursor must match pattern "^[0-9]+:[0-9]+:[0-9]+$"'],
      [`/extended/v3/principals/${p}/balances/ft?cursor=abc`, 'querystring/cursor must match pattern "^\\d+:.+$"'],
      [`/extended/v3/principals/${p}/balances/nft?cursor=12:x`, 'querystring/cursor must match pattern "^0x[0-9a-fA-F]*:.+$"'],
      [`/extended/v3/principals/${p}/mempool/transactions?cursor=1:0x12`, 'querystring/cursor must match pattern'],
      [`/extended/v3/principals/${p}/balance-changes`, "querystring must have required property 'tx_id'"],
      [`/extended/v3/principals/${p}/balance-changes?tx_id=0x12`, 'querystring/tx_id/0 must match pattern'],
      [`/extended/v3/principals/${p}/transactions/0x12/balance-changes`, 'params/tx_id must match pattern'],
      [`/extended/v3/principals/${p}/balances/ft/not-a-token`, 'params/asset_identifier must match pattern'],
      [`/extended/v3/principals/${p}.contract/nonces`, 'params/principal must be a Stacks address (S, then P, M, T or N, then 26 to 39 c32 characters: digits and upper-case letters except I, L, O and U); a contract id is not accepted here'],
    ];
    for (const [path, message] of cases) {
      const r = await get(svc, path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toContain(message);
    }
    const many = Array.from({ length: 51 }, (_, i) => '0x' + i.toString(16).padStart(64, '0')).join(',');
    const r = await get(svc, `/extended/v3/principals/${p}/balance-changes?tx_id=${many}`);
    expect([r.status, r.body.message]).toEqual([400, 'querystring/tx_id must NOT have more than 50 items']);
  });

  it('a cursor is a position: one naming no row starts at the next row after it, `h:0:0` at height h', async () => {
    const all = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=50`)).body.results as Json[];
    expect(all.length).toBeGreaterThan(3);
    const pos = (t: Json) => [t.transaction.block.height, t.transaction.block.tx_index];
    // a position between two rows
    const [h, i] = pos(all[1]);
    const between = await get(svc, `/extended/v3/principals/${p}/transactions?cursor=${h}:2147483647:${i + 1}`);
    expect(between.status).toBe(200);
    const want = all.filter((t) => {
      const [bh, bi] = pos(t);
      return bh < h || (bh === h && bi <= i + 1);
    });
    expect(between.body.results.map((t: Json) => t.transaction.tx_id)).toEqual(want.slice(0, 20).map((t) => t.transaction.tx_id));
    // h:0:0 → from the newest row of height h
    const top = all[0].transaction.block.height;
    const fromHeight = await get(svc, `/extended/v3/principals/${p}/transactions?cursor=${top}:0:0`);
    expect(fromHeight.body.results[0].transaction.tx_id).toBe(all[0].transaction.tx_id);
    // past the columns' ranges: from the newest row
    const huge = await get(svc, `/extended/v3/principals/${p}/transactions?cursor=${'9'.repeat(30)}:${'9'.repeat(12)}:${'9'.repeat(12)}`);
    expect(huge.status).toBe(200);
    expect(huge.body.results[0].transaction.tx_id).toBe(all[0].transaction.tx_id);
    const hugeIndex = await get(svc, `/extended/v3/principals/${p}/transactions?cursor=${h}:2147483647:${'9'.repeat(12)}`);
    expect(hugeIndex.body.results[0].transaction.tx_id).toBe(all.find((t) => t.transaction.block.height === h)!.transaction.tx_id);
    // past every row: empty, total 0
    const past = await get(svc, `/extended/v3/principals/${p}/transactions?cursor=0:0:0`);
    expect(past.body).toEqual({ limit: 20, total: 0, cursor: { next: null, previous: null, current: null }, results: [] });
    // defaults
    expect((await get(svc, `/extended/v3/principals/${p}/balances/ft`)).body.limit).toBe(100);
    expect((await get(svc, `/extended/v3/principals/${p}/balances/nft`)).body.limit).toBe(100);
    expect((await get(svc, `/extended/v3/principals/${p}/mempool/transactions`)).body.limit).toBe(20);
  });
});

describe('v3 principals: holdings order and cursors', () => {
  let svc: TestService;
  let check: AnswerCheck;
  const who = 'STB44HYPYAT2BB2QE513NSP81HTMYWBJP02HPGK6';
  const token = (n: string) => `SP000000000000000000002Q6VF78.tok-${n}::t`;
  beforeAll(async () => {
    svc = await startTestService();
    check = await fetchAnswerChecker(svc.api);
    // holdings written straight into the maintained tables for a principal of no chain: the order is the point here
    for (const [n, received, sent] of [['a', 10, 0], ['b', 10, 0], ['c', 100, 0], ['d', 9, 0], ['e', 1000, 1000], ['f', 20, 11]] as const) {
      await svc.db.sql`INSERT INTO ft_balances (principal, asset_identifier, received, sent) VALUES (${who}, ${token(n)}, ${received}, ${sent})`;
    }
    // Clarity values: u255, (buff 1) 0x01 / 0x02, (buff 2) 0x0100, 0
    for (const [asset, value] of [['x', '0x02000000020100'], ['x', '0x020000000101'], ['x', '0x020000000102'], ['w', '0x01000000000000000000000000000000ff'], ['y', '0x0000000000000000000000000000000000']]) {
      await svc.db.sql`
        INSERT INTO nft_custody (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
        VALUES (${`SP000000000000000000002Q6VF78.nft-${asset}::n`}, ${value}, ${who}, 'tx', 'b', 1, 0, 0)`;
    }
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('FT: positive balances, largest first (as numbers), ties by identifier; cursors at or between rows', async () => {
    const all = await walkV3(svc, `/extended/v3/principals/${who}/balances/ft`, 1, check);
    expect(all.items).toEqual([
      { asset_identifier: token('c'), balance: '100' },
      { asset_identifier: token('a'), balance: '10' },
      { asset_identifier: token('b'), balance: '10' },
      { asset_identifier: token('d'), balance: '9' },
      { asset_identifier: token('f'), balance: '9' },
    ]);
    expect(all.total).toBe(5);
    const page = (await get(svc, `/extended/v3/principals/${who}/balances/ft?limit=2&cursor=${encodeURIComponent(`10:${token('b')}`)}`, { check })).body;
    expect(page.results.map((r: Json) => r.asset_identifier)).toEqual([token('b'), token('d')]);
    expect(page.cursor).toEqual({ next: `9:${token('f')}`, previous: `100:${token('c')}`, current: `10:${token('b')}` });
    // a position between rows: balance 50 comes after 100 and before the 10s
    const between = (await get(svc, `/extended/v3/principals/${who}/balances/ft?limit=1&cursor=50:x`, { check })).body;
    expect(between.results).toEqual([{ asset_identifier: token('a'), balance: '10' }]);
    expect((await get(svc, `/extended/v3/principals/${who}/balances/ft/${token('e')}`, { check })).body.balance).toBe('0');
  });

  it('NFT: by identifier, then value byte-wise', async () => {
    const all = await walkV3(svc, `/extended/v3/principals/${who}/balances/nft`, 2, check);
    expect(all.items.map((r) => `${r.asset_identifier.split('.')[1]} ${r.value.hex}`)).toEqual([
      'nft-w::n 0x01000000000000000000000000000000ff',
      'nft-x::n 0x020000000101',
      'nft-x::n 0x020000000102',
      'nft-x::n 0x02000000020100',
      'nft-y::n 0x0000000000000000000000000000000000',
    ]);
    expect(all.items.map((r) => r.value.repr)).toEqual(['u255', '0x01', '0x02', '0x0100', '0']);
    // from a cursor: previous is the row two back, next the row after the page
    const page = (await get(svc, `/extended/v3/principals/${who}/balances/nft?limit=2&cursor=0x020000000102:SP000000000000000000002Q6VF78.nft-x::n`, { check })).body;
    expect(page.cursor).toEqual({
      next: '0x0000000000000000000000000000000000:SP000000000000000000002Q6VF78.nft-y::n',
      previous: '0x01000000000000000000000000000000ff:SP000000000000000000002Q6VF78.nft-w::n',
      current: '0x020000000102:SP000000000000000000002Q6VF78.nft-x::n',
    });
  });
});

describe('v3 principals: paging while blocks arrive', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('a cursor walk neither misses nor repeats a row; an offset walk over the same replay repeats rows', async () => {
    const lines = readFixture('epoch-3-transition');
    const blockAt = lines.map((l, i) => (l.path === '/new_block' ? i : -1)).filter((i) => i >= 0);
    // the first half of the chain, then one block between page requests
    const half = blockAt[Math.floor(blockAt.length / 2)];
    expect((await replay(svc.observer, lines.slice(0, half + 1))).every((s) => s === 200)).toBe(true);
    let at = half + 1;
    const nextBlock = async () => {
      const end = blockAt.find((i) => i >= at);
      if (end === undefined) return;
      expect((await replay(svc.observer, lines.slice(at, end + 1))).every((s) => s === 200)).toBe(true);
      at = end + 1;
    };
    // a principal whose list keeps growing in the second half: the one sending txs in most of its blocks (the miner)
    const blocksSending = new Map<string, number>();
    for (const i of blockAt.filter((b) => b > half)) {
      const senders = new Set<string>();
      for (const t of JSON.parse(lines[i].body).transactions as { raw_tx: string }[]) {
        try {
          senders.add(decodeTx(t.raw_tx).api.sender_address);
        } catch {
          // a burnchain operation has no raw tx to decode
        }
      }
      for (const s of senders) blocksSending.set(s, (blocksSending.get(s) ?? 0) + 1);
    }
    const [p] = [...blocksSending.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    const held = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=1`)).body.total;
    expect(held, 'several pages of it before the walk').toBeGreaterThan(12);
    const limit = 4;

    // cursor walk, a block replayed before each page
    const first = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=${limit}`)).body;
    const start = first.cursor.current as string;
    const walked: string[] = first.results.map((r: Json) => r.transaction.tx_id);
    let cursor = first.cursor.next as string | null;
    let grew = 0;
    while (cursor) {
      const before = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=1`)).body.total;
      await nextBlock();
      grew += (await get(svc, `/extended/v3/principals/${p}/transactions?limit=1`)).body.total - before;
      const page = (await get(svc, `/extended/v3/principals/${p}/transactions?limit=${limit}&cursor=${cursor}`)).body;
      walked.push(...page.results.map((r: Json) => r.transaction.tx_id));
      cursor = page.cursor.next;
    }
    expect(grew, 'the principal got new transactions during the walk').toBeGreaterThan(0);
    // what the chain now holds at or below the first page's start, by one unhurried walk
    const now = (await walkV3(svc, `/extended/v3/principals/${p}/transactions?cursor=${start}`, 50, await fetchAnswerChecker(svc.api))).items.map(
      (r) => r.transaction.tx_id,
    );
    expect(new Set(walked).size, 'no row repeated').toBe(walked.length);
    expect(walked).toEqual(now);

    // the same with offsets on the v2 list while blocks keep arriving: rows pushed down by new ones come again
    const byOffset: string[] = [];
    for (let offset = 0; ; offset += limit) {
      const page = (await get(svc, `/extended/v2/addresses/${p}/transactions?limit=${limit}&offset=${offset}`)).body;
      byOffset.push(...page.results.map((r: Json) => r.tx.tx_id));
      if (page.results.length < limit) break;
      await nextBlock();
    }
    expect(at, 'blocks were still arriving').toBeGreaterThan(half + 1);
    expect(new Set(byOffset).size, 'offset paging repeats rows pushed down by new ones').toBeLessThan(byOffset.length);
  });
});
