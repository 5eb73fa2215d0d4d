/**
 * Wallet account routes beyond the goldens, on a generated chain with forks, microblock streams and a mempool: the
 * address transaction lists (v1, with_transfers, v2) page through exactly the canonical history computed here from the
 * stored txs and events (unconfirmed microblock txs only with `unanchored`), their totals agree with their pages, the
 * nonces agree with the canonical txs and the mempool, and the parameter rules answer 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, settled } from '../helpers/service.js';
import { ChainGenerator, postMessage } from '../../load/generator/index.js';
import { get } from '../helpers/http.js';

describe('wallet accounts on a generated chain', () => {
  let svc: TestService;
  let principals: string[] = [];
  let tip = 0;

  beforeAll(async () => {
    svc = await startTestService();
    const gen = new ChainGenerator({ blocks: 24, txsPerBlock: 5, seed: 'accounts', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 4 });
    const all = [];
    for await (const m of gen.messages()) all.push(m);
    // end on an unconfirmed microblock stream: leave out the block that would confirm the last stream
    const lastBlock = all.map((m) => m.path).lastIndexOf('/new_block');
    const lastStream = all.map((m) => m.path).lastIndexOf('/new_microblocks');
    expect(lastStream).toBeGreaterThan(all.slice(0, lastBlock).map((m) => m.path).lastIndexOf('/new_block'));
    for (const m of all.slice(0, lastBlock)) expect(await postMessage(svc.observer, m)).toBe(200);
    await settled(svc.observer);
    const rows = await svc.db.sql<{ p: string }[]>`
      SELECT sender_address AS p FROM txs WHERE canonical GROUP BY 1 ORDER BY count(*) DESC LIMIT 4`;
    const [s] = await svc.db.sql<{ p: string; h: number }[]>`
      SELECT sender_address AS p, block_height::int AS h FROM txs WHERE index_block_hash = '' AND microblock_canonical LIMIT 1`;
    principals = [...new Set([s.p, ...rows.map((r) => r.p)])];
    const [t] = await svc.db.sql<{ h: number }[]>`SELECT max(block_height)::int AS h FROM blocks WHERE canonical`;
    tip = t.h;
    expect(s.h, 'an unconfirmed stream on the tip').toBe(tip + 1);
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  /** The v1 set (the reference's principal_stx_txs) computed from txs and events, newest first. */
  async function expectedV1(p: string, maxHeight: number): Promise<string[]> {
    const rows = await svc.db.sql<{ tx_id: string }[]>`
      SELECT t.tx_id FROM txs t
      WHERE t.canonical AND t.microblock_canonical AND t.block_height <= ${maxHeight}
        AND (t.sender_address = ${p} OR (t.sponsored AND t.sponsor_address = ${p}) OR t.token_transfer_recipient = ${p}
          OR t.contract_call_contract_id = ${p} OR t.smart_contract_contract_id = ${p}
          OR EXISTS (SELECT 1 FROM events e WHERE e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash
            AND e.microblock_hash = t.microblock_hash AND e.event_type = 'stx_asset' AND (e.sender = ${p} OR e.recipient = ${p})))
      ORDER BY t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC`;
    return rows.map((r) => r.tx_id);
  }

  async function pages(path: string, limit: number): Promise<{ ids: string[]; totals: number[] }> {
    const ids: string[] = [];
    const totals: number[] = [];
    for (let offset = 0; ; offset += limit) {
      const r = await get(svc, `${path}${path.includes('?') ? '&' : '?'}limit=${limit}&offset=${offset}`);
      expect(r.status).toBe(200);
      if (!r.body.results.length) break;
      totals.push(r.body.total);
      ids.push(...r.body.results.map((x: any) => (x.tx ?? x).tx_id));
    }
    return { ids, totals };
  }

  it('v1 transactions: every page of the canonical history, anchored and unanchored, with a constant total', async () => {
    let unconfirmed = 0;
    for (const p of principals) unconfirmed += (await expectedV1(p, tip + 1)).length - (await expectedV1(p, tip)).length;
    expect(unconfirmed, 'some listed principal has a tx in the unconfirmed stream').toBeGreaterThan(0);
    for (const p of principals) {
      for (const [q, max] of [['', tip], ['?unanchored=true', tip + 1], [`?until_block=${tip - 3}`, tip - 3]] as const) {
        const want = await expectedV1(p, max);
        const { ids, totals } = await pages(`/extended/v1/address/${p}/transactions${q}`, 7);
        expect(ids, `${p}${q}`).toEqual(want);
        for (const t of totals) expect(t).toBe(want.length);
      }
    }
  });

  it('with_transfers and v2 contain the v1 transactions; v2 counts and STX sums agree with the events', async () => {
    for (const p of principals) {
      const v1 = new Set(await expectedV1(p, tip + 1));
      const v2 = await get(svc, `/extended/v2/addresses/${p}/transactions?limit=50`);
      expect(v2.status).toBe(200);
      expect(v2.body.total).toBeGreaterThanOrEqual(v1.size);
      for (const r of v2.body.results) {
        const ev = await get(svc, `/extended/v2/addresses/${p}/transactions/${r.tx.tx_id}/events?limit=50`);
        expect(ev.status).toBe(200);
        const stx = ev.body.results.filter((e: any) => e.type === 'stx');
        expect(r.events.stx.transfer + r.events.stx.mint + r.events.stx.burn).toBe(stx.length);
        const received = stx.filter((e: any) => e.data.recipient === p).reduce((a: bigint, e: any) => a + BigInt(e.data.amount), 0n);
        expect(r.stx_received).toBe(received.toString());
      }
      const wt = await pages(`/extended/v1/address/${p}/transactions_with_transfers`, 9);
      for (const id of await expectedV1(p, tip)) if (!(await isSponsorOnly(p, id))) expect(wt.ids).toContain(id);
    }
  });

  async function isSponsorOnly(p: string, txId: string): Promise<boolean> {
    const [r] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM txs WHERE tx_id = ${txId} AND sponsor_address = ${p} AND sender_address <> ${p}`;
    return r.n > 0;
  }

  it('a height lists that block only; a page past the end says total 0', async () => {
    const p = principals[0];
    const all = await expectedV1(p, tip);
    const [{ h }] = await svc.db.sql<{ h: number }[]>`
      SELECT block_height::int AS h FROM txs WHERE tx_id = ${all[0]} AND canonical ORDER BY block_height DESC LIMIT 1`;
    const r = await get(svc, `/extended/v1/address/${p}/transactions?height=${h}`);
    // the txs of that block: the history up to it less the history below it
    const below = new Set(await expectedV1(p, h - 1));
    const atHeight = (await expectedV1(p, h)).filter((id) => !below.has(id));
    expect(atHeight.length).toBeGreaterThan(0);
    expect(r.body.total).toBe(atHeight.length);
    expect(r.body.results.map((t: { tx_id: string }) => t.tx_id)).toEqual(atHeight.slice(0, r.body.limit));
    for (const t of r.body.results) expect(t.block_height).toBe(h);
    const past = await get(svc, `/extended/v1/address/${p}/transactions?offset=100000`);
    expect(past.body).toMatchObject({ total: 0, results: [] });
  });

  it('nonces: the last executed nonce of each sender is the highest canonical one; next is one more than the highest seen', async () => {
    for (const p of principals) {
      const [r] = await svc.db.sql<{ n: number | null; m: number | null }[]>`
        SELECT (SELECT max(nonce)::int FROM txs WHERE sender_address = ${p} AND canonical AND microblock_canonical) AS n,
          (SELECT max(nonce)::int FROM mempool_txs WHERE sender_address = ${p} AND NOT pruned) AS m`;
      const a = await get(svc, `/extended/v1/address/${p}/nonces`);
      expect(a.status).toBe(200);
      expect(a.body.last_executed_tx_nonce).toBe(r.n);
      expect(a.body.last_mempool_tx_nonce).toBe(r.m);
      expect(a.body.possible_next_nonce).toBe(Math.max(r.n ?? -1, r.m ?? -1) + 1);
      for (const n of a.body.detected_missing_nonces) expect(a.body.detected_mempool_nonces).not.toContain(n);
      // as of the tip block: the unconfirmed stream on top of it is left out
      const [a2] = await svc.db.sql<{ n: number | null }[]>`
        SELECT max(nonce)::int AS n FROM txs
        WHERE sender_address = ${p} AND NOT sponsored AND canonical AND microblock_canonical AND block_height <= ${tip}`;
      const atTip = await get(svc, `/extended/v1/address/${p}/nonces?block_height=${tip}`);
      expect(atTip.body.last_executed_tx_nonce).toBe(a2.n);
      expect((await get(svc, `/extended/v1/address/${p}/nonces?block_height=1&block_hash=0x00`)).status).toBe(400);
      expect((await get(svc, `/extended/v1/address/${p}/nonces?block_hash=abcd`)).status).toBe(400);
    }
  });

  it('parameter rules: until_block with unanchored or with height, a bare tx id on v2 events, fee_rate without transaction', async () => {
    const p = principals[0];
    expect((await get(svc, `/extended/v1/address/${p}/transactions?until_block=3&unanchored=true`)).status).toBe(400);
    expect((await get(svc, `/extended/v1/address/${p}/transactions?until_block=3&height=3`)).status).toBe(400);
    expect((await get(svc, `/extended/v1/address/${p}/transactions?until_block=0`)).status).toBe(400);
    expect((await get(svc, `/extended/v1/address/${p}/stx_inbound?until_block=0x${'f'.repeat(64)}`)).status).toBe(404);
    const [t] = await svc.db.sql<{ tx_id: string }[]>`SELECT tx_id FROM txs WHERE sender_address = ${p} LIMIT 1`;
    expect((await get(svc, `/extended/v2/addresses/${p}/transactions/${t.tx_id.slice(2)}/events`)).status).toBe(400);
    const post = (body: unknown) =>
      fetch(svc.api + '/extended/v1/fee_rate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await (await post({ transaction: 'zz' })).json()).toEqual({ fee_rate: 400 });
    expect((await post({})).status).toBe(400);
    const fees = await get(svc, '/extended/v2/mempool/fees');
    expect(fees.status).toBe(200);
    expect(Object.keys(fees.body.all)).toEqual(['no_priority', 'low_priority', 'medium_priority', 'high_priority']);
  });
});
