/**
 * Focused tests of /extended/v1/tx/events, /contract/{id}[/events], /address/{p}/stx and /address/{p}/{tx}/with_transfers.
 * Expected figures are computed here, independently, from the raw node messages of the fixtures.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createRequire } from 'node:module';
import { readFixture, type FixtureLine } from '../helpers/fixtures.js';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { get } from '../helpers/http.js';

const require = createRequire(import.meta.url);
const codec = require('@hirosystems/stacks-encoding-native-js') as typeof import('@hirosystems/stacks-encoding-native-js');

interface NodeTx {
  txid: string;
  raw_tx: string;
  status: string;
}
interface NodeEvent {
  txid: string;
  type: string;
  committed: boolean;
  event_index: number;
  [k: string]: any;
}
interface NodeBlock {
  block_height: number;
  transactions: NodeTx[];
  events: NodeEvent[];
}

function blocksOf(lines: FixtureLine[]): NodeBlock[] {
  return lines.filter((l) => l.path === '/new_block').map((l) => JSON.parse(l.body) as NodeBlock);
}

/** The STX ledger of a linear (fork-free, microblock-free) chain: per address received/sent/fees up to a height. */
function ledger(blocks: NodeBlock[], maxHeight: number) {
  const acc = new Map<string, { received: bigint; sent: bigint; fees: bigint }>();
  const of = (a: string) => {
    let x = acc.get(a);
    if (!x) acc.set(a, (x = { received: 0n, sent: 0n, fees: 0n }));
    return x;
  };
  for (const b of blocks) {
    // the boot block's txs count as block 1's
    if (Math.max(b.block_height, 1) > maxHeight) continue;
    const ok = new Set(b.transactions.filter((t) => t.status === 'success').map((t) => t.txid));
    for (const t of b.transactions) {
      const d = codec.decodeTransaction(t.raw_tx);
      const auth = d.auth as any;
      const payer = auth.sponsor_condition ?? auth.origin_condition;
      of(payer.signer.address).fees += BigInt(payer.tx_fee);
    }
    for (const e of b.events) {
      if (!e.committed || !ok.has(e.txid)) continue;
      if (e.type === 'stx_transfer_event') {
        of(e.stx_transfer_event.sender).sent += BigInt(e.stx_transfer_event.amount);
        of(e.stx_transfer_event.recipient).received += BigInt(e.stx_transfer_event.amount);
      } else if (e.type === 'stx_mint_event') {
        of(e.stx_mint_event.recipient).received += BigInt(e.stx_mint_event.amount);
      } else if (e.type === 'stx_burn_event') {
        of(e.stx_burn_event.sender).sent += BigInt(e.stx_burn_event.amount);
      }
    }
  }
  return acc;
}

