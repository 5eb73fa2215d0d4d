-- One hook for every table derived from canonical blocks (STX totals, FT balances, NFT custody, per-principal indexes,
-- names, PoX cycles, counts …), so a family adds its table without touching the projector (sql/0016_derived_hook.sql,
-- sql/0100_derived_batches.sql). The projector calls stx_totals_apply(blocks, sign) with each block that becomes
-- canonical (+1: a new block, or a branch restored by a reorg) and each that stops being canonical (-1), in the
-- block's transaction, after the canonical flags are set, the orphaned blocks before the restored ones. That call runs
-- the STX totals (stx_totals_apply_rows, stx.sql) and then every function registered in derived_appliers, in name
-- order. A new family adds its applier to a functions file and, in a new numbered migration, its table, its
-- derived_appliers row and its backfill:
--
--   INSERT INTO derived_appliers (name, fn) VALUES ('my_family', 'my_family_apply') ON CONFLICT DO NOTHING;
--
-- Projector batches. An applier is a set-wise function of (blocks, sign): called with one block it pays its
-- statements' fixed cost for ten transactions; called with a few hundred it costs about a sixth as much per block
-- (9,000 blocks of the generated chain: 8.8 ms → 1.5 ms per block for all of them). When the projector applies a batch
-- of more than one message it sets `stacks_pulse.defer_derived` for its transaction; derived_apply then records each
-- block's sign in derived_deferred instead of applying it, and derived_flush() applies the net effect of every flip
-- recorded in the tables it sees (called in the batch's transaction before it commits, or by the projector's second
-- connection right after, in a REPEATABLE READ transaction: then the net effect of several committed batches at
-- once, which is that of one larger batch): the blocks that ended the batch non-canonical (-1) first, then
-- the ones that ended it canonical (+1), as the one-message path does for a reorg. A block that became canonical and
-- was orphaned again inside the batch (or the reverse) nets to 0 and is not applied at all (only the zero rows the
-- one-message path leaves behind in the summed tables are written: derived_touch).
--
-- That equals applying each block as it comes only for an applier whose result depends on the final canonical state,
-- not on the order of the flips: sums over the blocks' own rows, flags, and rows that depend only on a block's
-- ancestry, built lowest first. An applier that is not (burnchain rewards: a -1 marks rewards non-canonical and a +1
-- does not restore them) is marked `batched = false` and still runs at each call; NFT custody keeps its own deferred
-- rows (tokens.sql). The projector test compares batch sizes 1, 7 and 500 on every fixture and on a generated chain
-- with forks.
--
-- derived_apply and derived_flush plan generically (`plan_cache_mode`, see projector.sql).

-- Every applier of the hook, immediately, with one sign.
CREATE OR REPLACE FUNCTION derived_apply_now(blocks text[], sign integer, only_batched boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  a record;
BEGIN
  PERFORM stx_totals_apply_rows(blocks, sign);
  FOR a IN SELECT fn FROM derived_appliers WHERE batched OR NOT only_batched ORDER BY name LOOP
    EXECUTE format('SELECT %I($1, $2)', a.fn) USING blocks, sign;
  END LOOP;
END
$$;

-- The hook: immediately, or deferred to derived_flush inside a projector batch (`stacks_pulse.defer_derived`).
CREATE OR REPLACE FUNCTION derived_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  a record;
BEGIN
  IF current_setting('stacks_pulse.defer_derived', true) IS DISTINCT FROM 'on' THEN
    PERFORM derived_apply_now(blocks, sign, false);
    RETURN;
  END IF;
  FOR a IN SELECT fn FROM derived_appliers WHERE NOT batched ORDER BY name LOOP
    EXECUTE format('SELECT %I($1, $2)', a.fn) USING blocks, sign;
  END LOOP;
  INSERT INTO derived_deferred AS d (index_block_hash, sign, first_sign)
  SELECT DISTINCT b, sign, sign FROM unnest(blocks) AS b
  ON CONFLICT (index_block_hash) DO UPDATE SET sign = d.sign + EXCLUDED.sign;
END
$$;

-- The name the projector calls (the STX totals came first; they are stx_totals_apply_rows now).
CREATE OR REPLACE FUNCTION stx_totals_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM derived_apply(blocks, sign);
END
$$;

-- What applying blocks (+1) and removing them again (-1) leaves in the summed tables: a row, at 0 for those blocks, for
-- every key they touched (the reference's ft_balances keeps such rows too, and lists them among a token's holders).
-- The appliers whose tables keep such rows are registered with derived_appliers.zero_rows.
CREATE OR REPLACE FUNCTION derived_touch(blocks text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  a record;
BEGIN
  PERFORM stx_totals_apply_rows(blocks, 0);
  FOR a IN SELECT fn FROM derived_appliers WHERE zero_rows ORDER BY name LOOP
    EXECUTE format('SELECT %I($1, 0)', a.fn) USING blocks;
  END LOOP;
  INSERT INTO principal_tx_counts (principal, stx_txs, transfer_txs, all_txs)
  SELECT DISTINCT r.principal, 0, 0, 0 FROM principal_tx_roles(array_remove(blocks, '')) r
  ON CONFLICT (principal) DO NOTHING;
END
$$;

-- The net effect of the deferred calls of this transaction; the number of blocks applied. The NFT custody is written
-- first (one message at a time, it is written before the batched appliers run).
CREATE OR REPLACE FUNCTION derived_flush() RETURNS integer LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_minus text[];
  v_plus text[];
  v_touched text[];
  v_bad text;
BEGIN
  PERFORM nft_custody_flush();
  SELECT index_block_hash INTO v_bad FROM derived_deferred WHERE abs(sign) > 1 LIMIT 1;
  IF v_bad IS NOT NULL THEN
    RAISE EXCEPTION 'derived_flush: block % was flipped the same way twice in one batch', v_bad;
  END IF;
  v_minus := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign < 0 ORDER BY index_block_hash);
  v_plus := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign > 0 ORDER BY index_block_hash);
  v_touched := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign = 0 AND first_sign > 0 ORDER BY index_block_hash);
  DELETE FROM derived_deferred;
  IF cardinality(v_touched) > 0 THEN PERFORM derived_touch(v_touched); END IF;
  IF cardinality(v_minus) > 0 THEN PERFORM derived_apply_now(v_minus, -1, true); END IF;
  IF cardinality(v_plus) > 0 THEN PERFORM derived_apply_now(v_plus, 1, true); END IF;
  RETURN cardinality(v_minus) + cardinality(v_plus);
END
$$;

-- Backfill of a summed table (called by the migration that creates it): its applier over the canonical anchored
-- blocks stored so far, a thousand at a time, in height order.
CREATE OR REPLACE FUNCTION derived_backfill(p_fn text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_chunk text[];
BEGIN
  FOR v_chunk IN
    SELECT array_agg(index_block_hash) FROM (
      SELECT index_block_hash, (row_number() OVER (ORDER BY block_height, index_block_hash) - 1) / 1000 AS g
      FROM blocks WHERE canonical AND index_block_hash <> ''
    ) b GROUP BY g
  LOOP
    EXECUTE format('SELECT %I($1, 1)', p_fn) USING v_chunk;
  END LOOP;
END
$$;
