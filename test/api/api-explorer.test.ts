/**
 * Explorer views beyond the goldens: the maintained figures (the STX supply per block, sql/0023; the unfiltered tx
 * total, sql/0021) equal the figures summed from the canonical history after every fixture and after every block of a
 * generated chain with forks, and their migrations' backfills equal a fresh ingest; the recent-tx list's filters, sort
 * orders and paging against the canonical rows; a reorg changes the recent list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { startTestService, type TestService, settled } from '../helpers/service.js';
import { get, getOk } from '../helpers/http.js';
import { createLogger } from '../../src/logger.js';
import { migrate } from '../../src/store/migrate.js';
import { unlockedSupply } from '../../src/store/supply.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

/** A list answer ({ total, results }), read item by item. */
type ListPage = { total: number; results: Record<string, any>[] }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The reference's supply query: canonical mints − burns up to h, plus coinbases matured up to `mature`. */
async function summedSupply(sql: Sql, h: number, mature: number): Promise<bigint> {
  const [r] = await sql<{ s: string }[]>`
    SELECT (
      COALESCE((SELECT sum(amount) FROM events WHERE canonical AND microblock_canonical AND event_type = 'stx_asset'
                AND asset_event_type = 'mint' AND block_height <= ${h}), 0)
      - COALESCE((SELECT sum(amount) FROM events WHERE canonical AND microblock_canonical AND event_type = 'stx_asset'
                AND asset_event_type = 'burn' AND block_height <= ${h}), 0)
      + COALESCE((SELECT sum(coinbase_amount) FROM miner_rewards WHERE canonical AND block_height <= ${mature}), 0)
    )::text AS s`;
  return BigInt(r.s);
}

async function tipHeight(sql: Sql): Promise<number> {
  const [t] = await sql<{ h: number | null }[]>`SELECT max(block_height)::int AS h FROM blocks WHERE canonical`;
  return t.h ?? 0;
}

/** The supply at every height (and unanchored) and the tx total: as maintained, and summed from the history. */
const explorerFigures: DerivedTable<Record<string, bigint | string>> = {
  name: 'stx_supply, tx_list_total',
  read: async (sql) => {
    const tip = await tipHeight(sql);
    const out: Record<string, bigint | string> = {};
    for (let h = 0; h <= tip + 1; h++) out[`supply at ${h}`] = (await unlockedSupply(sql, { height: h, unanchored: false })).unlocked;
    out['unanchored supply'] = (await unlockedSupply(sql, { unanchored: true })).unlocked;
    const [t] = await sql<{ n: string }[]>`SELECT n::text FROM tx_list_total`;
    out['tx total'] = t.n;
    return out;
  },
  recompute: async (sql) => {
    const tip = await tipHeight(sql);
    const out: Record<string, bigint | string> = {};
    for (let h = 0; h <= tip + 1; h++) out[`supply at ${h}`] = await summedSupply(sql, h, h);
    out['unanchored supply'] = await summedSupply(sql, tip + 1, tip);
    const [t] = await sql<{ n: string }[]>`SELECT COALESCE(sum(tx_count), 0)::text AS n FROM blocks WHERE canonical`;
    out['tx total'] = t.n;
    return out;
  },
};

describe('maintained explorer figures', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_explorer');
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Drops the maintained rows and runs the migrations again: their backfills rebuild them from what is stored. */
  async function backfilled(): Promise<{ supply: unknown[]; total: unknown[]; micro: unknown[] }> {
    const read = async () => ({
      supply: await db.sql`SELECT block_height::int, index_block_hash, delta::text, unlocked::text FROM stx_supply ORDER BY 1`,
      total: await db.sql`SELECT n::text FROM tx_list_total`,
      micro: await db.sql`SELECT n::text FROM microblock_stream_count`,
    });
    const fresh = await read();
    await db.sql`TRUNCATE stx_supply, tx_list_total, microblock_stream_count`;
    await db.sql`DELETE FROM schema_migrations WHERE version IN ('0021_tx_list_total.sql', '0022_microblock_count.sql', '0023_stx_supply.sql')`;
    await migrate(db.sql);
    expect(await read()).toEqual(fresh);
    return fresh;
  }

  for (const name of fixtureNames()) {
    it(`${name}: supply and tx total equal the summed figures, after a replay, a re-delivery and a backfill`, async () => {
      await checkOnFixture(db.sql, log, name, explorerFigures);
      await backfilled();
    });
  }

  it('a generated chain with forks and microblock streams: equal after every block, and backfilled alike', async () => {
    await checkOnGeneratedChain(db.sql, log, { blocks: 30, txsPerBlock: 5, seed: 'explorer', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 3 }, explorerFigures);
    const { supply } = await backfilled();
    expect(supply.length).toBeGreaterThan(20);
  });
});