describe('parameter errors name the parameter', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  const addr = 'ST3AM1A56AK2C1XAFJ4115ZSV26EB49BVQ10MGCS0';
  const cases: [string, string][] = [
    [`/extended/v1/tx/events?address=${addr}&limit=abc`, 'querystring/limit'],
    [`/extended/v1/tx/events?address=${addr}&limit=101`, 'querystring/limit'],
    [`/extended/v1/tx/events?address=${addr}&offset=-1`, 'querystring/offset'],
    [`/extended/v1/tx/events?address=${addr}&type=stx_asset,bogus`, 'querystring/type/1'],
    [`/extended/v1/tx/events?address=notanaddress`, 'querystring/address'],
    [`/extended/v1/tx/events?tx_id=0x1234`, 'querystring/tx_id'],
    [`/extended/v1/tx/events`, "'address' or 'tx_id'"],
    [`/extended/v1/tx/events?address=${addr}&tx_id=0x${'ab'.repeat(32)}`, "'address' and 'tx_id'"],
    [`/extended/v1/contract/${addr}.c/events?limit=51`, 'querystring/limit'],
    [`/extended/v1/contract/${addr}.c/events?unanchored=abc`, 'querystring/unanchored'],
    [`/extended/v1/address/notanaddress/stx`, 'params/principal'],
    [`/extended/v1/address/${addr}/stx?unanchored=yes`, 'querystring/unanchored'],
    [`/extended/v1/address/${addr}/stx?until_block=0`, 'querystring/until_block'],
    [`/extended/v1/address/${addr}/stx?until_block=xyz`, 'querystring/until_block'],
    [`/extended/v1/address/notanaddress/0x${'ab'.repeat(32)}/with_transfers`, 'params/principal'],
  ];
  it.each(cases)('%s → 400 naming %s', async (path, name) => {
    const r = await get(svc, path);
    expect(r.status).toBe(400);
    expect(r.body.statusCode).toBe(400);
    expect(r.body.error).toBe('Bad Request');
    expect(r.body.message).toContain(name);
  });

  it('empty database: balance is a 404, never a 500', async () => {
    const r = await get(svc, `/extended/v1/address/${addr}/stx`);
    expect(r.status).toBe(404);
    expect(r.body.statusCode).toBe(404);
  });

  it('unknown contract → 404; unknown tx/address → empty lists', async () => {
    expect((await get(svc, `/extended/v1/contract/${addr}.nothing`)).status).toBe(404);
    const ev = await get(svc, `/extended/v1/tx/events?address=${addr}&limit=0`);
    expect(ev.status).toBe(200);
    expect(ev.body).toEqual({ limit: 20, offset: 0, results: [] });
  });
});

describe('fuzzed-transactions-1: balances and transfers from the node events', () => {
  let svc: TestService;
  const lines = readFixture('fuzzed-transactions-1');
  const blocks = blocksOf(lines);
  const tipHeight = Math.max(...blocks.map((b) => b.block_height));
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: 'fuzzed-transactions-1' });
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('balance = received − sent − fees for every address, at the tip and at every until_block', async () => {
    const all = ledger(blocks, tipHeight);
    expect(all.size).toBeGreaterThan(1);
    // the fixture must exercise fees and transfers, or this test would prove little
    expect([...all.values()].some((x) => x.fees > 0n && x.sent > 0n)).toBe(true);
    for (const [address, x] of all) {
      const r = await get(svc, `/extended/v1/address/${address}/stx`);
      expect(r.status).toBe(200);
      expect(r.body.total_received).toBe(x.received.toString());
      expect(r.body.total_sent).toBe(x.sent.toString());
      expect(r.body.total_fees_sent).toBe(x.fees.toString());
      expect(r.body.balance).toBe((x.received - x.sent - x.fees).toString());
      expect(BigInt(r.body.estimated_balance)).toBe(
        BigInt(r.body.balance) + BigInt(r.body.pending_balance_inbound) - BigInt(r.body.pending_balance_outbound),
      );
    }
    for (let h = 1; h <= tipHeight; h += 3) {
      const at = ledger(blocks, h);
      for (const address of all.keys()) {
        const x = at.get(address) ?? { received: 0n, sent: 0n, fees: 0n };
        const r = await get(svc, `/extended/v1/address/${address}/stx?until_block=${h}`);
        expect(r.status).toBe(200);
        expect(r.body.balance).toBe((x.received - x.sent - x.fees).toString());
        expect(r.body).not.toHaveProperty('estimated_balance');
      }
    }
  });

  it('with_transfers: stx_sent = own fee + amounts sent, stx_received = amounts received', async () => {
    let checked = 0;
    for (const b of blocks) {
      const ok = new Set(b.transactions.filter((t) => t.status === 'success').map((t) => t.txid));
      for (const e of b.events) {
        if (e.type !== 'stx_transfer_event' || !e.committed || !ok.has(e.txid)) continue;
        const { sender, recipient, amount } = e.stx_transfer_event;
        const tx = b.transactions.find((t) => t.txid === e.txid)!;
        const d = codec.decodeTransaction(tx.raw_tx);
        const fee = BigInt((d.auth as any).origin_condition.tx_fee);
        const origin = (d.auth as any).origin_condition.signer.address as string;
        const s = await get(svc, `/extended/v1/address/${sender}/${e.txid}/with_transfers`);
        expect(s.status).toBe(200);
        expect(s.body.tx.tx_id).toBe(e.txid);
        expect(s.body.tx.events).toEqual([]);
        expect(s.body.stx_sent).toBe(((origin === sender ? fee : 0n) + BigInt(amount)).toString());
        expect(s.body.stx_transfers).toContainEqual({ amount, sender, recipient });
        expect(s.body.ft_transfers).toEqual([]);
        expect(s.body.nft_transfers).toEqual([]);
        const r = await get(svc, `/extended/v1/address/${recipient}/${e.txid.slice(2)}/with_transfers`);
        expect(r.status).toBe(200);
        expect(r.body.stx_received).toBe(amount);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(3);
  });
});

