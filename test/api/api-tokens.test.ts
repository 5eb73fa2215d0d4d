/**
 * Focused tests of the token and balance routes on a generated chain with forks and microblock streams (the goldens
 * cover the reference's shapes; these check the figures): NFT holdings, history and mints, FT holders, the v1 balances
 * at every height (until_block) and unanchored, the v2 FT balances. Expected figures are computed here from the stored
 * canonical events with plain SQL, independently of the maintained tables the routes read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, settled } from '../helpers/service.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { get } from '../helpers/http.js';

/** Every item of a paged list, fetched `limit` at a time. */
async function all(svc: TestService, path: string, limit: number): Promise<{ total: number; results: any[] }> {
  const out: any[] = [];
  let total = -1;
  for (let offset = 0; ; offset += limit) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await get(svc, `${path}${sep}limit=${limit}&offset=${offset}`);
    expect(r.status, path).toBe(200);
    if (total < 0) total = r.body.total;
    out.push(...r.body.results);
    if (r.body.results.length < limit) break;
  }
  return { total, results: out };
}

describe('token and balance routes on a generated chain', () => {
  let svc: TestService;
  let tip: number;

  beforeAll(async () => {
    svc = await startTestService();
    const gen = new ChainGenerator({ blocks: 36, txsPerBlock: 10, seed: 'api-tokens', forks: true, forkEvery: 7, forkDepth: 2, microblockEvery: 4 });
    for await (const m of gen.messages()) {
      const res = await fetch(svc.observer + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    await settled(svc.observer);
    // end on an unconfirmed microblock stream, so `unanchored` has something to add
    const [t] = await svc.db.sql<{ h: number }[]>`SELECT max(block_height)::int AS h FROM blocks WHERE canonical`;
    tip = t.h;
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('NFT holdings: every owner gets exactly the NFTs custody names it for (the stream over the anchored table); paging and asset filters', async () => {
    // custody follows the reference's rules (sql/0106; the table itself is checked against a model of them in
    // test/store/token-tables.test.ts): the anchored table, each key the unconfirmed stream moves taken from its latest event
    const owners = await svc.db.sql<{ owner: string; asset_identifier: string; value_hex: string }[]>`
      WITH mb AS (
        SELECT recipient AS owner, asset_identifier, value_hex FROM (
          SELECT e.*, row_number() OVER (PARTITION BY asset_identifier, value_hex ORDER BY block_height DESC, tx_index DESC, event_index DESC) AS n
          FROM events e
          WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical AND index_block_hash = ''
        ) x WHERE n = 1
      )
      SELECT owner, asset_identifier, value_hex FROM (
        SELECT owner, asset_identifier, value_hex FROM nft_custody c
        WHERE NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
        UNION ALL SELECT owner, asset_identifier, value_hex FROM mb
      ) h WHERE owner IS NOT NULL`;
    expect(owners.length).toBeGreaterThan(3);
    const byOwner = new Map<string, string[]>();
    for (const o of owners) byOwner.set(o.owner, [...(byOwner.get(o.owner) ?? []), `${o.asset_identifier}|${o.value_hex}`]);
    for (const [owner, held] of byOwner) {
      const page = await all(svc, `/extended/v1/tokens/nft/holdings?principal=${owner}`, 2);
      expect(page.total).toBe(held.length);
      expect(page.results.map((r) => `${r.asset_identifier}|${r.value.hex}`).sort()).toEqual([...held].sort());
      // newest acquisition first
      const heights = page.results.map((r) => r.block_height);
      expect(heights).toEqual([...heights].sort((a, b) => b - a));
      const asset = held[0].split('|')[0];
      const filtered = await get(svc, `/extended/v1/tokens/nft/holdings?principal=${owner}&asset_identifiers=${asset}&tx_metadata=true`);
      expect(filtered.body.total).toBe(held.filter((h) => h.startsWith(asset + '|')).length);
      for (const r of filtered.body.results) expect(r.tx.tx_id).toMatch(/^0x[0-9a-f]{64}$/);
    }
    const none = await get(svc, `/extended/v1/tokens/nft/holdings?principal=${owners[0].owner}&asset_identifiers=SP000000000000000000002Q6VF78.nothing::x`);
    expect(none.body).toEqual({ limit: 50, offset: 0, total: 0, results: [] });
    // any offset the schema takes is an empty page past the end, not a database error (nft_holdings_page takes bigints)
    const asset = owners[0].asset_identifier;
    for (const offset of [2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      for (const filter of ['', `&asset_identifiers=${asset}`]) {
        const far = await get(svc, `/extended/v1/tokens/nft/holdings?principal=${owners[0].owner}&limit=200&offset=${offset}${filter}`);
        expect(far.status).toBe(200);
        expect(far.body).toEqual({ limit: 200, offset, total: 0, results: [] });
      }
    }
  });

  it('NFT history and mints: the canonical events up to the tip, newest first; unanchored adds the microblock stream', async () => {
    const keys = await svc.db.sql<{ asset_identifier: string; value_hex: string; anchored: number; all: number }[]>`
      SELECT asset_identifier, value_hex, count(*) FILTER (WHERE index_block_hash <> '')::int AS anchored, count(*)::int AS all
      FROM events WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical
      GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 8`;
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const q = `asset_identifier=${k.asset_identifier}&value=${k.value_hex}`;
      expect((await get(svc, `/extended/v1/tokens/nft/history?${q}`)).body.total).toBe(k.anchored);
      const un = await get(svc, `/extended/v1/tokens/nft/history?${q}&unanchored=true&tx_metadata=true`);
      expect(un.body.total).toBe(k.all);
      for (const r of un.body.results) expect(['mint', 'transfer', 'burn']).toContain(r.asset_event_type);
      // without 0x, the same answer
      expect((await get(svc, `/extended/v1/tokens/nft/history?asset_identifier=${k.asset_identifier}&value=${k.value_hex.slice(2)}`)).body.total).toBe(k.anchored);
    }
    const asset = keys[0].asset_identifier;
    const [mints] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events WHERE event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
        AND asset_identifier = ${asset} AND canonical AND microblock_canonical AND index_block_hash <> ''`;
    const page = await all(svc, `/extended/v1/tokens/nft/mints?asset_identifier=${asset}`, 3);
    expect(page.total).toBe(mints.n);
    expect(page.results.length).toBe(mints.n);
    const [mintsUn] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events WHERE event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
        AND asset_identifier = ${asset} AND canonical AND microblock_canonical`;
    expect((await get(svc, `/extended/v1/tokens/nft/mints?asset_identifier=${asset}&unanchored=true`)).body.total).toBe(mintsUn.n);
    expect((await get(svc, '/extended/v1/tokens/nft/history?asset_identifier=x&value=0x01')).status).toBe(400);
    expect((await get(svc, `/extended/v1/tokens/nft/history?asset_identifier=${asset}&value=zz`)).status).toBe(400);
  });

  it('FT holders: every canonical balance, richest first, summing to total_supply; STX holders from the STX totals', async () => {
    const [asset] = await svc.db.sql<{ a: string }[]>`
      SELECT asset_identifier AS a FROM events WHERE event_type = 'fungible_token_asset' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`;
    const expected = await svc.db.sql<{ address: string; balance: string }[]>`
      SELECT principal AS address, sum(d)::text AS balance FROM (
        SELECT recipient AS principal, amount AS d FROM events WHERE event_type = 'fungible_token_asset' AND asset_identifier = ${asset.a}
          AND canonical AND microblock_canonical AND index_block_hash <> '' AND recipient IS NOT NULL
        UNION ALL
        SELECT sender, -amount FROM events WHERE event_type = 'fungible_token_asset' AND asset_identifier = ${asset.a}
          AND canonical AND microblock_canonical AND index_block_hash <> '' AND sender IS NOT NULL
      ) x GROUP BY 1`;
    const page = await all(svc, `/extended/v1/tokens/ft/${asset.a}/holders`, 4);
    const nonZero = (l: { address: string; balance: string }[]) => l.filter((h) => h.balance !== '0').map((h) => `${h.address}=${h.balance}`).sort();
    expect(nonZero(page.results)).toEqual(nonZero(expected));
    const balances = page.results.map((r) => BigInt(r.balance));
    for (let i = 1; i < balances.length; i++) expect(balances[i] <= balances[i - 1]).toBe(true);
    const first = await get(svc, `/extended/v1/tokens/ft/${asset.a}/holders`);
    expect(first.body.total_supply).toBe(balances.reduce((a, b) => a + b, 0n).toString());

    const stx = await get(svc, '/extended/v1/tokens/ft/stx/holders?limit=3');
    expect(stx.body.results.length).toBe(3);
    for (const h of stx.body.results) {
      const one = await get(svc, `/extended/v1/address/${h.address}/stx`);
      expect(h.balance).toBe(one.body.balance);
      expect((await get(svc, `/extended/v2/addresses/${h.address}/balances/ft/stx`)).body.balance).toBe(one.body.balance);
    }
  });

  it('v1 balances: STX as /stx answers; FT and NFT figures at every height equal the canonical events up to it', async () => {
    const principals = await svc.db.sql<{ p: string }[]>`
      SELECT recipient AS p FROM events WHERE event_type IN ('fungible_token_asset', 'non_fungible_token_asset') AND recipient IS NOT NULL
      GROUP BY 1 ORDER BY count(*) DESC LIMIT 4`;
    expect(principals.length).toBeGreaterThan(0);
    const heights = [1, Math.floor(tip / 3), Math.floor(tip / 2), tip - 1, tip];
    for (const { p } of principals) {
      for (const h of heights) {
        const r = await get(svc, `/extended/v1/address/${p}/balances?until_block=${h}`);
        expect(r.status).toBe(200);
        expect(r.body.stx).toEqual((await get(svc, `/extended/v1/address/${p}/stx?until_block=${h}`)).body);
        expect(r.body.fungible_tokens).toEqual(await expectedFt(p, `AND index_block_hash <> '' AND block_height <= ${h}`));
        expect(r.body.non_fungible_tokens).toEqual(await expectedNft(p, `AND index_block_hash <> '' AND block_height <= ${h}`));
      }
      const now = await get(svc, `/extended/v1/address/${p}/balances`);
      expect(now.body.fungible_tokens).toEqual(await expectedFt(p, `AND index_block_hash <> ''`));
      const un = await get(svc, `/extended/v1/address/${p}/balances?unanchored=true`);
      expect(un.body.fungible_tokens).toEqual(await expectedFt(p, ''));
      expect(un.body.non_fungible_tokens).toEqual(await expectedNft(p, ''));
      expect(un.body.stx).toEqual((await get(svc, `/extended/v1/address/${p}/stx?unanchored=true`)).body);

      // v2: the positive anchored balances, and each one alone
      const v2 = await all(svc, `/extended/v2/addresses/${p}/balances/ft`, 1);
      const positive = Object.entries(now.body.fungible_tokens as Record<string, { balance: string }>)
        .filter(([, v]) => BigInt(v.balance) > 0n)
        .map(([token, v]) => ({ token, balance: v.balance }));
      expect(v2.results.map((r) => `${r.token}=${r.balance}`).sort()).toEqual(positive.map((r) => `${r.token}=${r.balance}`).sort());
      for (const { token, balance } of positive) {
        expect((await get(svc, `/extended/v2/addresses/${p}/balances/ft/${token}`)).body).toEqual({ balance });
      }
    }
    expect((await get(svc, `/extended/v1/address/${principals[0].p}/balances?until_block=1&unanchored=true`)).status).toBe(400);
  });

  async function expectedFt(p: string, where: string) {
    const rows = await svc.db.sql<{ a: string; r: string; s: string }[]>`
      SELECT asset_identifier AS a,
        COALESCE(sum(amount) FILTER (WHERE recipient = ${p}), 0)::text AS r, COALESCE(sum(amount) FILTER (WHERE sender = ${p}), 0)::text AS s
      FROM events WHERE event_type = 'fungible_token_asset' AND canonical AND microblock_canonical
        AND (sender = ${p} OR recipient = ${p}) ${svc.db.sql.unsafe(where)}
      GROUP BY 1`;
    const out: Record<string, unknown> = {};
    for (const r of rows.sort((x, y) => x.a.localeCompare(y.a))) {
      out[r.a] = { balance: (BigInt(r.r) - BigInt(r.s)).toString(), total_sent: r.s, total_received: r.r };
    }
    return out;
  }

  async function expectedNft(p: string, where: string) {
    const rows = await svc.db.sql<{ a: string; r: string; s: string }[]>`
      SELECT asset_identifier AS a, count(*) FILTER (WHERE recipient = ${p})::text AS r, count(*) FILTER (WHERE sender = ${p})::text AS s
      FROM events WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical
        AND (sender = ${p} OR recipient = ${p}) ${svc.db.sql.unsafe(where)}
      GROUP BY 1`;
    const out: Record<string, unknown> = {};
    for (const r of rows.sort((x, y) => x.a.localeCompare(y.a))) {
      out[r.a] = { count: (BigInt(r.r) - BigInt(r.s)).toString(), total_sent: r.s, total_received: r.r };
    }
    return out;
  }
});
