/**
 * A wallet's view through the unmodified npm package `@stacks/blockchain-api-client` (v9, its openapi-fetch REST client
 * `createClient({ baseUrl })`): a fixture is replayed into the real service, then the methods a wallet calls — account
 * balances, STX, transactions (with transfers), nonces, assets, pending txs; transaction lookups; fee estimates; NFT
 * holdings / history / mints and FT holders; the v3 principal balance and nonces — are called through the package.
 * Every answer must equal what a direct fetch of the same URL returns, and the fields a wallet reads (balances, nonces,
 * tx lists and their totals) must agree with each other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@stacks/blockchain-api-client';
import { startTestService, type TestService } from '../helpers/service.js';

type Client = ReturnType<typeof createClient>;

/** The client's answer, checked against a direct request of the URL the client sent (same method and body). */
async function same<T>(r: { data?: T; error?: unknown; response: Response }, body?: unknown): Promise<T> {
  expect(r.error, r.response.url).toBeUndefined();
  expect(r.response.status, r.response.url).toBe(200);
  const direct = await fetch(r.response.url, body === undefined
    ? undefined
    : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(direct.status).toBe(200);
  expect(r.data, r.response.url).toEqual(await direct.json());
  return r.data as T;
}

/** Every page of an offset list read through the client: the items, and the total every page announced. */
async function allPages<I>(read: (offset: number) => Promise<{ total: number; limit: number; results: I[] }>): Promise<{ items: I[]; total: number }> {
  const items: I[] = [];
  let total = -1;
  for (let offset = 0; ; ) {
    const page = await read(offset);
    if (total >= 0 && page.results.length) expect(page.total).toBe(total);
    if (page.results.length) total = page.total;
    items.push(...page.results);
    offset += page.results.length;
    if (page.results.length < page.limit) break;
  }
  return { items, total: Math.max(total, 0) };
}

/** What the wallet checks met over both fixtures (the last test requires each at least once). */
const seen = { txs: 0, transfers: 0, pending: 0, ftHeld: 0, nftHeld: 0, nftMints: 0, ftHolders: 0, feeEstimates: 0 };

describe.each(['mainnet-out-of-order-microblock', 'regtest-env-pox-4-stack-stx-in-reward-phase-S1'])('a wallet on %s', (name) => {
  let svc: TestService;
  let api: Client;
  let wallets: string[] = [];

  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: name });
    api = createClient({ baseUrl: svc.api });
    // the busiest standard addresses, and the FT / NFT holders and mempool senders among them
    const rows = await svc.db.sql<{ p: string }[]>`
      (SELECT principal AS p FROM principal_tx_counts WHERE principal NOT LIKE '%.%' ORDER BY all_txs DESC, principal LIMIT 3)
      UNION (SELECT principal FROM ft_balances WHERE balance > 0 AND principal NOT LIKE '%.%' ORDER BY principal LIMIT 1)
      UNION (SELECT owner FROM nft_custody WHERE owner NOT LIKE '%.%' ORDER BY owner LIMIT 1)
      UNION (SELECT sender_address FROM mempool_txs WHERE NOT pruned ORDER BY sender_address LIMIT 1)`;
    wallets = rows.map((r) => r.p).sort();
    expect(wallets.length).toBeGreaterThan(1);
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('accounts: balances, STX, transactions (with transfers), nonces and assets agree with each other', async () => {
    for (const principal of wallets) {
      const path = { principal };
      const balances = await same(await api.GET('/extended/v1/address/{principal}/balances', { params: { path } }));
      const stx = await same(await api.GET('/extended/v1/address/{principal}/stx', { params: { path } }));
      const stxV2 = await same(await api.GET('/extended/v2/addresses/{principal}/balances/stx', { params: { path, query: { include_mempool: true } } }));
      const stxV3 = await same(await api.GET('/extended/v3/principals/{principal}/balances/stx', { params: { path } }));
      // one balance, read four ways
      expect(balances.stx.balance, principal).toBe(stx.balance);
      expect(stxV2.balance).toBe(stx.balance);
      expect(stxV3.balance).toBe(stx.balance);
      expect(BigInt(stxV3.available)).toBe(BigInt(stx.balance) - BigInt(stx.locked));
      expect(stx.estimated_balance).toBe(stxV2.estimated_balance);
      const { total_received, total_sent, total_fees_sent } = stx;
      expect([total_received, total_sent, total_fees_sent].every((x) => typeof x === 'string')).toBe(true);
      expect(BigInt(stx.balance)).toBe(
        BigInt(total_received!) - BigInt(total_sent!) - BigInt(total_fees_sent!) + BigInt(stx.total_miner_rewards_received),
      );

      // the tx list, all of it, page by page
      const txs = await allPages(async (offset) =>
        same(await api.GET('/extended/v1/address/{principal}/transactions', { params: { path, query: { limit: 50, offset, unanchored: true } } })),
      );
      expect(txs.items.length, principal).toBe(txs.total);
      expect(new Set(txs.items.map((t) => t.tx_id)).size).toBe(txs.total);
      seen.txs += txs.total;
      // each one is what a lookup by id answers
      for (const t of txs.items.slice(0, 10)) {
        const one = await same(await api.GET('/extended/v1/tx/{tx_id}', { params: { path: { tx_id: t.tx_id } } }));
        expect([one.tx_id, one.tx_status, one.fee_rate, one.sender_address]).toEqual([t.tx_id, t.tx_status, t.fee_rate, t.sender_address]);
      }
      const withTransfers = await allPages(async (offset) =>
        same(await api.GET('/extended/v1/address/{principal}/transactions_with_transfers', { params: { path, query: { limit: 50, offset, unanchored: true } } })),
      );
      expect(withTransfers.items.length).toBe(withTransfers.total);
      for (const w of withTransfers.items) {
        const moved = w.stx_transfers.reduce((n, x) => n + (x.recipient === principal ? BigInt(x.amount) : 0n), 0n);
        expect(BigInt(w.stx_received)).toBe(moved);
        seen.transfers += w.stx_transfers.length + (w.ft_transfers?.length ?? 0) + (w.nft_transfers?.length ?? 0);
      }
      // every tx the principal sent is in both lists
      const sent = txs.items.filter((t) => t.sender_address === principal);
      const listed = new Set(withTransfers.items.map((w) => w.tx.tx_id));
      for (const t of sent) expect(listed.has(t.tx_id), t.tx_id).toBe(true);

      // nonces: the next one follows the last executed (the highest nonce it sent) and the last pending
      const nonces = await same(await api.GET('/extended/v1/address/{principal}/nonces', { params: { path } }));
      const lastSent = sent.filter((t) => !t.sponsored).reduce<number | null>((m, t) => (m === null || t.nonce > m ? t.nonce : m), null);
      expect(nonces.last_executed_tx_nonce, principal).toBe(lastSent);
      const pending = await allPages(async (offset) =>
        same(await api.GET('/extended/v1/address/{principal}/mempool', { params: { path, query: { limit: 50, offset } } })),
      );
      const pendingSent = pending.items.filter((t) => t.sender_address === principal);
      seen.pending += pending.items.length;
      if (!pendingSent.length) {
        expect(nonces.last_mempool_tx_nonce).toBeNull();
        expect(nonces.possible_next_nonce).toBe(lastSent === null ? 0 : lastSent + 1);
      } else {
        expect(nonces.last_mempool_tx_nonce).toBe(Math.max(...pendingSent.map((t) => t.nonce)));
        expect(nonces.possible_next_nonce).toBe(Math.max(nonces.last_mempool_tx_nonce!, lastSent ?? -1) + 1);
        for (const t of pendingSent) {
          const one = await same(await api.GET('/extended/v1/tx/{tx_id}', { params: { path: { tx_id: t.tx_id } } }));
          expect(one.tx_status).toBe('pending');
        }
      }
      const noncesV3 = await same(await api.GET('/extended/v3/principals/{principal}/nonces', { params: { path } }));
      expect([noncesV3.next_nonce, noncesV3.last_confirmed_nonce, noncesV3.mempool.last_nonce]).toEqual([
        nonces.possible_next_nonce,
        nonces.last_executed_tx_nonce,
        nonces.last_mempool_tx_nonce,
      ]);

      const assets = await allPages(async (offset) =>
        same(await api.GET('/extended/v1/address/{principal}/assets', { params: { path, query: { limit: 50, offset } } })),
      );
      expect(assets.items.length).toBe(assets.total);
      // the FT balances the balance answer reports are the v2 and v3 FT balances
      const ftV2 = await same(await api.GET('/extended/v2/addresses/{principal}/balances/ft', { params: { path, query: { limit: 200 } } }));
      const ftV3 = await same(await api.GET('/extended/v3/principals/{principal}/balances/ft', { params: { path, query: { limit: 200 } } }));
      const held = Object.entries(balances.fungible_tokens).filter(([, b]) => BigInt(b.balance) > 0n).map(([k, b]) => `${k}=${b.balance}`).sort();
      expect(ftV2.results.map((r) => `${r.token}=${r.balance}`).sort()).toEqual(held);
      expect(ftV3.results.map((r) => `${r.asset_identifier}=${r.balance}`).sort()).toEqual(held);
      seen.ftHeld += held.length;
    }
  });

  it('tokens: NFT holdings, their history and mints; FT holders', async () => {
    for (const principal of wallets) {
      const holdings = await allPages(async (offset) =>
        same(await api.GET('/extended/v1/tokens/nft/holdings', { params: { query: { principal, limit: 50, offset, tx_metadata: false } } })),
      );
      expect(holdings.items.length).toBe(holdings.total);
      const balances = await same(await api.GET('/extended/v1/address/{principal}/balances', { params: { path: { principal } } }));
      const perAsset = new Map<string, number>();
      for (const h of holdings.items) perAsset.set(h.asset_identifier, (perAsset.get(h.asset_identifier) ?? 0) + 1);
      for (const [asset, n] of perAsset) expect(Number(balances.non_fungible_tokens[asset]?.count), `${principal} ${asset}`).toBe(n);
      const v3 = await same(await api.GET('/extended/v3/principals/{principal}/balances/nft', { params: { path: { principal }, query: { limit: 200 } } }));
      expect(v3.results.map((r) => `${r.asset_identifier} ${r.value.hex}`).sort()).toEqual(holdings.items.map((h) => `${h.asset_identifier} ${h.value.hex}`).sort());
      seen.nftHeld += holdings.total;
      for (const h of holdings.items) {
        const history = await same(
          await api.GET('/extended/v1/tokens/nft/history', {
            params: { query: { asset_identifier: h.asset_identifier, value: h.value.hex, limit: 50, tx_metadata: false } },
          }),
        );
        // the newest event of an NFT it holds gave it to the holder
        expect(history.total).toBeGreaterThan(0);
        // every anchored canonical event of that NFT is counted
        const [{ n }] = await svc.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM events WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical
            AND index_block_hash <> '' AND asset_identifier = ${h.asset_identifier} AND value_hex = ${h.value.hex}`;
        expect(history.total, `${h.asset_identifier} ${h.value.repr}`).toBe(n);
        expect(history.results[0].recipient, `${h.asset_identifier} ${h.value.repr}`).toBe(principal);
        const mints = await allPages(async (offset) =>
          same(await api.GET('/extended/v1/tokens/nft/mints', { params: { query: { asset_identifier: h.asset_identifier, limit: 50, offset, tx_metadata: false } } })),
        );
        expect(mints.items.length).toBe(mints.total);
        const minted = history.results.some((e) => e.asset_event_type === 'mint');
        expect(mints.items.some((m) => m.value.hex === h.value.hex)).toBe(minted);
        seen.nftMints += mints.total;
      }
      for (const [token, b] of Object.entries(balances.fungible_tokens)) {
        const holders = await allPages(async (offset) =>
          same(await api.GET('/extended/v1/tokens/ft/{token}/holders', { params: { path: { token }, query: { limit: 200, offset } } })),
        );
        expect(holders.items.length).toBe(holders.total);
        if (BigInt(b.balance) > 0n) expect(holders.items.find((x) => x.address === principal)?.balance, token).toBe(b.balance);
        const supply = await same(await api.GET('/extended/v1/tokens/ft/{token}/holders', { params: { path: { token }, query: { limit: 1 } } }));
        expect(BigInt(supply.total_supply)).toBe(holders.items.reduce((n, x) => n + BigInt(x.balance), 0n));
        seen.ftHolders += holders.total;
      }
    }
  });

  it('transactions and fees: recent and pending lists, lookups, mempool fee priorities, fee rate', async () => {
    const recent = await same(await api.GET('/extended/v1/tx/', { params: { query: { limit: 10 } } }));
    expect(recent.results.length).toBe(Math.min(10, recent.total));
    for (const t of recent.results.slice(0, 3)) {
      const one = await same(await api.GET('/extended/v1/tx/{tx_id}', { params: { path: { tx_id: t.tx_id } } }));
      expect(one.tx_id).toBe(t.tx_id);
    }
    const mempool = await same(await api.GET('/extended/v1/tx/mempool', { params: { query: { limit: 50 } } }));
    expect(mempool.results.length).toBe(Math.min(50, mempool.total));
    const fees = await same(await api.GET('/extended/v2/mempool/fees'));
    for (const k of ['no_priority', 'low_priority', 'medium_priority', 'high_priority'] as const) expect(typeof fees.all[k]).toBe('number');
    if (mempool.total) {
      // a pending token transfer's fee sits within the range of the pending fees
      const rates = mempool.results.map((t) => Number(t.fee_rate));
      expect(fees.all.high_priority).toBeLessThanOrEqual(Math.max(...rates));
      expect(fees.all.no_priority).toBeGreaterThanOrEqual(Math.min(...rates));
    }
    const [raw] = await svc.db.sql<{ raw_tx: string }[]>`SELECT raw_tx FROM txs WHERE canonical AND tx_type = 'token_transfer' LIMIT 1`;
    if (raw) {
      const body = { transaction: raw.raw_tx };
      const rate = await same(await api.POST('/extended/v1/fee_rate/', { body }), body);
      expect(rate.fee_rate).toBeGreaterThan(0);
      seen.feeEstimates++;
    }
  });
});

describe('what the wallet checks met', () => {
  it('every kind of answer was non-empty somewhere', () => {
    console.log('wallet-client coverage', seen);
    for (const [kind, n] of Object.entries(seen)) expect(n, kind).toBeGreaterThan(0);
  });
});