describe('regtest pox-4: stacking lock and contract info', () => {
  let svc: TestService;
  const lines = readFixture('regtest-env-pox-4-stack-stx-in-reward-phase-S1');
  const blocks = blocksOf(lines);
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: 'regtest-env-pox-4-stack-stx-in-reward-phase-S1' });
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('a stx_lock event shows as the lock of its address, and in tx/events by address', async () => {
    const locks = blocks.flatMap((b) => b.events.filter((e) => e.type === 'stx_lock_event' && e.committed).map((e) => ({ b, e })));
    expect(locks.length).toBeGreaterThan(0);
    for (const { b, e } of locks) {
      const l = e.stx_lock_event;
      const r = await get(svc, `/extended/v1/address/${l.locked_address}/stx`);
      expect(r.status).toBe(200);
      expect(r.body.lock_tx_id).toBe(e.txid);
      expect(r.body.locked).toBe(String(l.locked_amount));
      expect(r.body.lock_height).toBe(b.block_height);
      expect(r.body.burnchain_unlock_height).toBe(Number(l.unlock_height));
      const ev = await get(svc, `/extended/v1/tx/events?address=${l.locked_address}&type=stx_lock`);
      expect(ev.body.results.map((x: any) => x.stx_lock_event.locked_address)).toContain(l.locked_address);
      // before the lock's block there is no lock
      const before = await get(svc, `/extended/v1/address/${l.locked_address}/stx?until_block=${b.block_height - 1}`);
      expect(before.body.lock_tx_id).toBe('');
      expect(before.body.locked).toBe('0');
    }
  });

  it('contract info: abi is the compact JSON string with jsonb key order', async () => {
    const r = await get(svc, '/extended/v1/contract/ST000000000000000000002AMW42H.pox-4');
    expect(r.status).toBe(200);
    expect(typeof r.body.abi).toBe('string');
    const abi = JSON.parse(r.body.abi);
    const keys = Object.keys(abi);
    const sorted = [...keys].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    expect(keys).toEqual(sorted);
    expect(r.body.abi).not.toMatch(/": /);
    expect(r.body.source_code).toContain('pox-4');
    expect(r.body.contract_id).toBe('ST000000000000000000002AMW42H.pox-4');
  });

  it('contract events are only that contract’s smart_contract_log events', async () => {
    const id = 'ST000000000000000000002AMW42H.pox-4';
    const n = blocks.flatMap((b) => {
      const ok = new Set(b.transactions.filter((t) => t.status === 'success').map((t) => t.txid));
      return b.events.filter((e) => e.type === 'contract_event' && e.committed && ok.has(e.txid) && e.contract_event.contract_identifier === id);
    }).length;
    const r = await get(svc, `/extended/v1/contract/${id}/events?limit=50`);
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(Math.min(n, 50));
    for (const e of r.body.results) {
      expect(e.event_type).toBe('smart_contract_log');
      expect(e.contract_log.contract_id).toBe(id);
    }
  });

  it('tx/events by tx_id lists the tx events newest index first, and paging slices that list', async () => {
    const KNOWN = new Set(['contract_event', 'stx_lock_event', 'stx_transfer_event', 'stx_mint_event', 'stx_burn_event']);
    const count = new Map<string, number>();
    for (const b of blocks) {
      const ok = new Set(b.transactions.filter((t) => t.status === 'success').map((t) => t.txid));
      for (const e of b.events) if (e.committed && ok.has(e.txid) && KNOWN.has(e.type)) count.set(e.txid, (count.get(e.txid) ?? 0) + 1);
    }
    const [txid, n] = [...count].find(([, c]) => c >= 3)!;
    const all = await get(svc, `/extended/v1/tx/events?tx_id=${txid}&limit=100`);
    expect(all.status).toBe(200);
    expect(all.body.results.map((e: any) => e.event_index)).toEqual([...Array(Math.min(n, 100)).keys()].reverse());
    const page = await get(svc, `/extended/v1/tx/events?tx_id=${txid}&limit=2&offset=1`);
    expect(page.body).toEqual({ limit: 2, offset: 1, results: all.body.results.slice(1, 3) });
    const typed = await get(svc, `/extended/v1/tx/events?tx_id=${txid.slice(2)}&type=non_fungible_token_asset`);
    expect(typed.body.results).toEqual([]);
  });
});

