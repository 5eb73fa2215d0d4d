/**
 * Address rooms for a block stored off the canonical chain (a fork's first blocks, before they win). The reference
 * notifies every principal such a block touches, at the block's height; for a principal with address-transaction
 * listeners it first reads that principal's canonical txs at that height and, finding none, sends nothing at all (not
 * even the balance). A principal followed only in address-stx-balance gets its balance either way. Half the accounts
 * of a generated chain with forks are followed in both rooms, the other half in the balance room only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay, startTestService, type TestService } from '../helpers/service.js';
import { recordingSocket } from '../helpers/push-clients.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { GeneratedMessage } from '../../load/generator/types.js';

const opts = { blocks: 60, txsPerBlock: 8, seed: 'push-fork-principals', forks: true, forkEvery: 6, forkDepth: 2, mempool: false, microblocks: false };

interface Tagged {
  event: string;
  args: unknown[];
  line: number;
}

describe('address rooms for a block stored non-canonical', () => {
  let svc: TestService;
  const both: string[] = [];
  const balanceOnly: string[] = [];
  const got: Tagged[] = [];
  /** line → the block stored off the canonical chain there: its height and the followed principals it touches */
  const offChain = new Map<number, { height: number; touched: string[]; withCanonicalTxs: Set<string> }>();
  /**
   * line → a block that reorganized the chain there: its own txs (the node's message), the principals they touch,
   * and the followed principals touched only by the txs of the blocks it restored
   */
  const reorgs = new Map<number, { txIds: Set<string>; touched: Set<string>; restoredOnly: string[] }>();

  beforeAll(async () => {
    const gen = new ChainGenerator(opts);
    gen.accountAddresses.forEach((a, i) => (i % 2 ? balanceOnly : both).push(a));
    const messages: GeneratedMessage[] = [];
    for await (const m of gen.messages()) messages.push(m);
    svc = await startTestService();
    const rooms = [...both.flatMap((p) => [`address-transaction:${p}`, `address-stx-balance:${p}`]), ...balanceOnly.map((p) => `address-stx-balance:${p}`)];
    const socket = await recordingSocket(svc.api, { rooms });
    const followed = new Set([...both, ...balanceOnly]);
    let line = 0;
    const offCanonical = async () =>
      new Set((await svc.db.sql<{ h: string }[]>`SELECT index_block_hash AS h FROM blocks WHERE NOT canonical`).map((r) => r.h));
    let orphanedBefore = new Set<string>();
    try {
      for (; line < messages.length; line++) {
        const m = messages[line];
        const before = got.length;
        const [status] = await replay(svc.observer, [{ id: String(line + 1), timestamp: '0', path: m.path, body: m.body }]);
        expect(status).toBe(200);
        await svc.service.pipeline!.idle();
        await svc.service.push!.publisher!.idle();
        await socket.sync();
        for (const r of socket.got.splice(0)) got.push({ event: r.event, args: r.args, line });
        expect(got.length).toBeGreaterThanOrEqual(before);
        if (m.path !== '/new_block') continue;
        const body = JSON.parse(m.body) as { index_block_hash: string; transactions: { txid: string }[] };
        const hash = '0x' + body.index_block_hash.replace(/^0x/, '');
        const orphanedNow = await offCanonical();
        const restored = [...orphanedBefore].filter((h) => !orphanedNow.has(h));
        orphanedBefore = orphanedNow;
        if (restored.length) {
          const principalsOf = async (blocks: string[]) =>
            new Set(
              (
                await svc.db.sql<{ p: string }[]>`
                  SELECT DISTINCT p FROM (
                    SELECT unnest(ARRAY[sender_address, token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id]) AS p
                    FROM txs WHERE index_block_hash = ANY(${blocks})
                    UNION ALL
                    SELECT unnest(ARRAY[sender, recipient, locked_address]) FROM events
                    WHERE index_block_hash = ANY(${blocks})
                      AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset', 'stx_lock')
                  ) x WHERE p IS NOT NULL`
              ).map((r) => r.p),
            );
          const touched = await principalsOf([hash]);
          const restoredTouched = await principalsOf(restored);
          reorgs.set(line, {
            txIds: new Set(body.transactions.map((t) => '0x' + t.txid.replace(/^0x/, ''))),
            touched,
            restoredOnly: [...restoredTouched].filter((p) => followed.has(p) && !touched.has(p)),
          });
        }
        // the state right after this line: was the block stored off the canonical chain, and who does it touch
        const [b] = await svc.db.sql<{ canonical: boolean; block_height: number }[]>`
          SELECT canonical, block_height FROM blocks WHERE index_block_hash = ${hash}`;
        if (!b || b.canonical) continue;
        const touched = await svc.db.sql<{ p: string }[]>`
          SELECT DISTINCT p FROM (
            SELECT unnest(ARRAY[sender_address, token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id]) AS p
            FROM txs WHERE index_block_hash = ${hash}
            UNION ALL
            SELECT unnest(ARRAY[sender, recipient]) FROM events
            WHERE index_block_hash = ${hash} AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
          ) x WHERE p IS NOT NULL`;
        const canonicalAtHeight = await svc.db.sql<{ p: string }[]>`
          SELECT DISTINCT p FROM (
            SELECT unnest(ARRAY[t.sender_address, t.token_transfer_recipient, t.contract_call_contract_id, t.smart_contract_contract_id]) AS p
            FROM txs t WHERE t.block_height = ${b.block_height} AND t.canonical AND t.microblock_canonical
            UNION ALL
            SELECT unnest(ARRAY[e.sender, e.recipient]) FROM events e JOIN txs t ON t.tx_id = e.tx_id
            WHERE t.block_height = ${b.block_height} AND t.canonical AND t.microblock_canonical
              AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
          ) x WHERE p IS NOT NULL`;
        offChain.set(line, {
          height: b.block_height,
          touched: touched.map((r) => r.p).filter((p) => followed.has(p)),
          withCanonicalTxs: new Set(canonicalAtHeight.map((r) => r.p)),
        });
      }
    } finally {
      socket.socket.disconnect();
    }
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const roomsAt = (line: number, p: string) => got.filter((m) => m.line === line && m.event.endsWith(`:${p}`)).map((m) => m.event);

  it('the chain stores blocks off the canonical chain that touch followed principals of both kinds', () => {
    expect(offChain.size).toBeGreaterThan(3);
    const touched = [...offChain.values()].flatMap((o) => o.touched);
    expect(touched.some((p) => both.includes(p))).toBe(true);
    expect(touched.some((p) => balanceOnly.includes(p))).toBe(true);
  });

  it('followed in address-transaction, no canonical tx at that height: nothing at all', () => {
    let cases = 0;
    for (const [line, o] of offChain) {
      for (const p of o.touched) {
        if (!both.includes(p) || o.withCanonicalTxs.has(p)) continue;
        cases++;
        expect({ line, p, rooms: roomsAt(line, p) }).toEqual({ line, p, rooms: [] });
      }
    }
    expect(cases).toBeGreaterThan(0);
  });

  it('followed in address-stx-balance only: the balance at that height when it changed, canonical txs or not', () => {
    // the same situation as above, for the other half: here the reference sends the balance
    let sent = 0;
    for (const [line, o] of offChain) {
      for (const p of o.touched) {
        if (!balanceOnly.includes(p) || o.withCanonicalTxs.has(p)) continue;
        const rooms = roomsAt(line, p);
        for (const r of rooms) expect(r).toBe(`address-stx-balance:${p}`);
        sent += rooms.length;
      }
    }
    expect(sent).toBeGreaterThan(0);
  });

  it('no address-transaction message for a block stored off the canonical chain', () => {
    for (const line of offChain.keys()) {
      expect(got.filter((m) => m.line === line && m.event.startsWith('address-transaction:')).map((m) => m.event)).toEqual([]);
    }
  });

  it('a block that reorganizes the chain: address rooms hear of its own txs only, not of the blocks it restored', () => {
    expect(reorgs.size).toBeGreaterThan(0);
    // principals followed that only the restored blocks touch: the reference tells them nothing at that line
    const quiet = [...reorgs].flatMap(([line, r]) => r.restoredOnly.map((p) => ({ line, p })));
    expect(quiet.length).toBeGreaterThan(0);
    for (const { line, p } of quiet) expect({ line, p, rooms: roomsAt(line, p) }).toEqual({ line, p, rooms: [] });
    for (const [line, r] of reorgs) {
      for (const m of got.filter((x) => x.line === line && x.event.startsWith('address-'))) {
        const p = m.args[0] as string;
        expect({ line, room: m.event, touchedByTheBlock: r.touched.has(p) }).toEqual({ line, room: m.event, touchedByTheBlock: true });
        if (m.event.startsWith('address-transaction:')) {
          const txId = (m.args[1] as { tx: { tx_id: string } }).tx.tx_id;
          expect({ line, txId, ofTheBlock: r.txIds.has(txId) }).toEqual({ line, txId, ofTheBlock: true });
        }
      }
    }
  });
});
