/**
 * /extended/v1/address/{principal}/stx_inbound (sql/0109): `total` from the maintained per-recipient, per-arm counts
 * and the page from each arm's newest rows. On every fixture and on a generated chain with forks and microblock
 * streams (the unconfirmed stream included), for the principals with the most inbound rows, every page, total and
 * height cut equals the plain statement: the three arms over the whole history, counted and sorted whole. The counts
 * themselves equal the canonical history after every block (test/store/token-tables.test.ts checks the other summed tables
 * the same way) and after their backfill. Bulk sends are added to the generated chain (withBulkSends).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnFixture, checkOnGeneratedChain, expectBackfillEquals, migrationBackfill, type DerivedTable } from '../helpers/derived.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { createLogger } from '../../src/logger.js';
import { inboundTransfers } from '../../src/store/principal-txs.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');

/** Every inbound row of the principal under the height rule, as the route prints them, in the route's order. */
async function plain(sql: Sql, p: string, rule: { maxHeight?: number; atHeight?: number }) {
  const h = (col: string) => (rule.atHeight !== undefined ? sql`${sql(col)} = ${rule.atHeight}` : sql`${sql(col)} <= ${rule.maxHeight ?? 0}`);
  return sql<{ tx_id: string; transfer_type: string; amount: string; memo: string | null; block_height: number }[]>`
    SELECT tx_id, transfer_type, amount, memo, block_height FROM (
      SELECT e.amount::text AS amount, l.value_hex AS memo, e.block_height, e.tx_id, t.microblock_sequence, e.tx_index,
        'bulk-send' AS transfer_type, 1 AS arm, e.event_index
      FROM events e JOIN txs t USING (tx_id, index_block_hash, microblock_hash)
      JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash AND l.microblock_hash = e.microblock_hash
        AND l.event_index = e.event_index + 1 AND l.event_type = 'smart_contract_log'
        AND l.contract_id IN ('SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.send-many-memo', 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B.send-many-memo')
        AND l.canonical AND l.microblock_canonical
      WHERE e.event_type = 'stx_asset' AND e.recipient = ${p} AND e.canonical AND e.microblock_canonical AND ${h('e.block_height')}
      UNION ALL
      SELECT e.amount::text, e.api -> 'asset' ->> 'memo', e.block_height, e.tx_id, t.microblock_sequence, e.tx_index,
        'stx-transfer-memo', 2, e.event_index
      FROM events e JOIN txs t USING (tx_id, index_block_hash, microblock_hash)
      WHERE e.event_type = 'stx_asset' AND e.recipient = ${p} AND e.canonical AND e.microblock_canonical
        AND e.api -> 'asset' ->> 'memo' IS NOT NULL AND ${h('e.block_height')}
      UNION ALL
      SELECT token_transfer_amount::text, api -> 'token_transfer' ->> 'memo', block_height, tx_id, microblock_sequence, tx_index,
        'stx-transfer', 3, 0
      FROM txs WHERE canonical AND microblock_canonical AND tx_type = 'token_transfer' AND token_transfer_recipient = ${p}
        AND ${h('block_height')}
    ) x ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC, arm, event_index`;
}

async function countsNow(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`SELECT recipient || '|' || arm || '|' || n AS l FROM stx_inbound_counts WHERE n <> 0 ORDER BY 1`;
  return rows.map((r) => r.l);
}

/** The counts from the canonical anchored history (the plain statement's arms, per recipient). */
async function countsFromHistory(sql: Sql): Promise<string[]> {
  const rows = await sql<{ l: string }[]>`
    SELECT r || '|' || arm || '|' || count(*) AS l FROM (
      SELECT e.recipient AS r, 1 AS arm FROM events e
      JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash AND l.microblock_hash = e.microblock_hash
        AND l.event_index = e.event_index + 1 AND l.event_type = 'smart_contract_log'
        AND l.contract_id IN ('SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.send-many-memo', 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B.send-many-memo')
      WHERE e.event_type = 'stx_asset' AND e.recipient IS NOT NULL AND e.canonical AND e.microblock_canonical AND e.index_block_hash <> ''
      UNION ALL
      SELECT recipient, 2 FROM events WHERE event_type = 'stx_asset' AND recipient IS NOT NULL AND canonical AND microblock_canonical
        AND index_block_hash <> '' AND api -> 'asset' ->> 'memo' IS NOT NULL
      UNION ALL
      SELECT token_transfer_recipient, 3 FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''
        AND tx_type = 'token_transfer' AND token_transfer_recipient IS NOT NULL
    ) x GROUP BY r, arm ORDER BY 1`;
  return rows.map((r) => r.l);
}

