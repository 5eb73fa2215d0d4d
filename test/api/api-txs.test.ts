/**
 * Transaction and mempool routes against the real service: parameter errors, a mempool tx being mined, a dropped tx,
 * event paging by event_index, mempool stats consistency.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFixture, type FixtureLine } from '../helpers/fixtures.js';
import { startTestService, replay, type TestService, settled } from '../helpers/service.js';
import { get } from '../helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed JSON answers
type Json = Record<string, any>;

/** The ids the mempool holds (not pruned: mined, dropped or replaced), from the table, sorted. */
async function storedPending(svc: TestService): Promise<string[]> {
  const rows = await svc.db.sql<{ tx_id: string }[]>`SELECT tx_id FROM mempool_txs WHERE NOT pruned ORDER BY tx_id`;
  return rows.map((r) => r.tx_id);
}

async function mempoolIds(svc: TestService, query = ''): Promise<string[]> {
  const r = await get(svc, `/extended/v1/tx/mempool?limit=50${query}`);
  expect(r.status).toBe(200);
  return (r.body.results as Json[]).map((t) => t.tx_id as string);
}

/** The tx ids a /new_block body confirms. */
function blockTxIds(line: FixtureLine): string[] {
  if (line.path !== '/new_block') return [];
  const b = JSON.parse(line.body) as { transactions?: { txid: string }[] };
  return (b.transactions ?? []).map((t) => t.txid.toLowerCase());
}

