/**
 * Replace-by-fee's losers are stored lazy (sql/0150_mempool_rbf_winners.sql): a loser that is not sponsored reads its
 * replacement from its sender+nonce group's row of mempool_rbf_winners, so a change of winner writes one row instead
 * of the whole group. Here one database runs the rules of sql/functions/mempool.sql and another the same rules with
 * every loser written into its own column (test/store/sql/mempool-rules-explicit.sql, the reference's way of storing
 * them); a generated chain with forks, microblock streams and a mempool with replacements goes into both, and after
 * every message the mempool must answer the same in both: each tx's status, pruned, replacement (as the API reads it),
 * receipt time and height, and the txs each message announced.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, emptyChainTables, type TestDatabase } from '../helpers/db.js';
import { testPipeline } from '../helpers/pipeline.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { createLogger } from '../../src/logger.js';
import type { Sql } from '../../src/store/sql.js';

const log = createLogger('silent');
const EXPLICIT_RULES = readFileSync(new URL('./sql/mempool-rules-explicit.sql', import.meta.url), 'utf8');

async function mempoolState(sql: Sql): Promise<string> {
  const [r] = await sql<{ s: string }[]>`
    SELECT md5(COALESCE(string_agg(tx_id || ':' || status || ':' || pruned || ':' ||
      COALESCE(mempool_replaced_by(rbf_lazy, sender_address, nonce, replaced_by_tx_id), '-') || ':' ||
      receipt_time || ':' || receipt_block_height || ':' || seq, ',' ORDER BY tx_id), '')) AS s
    FROM mempool_txs`;
  return r.s;
}

async function firstDifference(a: Sql, b: Sql): Promise<string> {
  const q = (sql: Sql) => sql<{ tx_id: string; v: string }[]>`
    SELECT tx_id, status || ' ' || pruned || ' ' || COALESCE(mempool_replaced_by(rbf_lazy, sender_address, nonce, replaced_by_tx_id), '-')
      || ' ' || receipt_time || ' ' || receipt_block_height AS v
    FROM mempool_txs ORDER BY tx_id`;
  const [ra, rb] = [await q(a), await q(b)];
  const mb = new Map(rb.map((r) => [r.tx_id, r.v]));
  for (const r of ra) if (mb.get(r.tx_id) !== r.v) return `${r.tx_id}: lazy ${r.v}, explicit ${mb.get(r.tx_id)}`;
  return `${ra.length} rows against ${rb.length}`;
}

describe('replace-by-fee with lazy losers', () => {
  let lazy: TestDatabase;
  let explicit: TestDatabase;
  beforeAll(async () => {
    lazy = await createTestDatabase('sp_rbf_lazy');
    explicit = await createTestDatabase('sp_rbf_explicit');
    await explicit.sql.unsafe(EXPLICIT_RULES);
  });
  afterAll(async () => {
    await lazy?.drop();
    await explicit?.drop();
  });

  it('answers after every message of a generated chain with forks as the rules that write every loser', async () => {
    await emptyChainTables(lazy.sql);
    await emptyChainTables(explicit.sql);
    const pl = testPipeline(lazy.sql, log);
    const pe = testPipeline(explicit.sql, log);
    const gen = new ChainGenerator({ blocks: 160, txsPerBlock: 6, seed: 'rbf-lazy', forks: true, forkEvery: 4, forkDepth: 2, microblockEvery: 5 });
    let n = 0;
    let changedWinner = 0;
    let lastLazyWinners = '';
    for await (const m of gen.messages()) {
      n++;
      // one receipt time for both (a mempool tx's is when the observer received it)
      const receivedAt = Date.now();
      const [rl, re] = [await pl.handle(m.path, m.body, { receivedAt }), await pe.handle(m.path, m.body, { receivedAt })];
      await pl.idle();
      await pe.idle();
      expect(rl.status, `message ${n} (${m.path})`).toBe(200);
      expect(re.status, `message ${n} (${m.path})`).toBe(200);
      const [sl, se] = [await mempoolState(lazy.sql), await mempoolState(explicit.sql)];
      if (sl !== se) expect.fail(`message ${n} (${m.path}): ${await firstDifference(lazy.sql, explicit.sql)}`);
      const [w] = await lazy.sql<{ s: string | null }[]>`SELECT string_agg(address || nonce || winner, ',' ORDER BY address, nonce) AS s FROM mempool_rbf_winners`;
      if (w.s !== null && lastLazyWinners !== '' && w.s !== lastLazyWinners) changedWinner++;
      lastLazyWinners = w.s ?? '';
    }
    // what each message announced is in the push outbox: the same txs in both
    const outbox = (sql: Sql) => sql<{ event_id: string; result: unknown }[]>`SELECT event_id, result FROM push_outbox ORDER BY event_id`;
    expect(await outbox(lazy.sql)).toEqual(await outbox(explicit.sql));
    // the chain made lazy losers, changed a group's winner under them, and the explicit rules made none
    const [l] = await lazy.sql<{ lazy: number; dropped: number }[]>`
      SELECT count(*) FILTER (WHERE rbf_lazy)::int AS lazy, count(*) FILTER (WHERE status = 'dropped_replace_by_fee')::int AS dropped
      FROM mempool_txs`;
    const [e] = await explicit.sql<{ lazy: number }[]>`SELECT count(*) FILTER (WHERE rbf_lazy)::int AS lazy FROM mempool_txs`;
    expect(l.lazy).toBeGreaterThan(5);
    expect(l.dropped).toBeGreaterThan(l.lazy / 2);
    expect(e.lazy).toBe(0);
    expect(changedWinner).toBeGreaterThan(2);
  }, 600_000);
});