/** Pages, totals and height cuts of the busiest recipients against the plain statement; returns the rows compared. */
async function pagesAgree(sql: Sql): Promise<number> {
  const [{ tip }] = await sql<{ tip: number }[]>`SELECT COALESCE(max(block_height), 0)::int AS tip FROM blocks WHERE canonical`;
  const busiest = await sql<{ p: string }[]>`
    SELECT recipient AS p FROM stx_inbound_counts GROUP BY recipient ORDER BY sum(n) DESC, recipient LIMIT 4`;
  let compared = 0;
  for (const { p } of busiest) {
    const all = await plain(sql, p, { maxHeight: tip + 1 });
    const heights = [...new Set(all.map((r) => Number(r.block_height)))];
    const rules = [
      { maxHeight: tip },
      { maxHeight: tip + 1 },
      { maxHeight: Math.floor(tip / 2) },
      ...heights.slice(0, 2).map((h) => ({ atHeight: h })),
    ];
    for (const rule of rules) {
      const want = await plain(sql, p, rule);
      for (const [limit, offset] of [[20, 0], [3, 0], [3, 4], [50, 1], [5, want.length], [5, want.length + 3]]) {
        const got = await inboundTransfers(sql, p, { ...rule, limit, offset });
        const page = want.slice(offset, offset + limit);
        const label = `${p} ${JSON.stringify(rule)} limit ${limit} offset ${offset}`;
        expect(got.rows.map((r) => [r.tx_id, r.transfer_type, r.amount, r.memo, Number(r.block_height)]), label).toEqual(
          page.map((r) => [r.tx_id, r.transfer_type, r.amount, r.memo, Number(r.block_height)]),
        );
        expect(got.total, label).toBe(page.length ? want.length : 0);
        compared += page.length;
      }
    }
  }
  return compared;
}

/**
 * Bulk sends, which no fixture and no generated chain has: after every third STX transfer event of a block or
 * microblock message, the print a send-many-memo call emits (its memo as a Clarity buffer), later events renumbered.
 */
function withBulkSends(path: string, body: string, counter: { n: number }): string {
  if (path !== '/new_block' && path !== '/new_microblocks') return body;
  const msg = JSON.parse(body) as { events?: { txid: string; type: string; event_index?: number }[] };
  if (!msg.events?.length) return body;
  const out: Record<string, unknown>[] = [];
  for (const e of msg.events) {
    out.push(e);
    if (e.type === 'stx_transfer_event' && counter.n++ % 3 === 0) {
      out.push({
        txid: e.txid,
        type: 'contract_event',
        committed: true,
        // (buff 2) 0x6869
        contract_event: { contract_identifier: 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B.send-many-memo', topic: 'print', value: null, raw_value: '0x02000000026869' },
      });
    }
  }
  if (msg.events.some((e) => e.event_index !== undefined)) out.forEach((e, i) => (e.event_index = i));
  return JSON.stringify({ ...msg, events: out });
}

const inboundCounts: DerivedTable<string[]> = {
  name: 'stx_inbound_counts',
  read: countsNow,
  recompute: countsFromHistory,
  backfill: migrationBackfill(['stx_inbound_counts'], ['0109_stx_inbound.sql']),
};

describe('stx_inbound: maintained counts and bounded pages', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_stx_inbound');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const name of fixtureNames()) {
    it(`${name}: pages and totals equal the plain statement; counts equal the history, after a re-delivery and their backfill`, async () => {
      await checkOnFixture(db.sql, log, name, inboundCounts);
      await pagesAgree(db.sql);
    });
  }

  it('a generated chain with forks and microblock streams: counts after every block, pages with the unconfirmed stream', async () => {
    let unconfirmedSeen = false;
    const counter = { n: 0 };
    // the pages, once, while the unconfirmed stream has transfers
    const onMessage = async (m: { path: string }) => {
      if (m.path !== '/new_microblocks') return;
      const [{ n }] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM txs WHERE index_block_hash = '' AND canonical AND microblock_canonical AND tx_type = 'token_transfer'`;
      if (n > 0 && !unconfirmedSeen) {
        unconfirmedSeen = true;
        expect(await pagesAgree(db.sql)).toBeGreaterThan(0);
      }
    };
    const gen = { blocks: 50, txsPerBlock: 8, seed: 'inbound', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 3 };
    await checkOnGeneratedChain(db.sql, log, gen, inboundCounts, { onMessage, body: (m) => withBulkSends(m.path, m.body, counter) });
    expect(unconfirmedSeen).toBe(true);
    // the bulk-send arm has rows, anchored and orphaned ones among them
    const [{ bulk }] = await db.sql<{ bulk: number }[]>`SELECT COALESCE(sum(n), 0)::int AS bulk FROM stx_inbound_counts WHERE arm = 1`;
    expect(bulk).toBeGreaterThan(10);
    expect(await pagesAgree(db.sql)).toBeGreaterThan(50);
    await expectBackfillEquals(db.sql, inboundCounts);
  });
});