describe('tx routes: parameter errors', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  const cases: [string, string][] = [
    ['/extended/v1/tx/mempool?limit=51', 'querystring/limit must be <= 50'],
    ['/extended/v1/tx/mempool?offset=-1', 'querystring/offset must be >= 0'],
    ['/extended/v1/tx/mempool?limit=1.5', 'querystring/limit must be integer'],
    ['/extended/v1/tx/mempool?unanchored=abc', 'querystring/unanchored must be boolean'],
    ['/extended/v1/tx/mempool?order=sideways', 'querystring/order must be equal to one of the allowed values: asc, desc'],
    ['/extended/v1/tx/mempool?order_by=bogus', 'querystring/order_by must be equal to one of the allowed values: age, size, fee'],
    ['/extended/v1/tx/mempool?sender_address=nope', 'querystring/sender_address must be a Stacks address'],
    ['/extended/v1/tx/0x' + 'ab'.repeat(32) + '?event_limit=101', 'querystring/event_limit must be <= 100'],
    ['/extended/v1/tx/0x' + 'ab'.repeat(32) + '?event_offset=x', 'querystring/event_offset must be integer'],
    ['/extended/v1/tx/0x' + 'ab'.repeat(32) + '?exclude_function_args=maybe', 'querystring/exclude_function_args must be boolean'],
    ['/extended/v1/tx/0x12', 'params/tx_id must match pattern'],
    ['/extended/v1/tx/multiple', "querystring must have required property 'tx_id'"],
    ['/extended/v1/tx/multiple?tx_id=0x' + 'ab'.repeat(32) + '&tx_id=0x12', 'querystring/tx_id/1 must match pattern'],
    ['/extended/v1/tx/multiple?tx_id=' + 'ab'.repeat(32), 'Hex string is missing the "0x" prefix'],
    ['/extended/v1/address/notanaddress/mempool', 'params/principal must be a Stacks address'],
    ['/extended/v1/address/ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B/mempool?limit=0x', 'querystring/limit must be integer'],
  ];
  it.each(cases)('%s → 400 naming the parameter', async (path, message) => {
    const r = await get(svc, path);
    expect(r.status).toBe(400);
    expect(r.body.statusCode).toBe(400);
    expect(r.body.message).toContain(message);
  });

  it('rejects address combined with sender_address', async () => {
    const a = 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B';
    const r = await get(svc, `/extended/v1/tx/mempool?address=${a}&sender_address=${a}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('"address" filter');
  });

  it('redirects a bare hex id to the 0x form keeping the query', async () => {
    const hex = 'cd'.repeat(32);
    const r = await get(svc, `/extended/v1/tx/${hex}?event_limit=3`);
    expect(r.status).toBe(302);
    expect(r.location).toBe(`/extended/v1/tx/0x${hex}?event_limit=3`);
  });

  it('answers 404 for unknown ids (single and multiple)', async () => {
    const id = '0x' + '11'.repeat(32);
    const one = await get(svc, `/extended/v1/tx/${id}`);
    expect(one.status).toBe(404);
    expect(one.body.message).toBe('could not find transaction by ID');
    expect((await get(svc, `/extended/v1/tx/multiple?tx_id=${id}`)).status).toBe(404);
  });
});

describe('tx routes over a replayed chain (regtest pox-4)', () => {
  const lines = readFixture('regtest-env-pox-4-stack-stx-in-reward-phase-S1');
  let svc: TestService;
  let pos = 0;
  async function replayUntil(pred: (l: FixtureLine) => boolean): Promise<FixtureLine> {
    while (pos < lines.length) {
      const l = lines[pos++];
      const [status] = await replay(svc.observer, [l]);
      expect(status).toBe(200);
      if (pred(l)) return l;
    }
    throw new Error('fixture ended before the expected line');
  }

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  it('a pending tx is listed, then leaves /tx/mempool when mined and is shown mined', async () => {
    await replayUntil((l) => l.path === '/new_mempool_tx');
    const pending = await mempoolIds(svc);
    expect(pending.length).toBeGreaterThan(0);
    expect([...pending].sort()).toEqual(await storedPending(svc));
    const id = pending[0];
    const before = await get(svc, `/extended/v1/tx/${id}`);
    expect(before.status).toBe(200);
    expect(before.body.tx_status).toBe('pending');
    expect(before.body).not.toHaveProperty('block_hash');
    const stats = await get(svc, '/extended/v1/tx/mempool/stats');
    const counted = Object.values(stats.body.tx_type_counts as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(counted).toBe(pending.length);

    const block = await replayUntil((l) => blockTxIds(l).includes(id));
    const expectedHeight = (JSON.parse(block.body) as { block_height: number }).block_height;
    expect(await mempoolIds(svc)).not.toContain(id);
    const after = await get(svc, `/extended/v1/tx/${id}`);
    expect(after.status).toBe(200);
    expect(after.body.tx_status).toBe('success');
    expect(after.body.block_height).toBe(expectedHeight);
    expect(after.body.canonical).toBe(true);
    const multi = await get(svc, `/extended/v1/tx/multiple?tx_id=${id}`);
    expect(multi.body[id].found).toBe(true);
    expect(multi.body[id].result.block_height).toBe(expectedHeight);
  });

  it('a dropped tx shows its dropped status and is no longer pending', async () => {
    let pending = await mempoolIds(svc);
    if (!pending.length) {
      await replayUntil((l) => l.path === '/new_mempool_tx');
      pending = await mempoolIds(svc);
    }
    expect(pending.length).toBeGreaterThan(0);
    expect([...pending].sort()).toEqual(await storedPending(svc));
    const id = pending[0];
    const replacement = '0x' + 'ee'.repeat(32);
    const res = await fetch(svc.observer + '/drop_mempool_tx', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dropped_txids: [id], reason: 'ReplaceByFee', new_txid: replacement }),
    });
    expect(res.status).toBe(200);
    await settled(svc.observer);
    expect(await mempoolIds(svc)).not.toContain(id);
    const r = await get(svc, `/extended/v1/tx/${id}`);
    expect(r.status).toBe(200);
    expect(r.body.tx_status).toBe('dropped_replace_by_fee');
    expect(r.body.replaced_by_tx_id).toBe(replacement);
    const multi = await get(svc, `/extended/v1/tx/multiple?tx_id=${id}`);
    expect(multi.body[id].found).toBe(true);
    expect(multi.body[id].result.tx_status).toBe('dropped_replace_by_fee');
  });

  it('pages a tx\'s events by event_index range', async () => {
    // replay everything, then find a tx with several events through the block listing of its block
    while (pos < lines.length) await replay(svc.observer, [lines[pos++]]);
    const ids = lines.flatMap(blockTxIds);
    let found: Json | undefined;
    for (const id of ids) {
      const r = await get(svc, `/extended/v1/tx/${id}?event_limit=1`);
      if (r.status === 200 && r.body.event_count >= 3) {
        found = r.body;
        break;
      }
    }
    expect(found).toBeDefined();
    const id = found!.tx_id as string;
    expect(found!.events).toHaveLength(1);
    const page = await get(svc, `/extended/v1/tx/${id}?event_limit=2&event_offset=1`);
    expect((page.body.events as Json[]).map((e) => e.event_index)).toEqual([1, 2]);
    const past = await get(svc, `/extended/v1/tx/${id}?event_offset=${found!.event_count}`);
    expect(past.body.events).toEqual([]);
  });
});