describe('GET /extended/v1/tx on a generated chain', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  /** Every canonical tx, in the list's order for a sort key. */
  async function canonical(order: string): Promise<{ tx_id: string; tx_type: string; sender_address: string; nonce: number; fee: string; burn_block_time: number; contract_id: string | null; fn: string | null; recipient: string | null }[]> {
    return svc.db.sql.unsafe(`
      SELECT tx_id, tx_type, sender_address, nonce::int, fee_rate::text AS fee, burn_block_time::int, contract_call_contract_id AS contract_id,
        api -> 'contract_call' ->> 'function_name' AS fn, token_transfer_recipient AS recipient
      FROM txs x WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      ORDER BY ${order}`);
  }

  it('follows every block and reorg of a generated chain: the first page is the canonical newest 20', async () => {
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 6, seed: 'txlist', forks: true, forkEvery: 9, forkDepth: 2, microblockEvery: 4 });
    const listed = new Set<string>();
    let dropped = 0;
    for await (const m of gen.messages()) {
      const res = await fetch(svc.observer + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      expect(res.status).toBe(200);
      if (m.path === '/new_microblocks' || m.path === '/new_block') {
        // the maintained per-sender / per-type totals (sql/0103), with and without the unconfirmed microblock txs
        await settled(svc.observer);
        const [tip] = await svc.db.sql<{ h: number }[]>`SELECT COALESCE(max(block_height), 0)::int AS h FROM blocks WHERE canonical`;
        const senders = await svc.db.sql<{ s: string }[]>`SELECT DISTINCT sender_address AS s FROM txs ORDER BY 1 LIMIT 3`;
        for (const { s } of [...senders, { s: '' }]) {
          for (const unanchored of [false, true]) {
            const [want] = await svc.db.sql<{ n: number }[]>`
              SELECT count(*)::int AS n FROM txs
              WHERE canonical AND microblock_canonical AND tx_type IN ('token_transfer', 'contract_call')
                AND (index_block_hash <> '' OR (${unanchored} AND block_height <= ${tip.h + 1}))
                AND (${s} = '' OR sender_address = ${s})`;
            const q = `/extended/v1/tx?type=token_transfer,contract_call&unanchored=${unanchored}${s ? `&from_address=${s}` : ''}`;
            expect((await get<ListPage>(svc, q)).body.total, `${m.path} ${q}`).toBe(want.n);
          }
        }
      }
      if (m.path !== '/new_block') continue;
      await settled(svc.observer);
      const page = (await get<ListPage>(svc, '/extended/v1/tx')).body.results.map((t) => t.tx_id as string);
      const want = (await canonical('block_height DESC, microblock_sequence DESC, tx_index DESC')).slice(0, 20).map((t) => t.tx_id);
      expect(page).toEqual(want);
      const now = new Set(page);
      // a tx listed before and gone although the list did not move past it: its block was orphaned
      for (const id of listed) {
        if (!now.has(id)) {
          const [r] = await svc.db.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM txs WHERE tx_id = ${id} AND canonical AND microblock_canonical AND index_block_hash <> ''`;
          if (r.n === 0) dropped++;
        }
      }
      listed.clear();
      for (const id of page) listed.add(id);
    }
    expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(0);
  }, 300_000);

  it('pages the whole canonical list newest first, and the asc order is its reverse', async () => {
    const all = await canonical('block_height DESC, microblock_sequence DESC, tx_index DESC');
    const seen: string[] = [];
    for (let offset = 0; offset < all.length; offset += 50) {
      const { body } = await get<ListPage>(svc, `/extended/v1/tx?limit=50&offset=${offset}`);
      seen.push(...body.results.map((t) => t.tx_id as string));
    }
    expect(seen).toEqual(all.map((t) => t.tx_id));
    const asc = await get<ListPage>(svc, `/extended/v1/tx?limit=50&order=asc`);
    expect(asc.body.results.map((t) => t.tx_id)).toEqual([...all].reverse().slice(0, 50).map((t) => t.tx_id));
  });

  it('sorts by fee and burn block time with the height tie-breakers', async () => {
    const byFee = await canonical('fee_rate DESC, block_height DESC, microblock_sequence DESC, tx_index DESC');
    expect((await get<ListPage>(svc, '/extended/v1/tx?sort_by=fee&limit=30')).body.results.map((t) => t.tx_id)).toEqual(byFee.slice(0, 30).map((t) => t.tx_id));
    const byTime = await canonical('burn_block_time ASC, block_height ASC, microblock_sequence ASC, tx_index ASC');
    expect((await get<ListPage>(svc, '/extended/v1/tx?sort_by=burn_block_time&order=asc&limit=30')).body.results.map((t) => t.tx_id)).toEqual(
      byTime.slice(0, 30).map((t) => t.tx_id),
    );
  });

  it('filters by type (repeated or comma-separated), sender, recipient, contract, function, nonce and time', async () => {
    const all = await canonical('block_height DESC, microblock_sequence DESC, tx_index DESC');
    const check = async (query: string, keep: (t: (typeof all)[number]) => boolean) => {
      const want = all.filter(keep);
      const { status, body } = await get<ListPage>(svc, `/extended/v1/tx?limit=50&${query}`);
      expect(status, query).toBe(200);
      expect(body.total, query).toBe(want.length);
      expect(body.results.map((t) => t.tx_id), query).toEqual(want.slice(0, 50).map((t) => t.tx_id));
      return want.length;
    };
    expect(await check('type=token_transfer,contract_call', (t) => t.tx_type === 'token_transfer' || t.tx_type === 'contract_call')).toBeGreaterThan(0);
    await check('type=token_transfer&type=coinbase', (t) => t.tx_type === 'token_transfer' || t.tx_type === 'coinbase');
    const sender = all.find((t) => t.tx_type === 'token_transfer')!.sender_address;
    expect(await check(`from_address=${sender}`, (t) => t.sender_address === sender)).toBeGreaterThan(0);
    const recipient = all.find((t) => t.recipient)!.recipient!;
    await check(`to_address=${recipient}`, (t) => t.recipient === recipient);
    const call = all.find((t) => t.contract_id && t.fn);
    if (call) {
      await check(`contract_id=${call.contract_id}`, (t) => t.contract_id === call.contract_id);
      await check(`function_name=${call.fn}`, (t) => t.contract_id !== null && t.fn === call.fn);
      await check(`contract_id=${call.contract_id}&function_name=${call.fn}`, (t) => t.contract_id === call.contract_id && t.fn === call.fn);
    }
    await check(`nonce=1&from_address=${sender}`, (t) => t.nonce === 1 && t.sender_address === sender);
    await check(`from_address=${sender}&type=token_transfer`, (t) => t.tx_type === 'token_transfer' && t.sender_address === sender);
    const mid = all[Math.floor(all.length / 2)].burn_block_time;
    await check(`start_time=${mid}`, (t) => t.burn_block_time >= mid);
    await check(`end_time=${mid}&type=coinbase`, (t) => t.burn_block_time <= mid && t.tx_type === 'coinbase');
    // 0 filters nothing, as in the reference
    expect((await get<ListPage>(svc, '/extended/v1/tx?nonce=0')).body.total).toBe((await get(svc, '/extended/v1/tx')).body.total);
  });

  it('rejects malformed filters with a 400', async () => {
    for (const q of ['type=foo', 'from_address=notanaddress', 'to_address=x', 'contract_id=zz', 'nonce=-1', 'sort_by=x', 'order=up', 'limit=51', 'start_time=abc']) {
      expect((await get<ListPage>(svc, `/extended/v1/tx?${q}`)).status, q).toBe(400);
    }
  });

  it('unanchored adds the unconfirmed microblock txs on top', async () => {
    const anchored = await get<ListPage>(svc, '/extended/v1/tx?limit=50');
    const withStream = await get<ListPage>(svc, '/extended/v1/tx?limit=50&unanchored=true');
    const [n] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM txs WHERE index_block_hash = '' AND canonical AND microblock_canonical`;
    expect(withStream.body.total).toBe(anchored.body.total + n.n);
    expect(withStream.body.results.slice(n.n).map((t) => t.tx_id).slice(0, 50 - n.n)).toEqual(
      anchored.body.results.slice(0, 50 - n.n).map((t) => t.tx_id),
    );
  });

  it('search: a tx id, a pending tx, a block hash (any case, without 0x), a contract, an address, a bad term', async () => {
    const sql = svc.db.sql;
    const [tx] = await sql<{ tx_id: string }[]>`SELECT tx_id FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> '' LIMIT 1`;
    const [pending] = await sql<{ tx_id: string }[]>`
      SELECT tx_id FROM mempool_txs m WHERE NOT pruned AND NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id) LIMIT 1`;
    const [block] = await sql<{ block_hash: string; block_height: number }[]>`
      SELECT block_hash, block_height::int FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
    const [contract] = await sql<{ id: string }[]>`
      SELECT smart_contract_contract_id AS id FROM txs WHERE smart_contract_contract_id IS NOT NULL AND canonical LIMIT 1`;
    const [sender] = await sql<{ a: string }[]>`SELECT sender_address AS a FROM txs LIMIT 1`;
    const search = (term: string, query = '') => get<{ found: boolean; result: Record<string, any> }>(svc, `/extended/v1/search/${encodeURIComponent(term)}${query}`); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await search(tx.tx_id)).body.result.entity_type).toBe('tx_id');
    const withMeta = await search(tx.tx_id.slice(2).toUpperCase(), '?include_metadata=true');
    expect(withMeta.body.result.entity_id).toBe(tx.tx_id);
    expect(withMeta.body.result.metadata.tx_id).toBe(tx.tx_id);
    if (pending) expect((await search(pending.tx_id)).body.result).toMatchObject({ entity_type: 'mempool_tx_id' });
    const b = await search(block.block_hash, '?include_metadata=true');
    expect(b.body.result).toMatchObject({ entity_type: 'block_hash', block_data: { height: block.block_height, canonical: true } });
    expect(b.body.result.metadata.hash).toBe(block.block_hash);
    if (contract) expect((await search(contract.id)).body.result).toMatchObject({ entity_type: 'contract_address', entity_id: contract.id });
    const addr = await search(` ${sender.a}`, '?include_metadata=true');
    expect(addr.body.result).toMatchObject({ entity_type: 'standard_address', entity_id: sender.a });
    expect(addr.body.result.metadata.balance).toMatch(/^-?\d+$/);
    // the balance the address's own answer gives
    expect(addr.body.result.metadata.balance).toBe((await get(svc, `/extended/v1/address/${sender.a}/stx`)).body.balance);
    expect((await search('0x' + 'f'.repeat(64))).status).toBe(404);
    expect((await search('notanaddress')).status).toBe(404);
  });

  it('microblocks: the list pages txs (limit counts txs) and each microblock lists its canonical txs', async () => {
    const all = (await get<ListPage>(svc, '/extended/v1/microblock?limit=200')).body.results as unknown as { microblock_hash: string; txs: string[] }[];
    // the same page from the txs table: the newest 200 canonical microblock txs, grouped by microblock in list order
    const rows = await svc.db.sql<{ microblock_hash: string; tx_id: string }[]>`
      SELECT microblock_hash, tx_id FROM txs WHERE microblock_hash <> '' AND canonical AND microblock_canonical
      ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC LIMIT 200`;
    const want: { microblock_hash: string; txs: string[] }[] = [];
    for (const r of rows) {
      if (want.at(-1)?.microblock_hash !== r.microblock_hash) want.push({ microblock_hash: r.microblock_hash, txs: [] });
      want.at(-1)!.txs.push(r.tx_id);
    }
    expect(want.length).toBeGreaterThan(1);
    expect(all.map((m) => ({ microblock_hash: m.microblock_hash, txs: m.txs }))).toEqual(want);
    const txCount = all.reduce((n, m) => n + m.txs.length, 0);
    const one = (await get<ListPage>(svc, '/extended/v1/microblock?limit=1')).body.results as unknown as { txs: string[] }[];
    expect(one).toHaveLength(1);
    expect(one[0].txs).toHaveLength(1);
    const firstTxs = (await get<ListPage>(svc, `/extended/v1/microblock?limit=${txCount}`)).body.results as unknown as { txs: string[] }[];
    expect(firstTxs.reduce((n, m) => n + m.txs.length, 0)).toBe(txCount);
    const m = all[0];
    const single = await getOk<{ txs: string[] }>(svc, `/extended/v1/microblock/${m.microblock_hash.toUpperCase().replace('0X', '0x')}`);
    expect(single.txs).toEqual(m.txs);
  });
});
