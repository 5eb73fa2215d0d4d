/**
 * mempool_restore (sql/functions/mempool.sql) returns orphaned txs to the mempool. The reference does it in steps:
 * every pruned tx of their payer+nonce groups back to pending, then the orphaned txs never seen in the mempool go in
 * through mempool_insert_rows, whose replace-by-fee drops the losers of their groups again. The function reads the
 * rows to restore first and leaves out of the restoring UPDATE those that replace-by-fee leaves dropped. Here every
 * call the projector makes on a generated chain with forks also runs those steps one after the other, in a
 * subtransaction it rolls back, and the two must leave the same mempool and answer the same txs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, emptyChainTables, type TestDatabase } from '../helpers/db.js';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { ChainGenerator } from '../../load/generator/index.js';
import { createLogger } from '../../src/logger.js';

const log = createLogger('silent');

/** The reference's steps (restoreMempoolTxs), and the comparison of their outcome with mempool_restore's. */
const CHECKED_RESTORE = `
CREATE TABLE restore_checks (n bigserial, same_state boolean, same_ids boolean, restored int, dropped_again int);

CREATE FUNCTION mempool_state() RETURNS text LANGUAGE sql AS $f$
  SELECT md5(COALESCE(string_agg(tx_id || ':' || status || ':' || pruned || ':' || rbf_lazy || ':' ||
    COALESCE(mempool_replaced_by(rbf_lazy, sender_address, nonce, replaced_by_tx_id), '-') || ':' ||
    receipt_time || ':' || receipt_block_height || ':' || seq, ',' ORDER BY tx_id), '')) FROM mempool_txs
$f$;

ALTER FUNCTION mempool_restore(text[], bigint, bigint) RENAME TO mempool_restore_checked;

CREATE FUNCTION mempool_restore(p_ids text[], p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql AS $f$
DECLARE
  v_steps_state text;
  v_steps_ids text[];
  v_restored text[];
  v_need text[];
  v_rows json;
  v_dropped int;
  v_ids text[];
BEGIN
  BEGIN
    WITH u AS (
      UPDATE mempool_txs SET pruned = false, status = 'pending', replaced_by_tx_id = NULL, rbf_lazy = false
      WHERE pruned AND tx_id = ANY(mempool_same_nonce(p_ids))
      RETURNING tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_restored FROM u;
    v_need := ARRAY(SELECT DISTINCT x FROM unnest(p_ids) x WHERE x <> ALL(v_restored) ORDER BY x);
    v_rows := mempool_rows_of_mined(v_need);
    IF v_rows IS NOT NULL THEN PERFORM mempool_insert_rows(v_rows, p_tip, p_seq); END IF;
    v_steps_state := mempool_state();
    v_steps_ids := v_restored || v_need;
    SELECT count(*) INTO v_dropped FROM mempool_txs WHERE tx_id = ANY(v_restored) AND pruned;
    RAISE EXCEPTION 'roll the steps back';
  EXCEPTION WHEN raise_exception THEN
    NULL;
  END;
  v_ids := mempool_restore_checked(p_ids, p_tip, p_seq);
  INSERT INTO restore_checks (same_state, same_ids, restored, dropped_again)
  VALUES (mempool_state() = v_steps_state,
    ARRAY(SELECT x FROM unnest(v_ids) x ORDER BY x) = ARRAY(SELECT x FROM unnest(v_steps_ids) x ORDER BY x),
    cardinality(v_restored), v_dropped);
  RETURN v_ids;
END
$f$;
`;

describe('mempool_restore: the reference steps without writing a row twice', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sp_mempool_restore');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('every restore of a generated chain with forks and microblock streams ends as the steps one after the other do', async () => {
    await emptyChainTables(db.sql);
    await db.sql.unsafe(CHECKED_RESTORE);
    const pipeline = testPipeline(db.sql, log);
    const gen = new ChainGenerator({ blocks: 150, txsPerBlock: 6, seed: 'restore', forks: true, forkEvery: 5, forkDepth: 2, microblockEvery: 4 });
    let n = 0;
    for await (const m of gen.messages()) {
      n++;
      expect((await applied(pipeline, m.path, m.body)).status, `message ${n} (${m.path})`).toBe(200);
    }
    const checks = await db.sql<{ same_state: boolean; same_ids: boolean; restored: number; dropped_again: number }[]>`
      SELECT same_state, same_ids, restored, dropped_again FROM restore_checks ORDER BY n`;
    // the chain restored txs, and some restored rows were dropped again by the insert's replace-by-fee
    expect(checks.length).toBeGreaterThan(10);
    expect(checks.some((c) => c.restored > 0)).toBe(true);
    expect(checks.some((c) => c.dropped_again > 0)).toBe(true);
    for (const [i, c] of checks.entries()) {
      expect(c.same_state, `restore ${i + 1}: mempool_txs`).toBe(true);
      expect(c.same_ids, `restore ${i + 1}: the restored txs`).toBe(true);
    }
  }, 300_000);
});