describe('with_transfers: which principals a transaction belongs to (the reference rule)', () => {
  // a generated chain (FT and NFT transfers to principals that are neither sender nor recipient of any STX)
  let svc: TestService;
  const blocks: NodeBlock[] = [];
  beforeAll(async () => {
    const gen = new ChainGenerator({ blocks: 25, txsPerBlock: 8, seed: 'with-transfers-rule', mempool: false, microblocks: false });
    const lines: FixtureLine[] = [];
    for await (const m of gen.messages()) {
      lines.push({ id: String(lines.length + 1), timestamp: '0', path: m.path, body: m.body });
      if (m.path === '/new_block') blocks.push(JSON.parse(m.body) as NodeBlock);
    }
    svc = await startTestService();
    const statuses = await replay(svc.observer, lines);
    expect(statuses.every((s) => s === 200)).toBe(true);
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('an FT or NFT party only (no STX event, not the sender, recipient or contract) gets 404; an STX party gets the tx', async () => {
    let tokenOnly = 0;
    let stxParty = 0;
    for (const b of blocks) {
      const ok = new Set(b.transactions.filter((t) => t.status === 'success').map((t) => t.txid));
      for (const t of b.transactions) {
        if (!ok.has(t.txid)) continue;
        const d = codec.decodeTransaction(t.raw_tx) as any;
        const own = new Set<string>([d.auth.origin_condition.signer.address]);
        const p = d.payload;
        if (p.recipient_address) own.add(p.recipient_address);
        if (p.contract_address && p.contract_name) own.add(`${p.contract_address}.${p.contract_name}`);
        const evs = b.events.filter((e) => e.txid === t.txid && e.committed);
        const stxParties = new Set<string>();
        const tokenParties = new Set<string>();
        for (const e of evs) {
          const data = e[e.type] as { sender?: string; recipient?: string } | undefined;
          const into = e.type.startsWith('stx_') && e.type !== 'stx_lock_event' ? stxParties : e.type.startsWith('ft_') || e.type.startsWith('nft_') ? tokenParties : undefined;
          for (const x of [data?.sender, data?.recipient]) if (x && into) into.add(x);
        }
        for (const x of tokenParties) {
          if (own.has(x) || stxParties.has(x)) continue;
          const r = await get(svc, `/extended/v1/address/${x}/${t.txid}/with_transfers`);
          expect({ x, tx: t.txid, status: r.status }).toEqual({ x, tx: t.txid, status: 404 });
          expect(JSON.stringify(r.body)).toContain('No matching transaction found');
          tokenOnly++;
        }
        for (const x of stxParties) {
          const r = await get(svc, `/extended/v1/address/${x}/${t.txid}/with_transfers`);
          expect(r.status).toBe(200);
          expect(r.body.tx.tx_id).toBe(t.txid);
          stxParty++;
        }
      }
    }
    expect(tokenOnly).toBeGreaterThan(3);
    expect(stxParty).toBeGreaterThan(3);
  });
});
