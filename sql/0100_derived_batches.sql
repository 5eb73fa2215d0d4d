-- The derived tables of a projector batch are computed once per batch, not once per block.
--
-- Each applier of the derived-table hook (sql/0016_derived_hook.sql) is a set-wise function of (blocks, sign): called
-- with one block it pays its statements' fixed cost for ten transactions; called with a few hundred it costs about a
-- sixth as much per block (measured at 9,000 blocks of the generated chain: 8.8 ms → 1.5 ms per block for all of them).
-- When the projector applies a batch of more than one message it sets `stacks_pulse.defer_derived` for its
-- transaction; derived_apply then records each block's sign in derived_deferred instead of applying it, and
-- derived_flush(), called by the projector just before it moves its place in the log, applies the net effect:
-- the blocks that ended the batch non-canonical (-1) first, then the ones that ended it canonical (+1), as the
-- one-message path does for a reorg (orphaned before restored). A block that became canonical and was orphaned again
-- inside the batch (or the reverse) nets to 0 and is not applied at all (only the zero rows the one-message path leaves
-- behind in the summed tables are written: derived_touch).
--
-- That is only equal to applying each block as it comes for an applier whose result depends on the final canonical
-- state, not on the order of the flips: sums over the blocks' own rows (STX totals, FT balances, NFT totals, the
-- principal index and its counts, the tx list total), flags (PoX cycles), recomputation from the canonical events
-- (NFT custody), and rows that depend only on a block's ancestry, built lowest first (balance checkpoints, supply,
-- BNS names). An applier that is not (burnchain rewards: a -1 marks rewards non-canonical and a +1 does not restore
-- them) is marked `batched = false` and still runs at each call. The projector test compares batch sizes 1, 7 and
-- 500 (immediate vs deferred) on every fixture and on a generated chain with forks.
ALTER TABLE derived_appliers ADD COLUMN IF NOT EXISTS batched boolean NOT NULL DEFAULT true;
UPDATE derived_appliers SET batched = false WHERE name = 'burnchain_rewards';

-- Written and emptied inside one projector transaction: it never holds a row across a commit, so nothing is lost when
-- an unlogged table is emptied by crash recovery, and its writes cost no WAL.
CREATE UNLOGGED TABLE IF NOT EXISTS derived_deferred (
  index_block_hash text    PRIMARY KEY,
  sign             integer NOT NULL,
  -- the block's first flip in the batch: a block that nets to 0 after a +1 was applied and removed by the one-message
  -- path, which leaves the rows of its keys in the summed tables (at 0 for that block): see derived_touch
  first_sign       integer NOT NULL
);

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

CREATE OR REPLACE FUNCTION derived_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
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

-- What applying blocks (+1) and removing them again (-1) leaves in the summed tables: a row, at 0 for those blocks, for
-- every key they touched (the reference's ft_balances keeps such rows too, and lists them among a token's holders).
CREATE OR REPLACE FUNCTION derived_touch(blocks text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM stx_totals_apply_rows(blocks, 0);
  PERFORM ft_balances_apply(blocks, 0); -- ft_balances and nft_totals
  INSERT INTO principal_tx_counts (principal, stx_txs, transfer_txs, all_txs)
  SELECT DISTINCT r.principal, 0, 0, 0 FROM principal_tx_roles(array_remove(blocks, '')) r
  ON CONFLICT (principal) DO NOTHING;
END
$$;

-- The net effect of the deferred calls of this transaction; the number of blocks applied.
CREATE OR REPLACE FUNCTION derived_flush() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_minus text[];
  v_plus text[];
  v_touched text[];
  v_bad text;
BEGIN
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

-- Balance checkpoints (sql/0090) of a block that stops being canonical are deleted instead of kept non-canonical: a
-- block made canonical and orphaned again inside one batch never gets rows, so keeping them for the one-message path
-- would make the two paths' tables differ. A restored block gets its rows again, computed from its ancestry exactly as
-- before (they never depended on anything else).
CREATE OR REPLACE FUNCTION balance_checkpoints_apply(p_blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  b record;
BEGIN
  IF sign < 0 THEN
    DELETE FROM balance_checkpoints WHERE index_block_hash = ANY(p_blocks);
    RETURN;
  END IF;
  -- lowest first: a block's rows build on those of the blocks below it
  FOR b IN SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(p_blocks) ORDER BY k.block_height LOOP
    INSERT INTO balance_checkpoints (principal, asset_identifier, index_block_hash, block_height, balance, nonce, canonical)
    SELECT d.principal, d.asset_identifier, b.index_block_hash, b.block_height, COALESCE(prev.balance, 0) + d.delta,
      GREATEST(prev.nonce, d.nonce), -- NULLs ignored
      true
    FROM balance_checkpoint_deltas(ARRAY[b.index_block_hash]) d
    LEFT JOIN LATERAL (
      SELECT p.balance, p.nonce FROM balance_checkpoints p
      WHERE p.principal = d.principal AND p.asset_identifier = d.asset_identifier AND p.canonical
        AND p.block_height < b.block_height
      ORDER BY p.block_height DESC
      LIMIT 1
    ) prev ON true
    ON CONFLICT DO NOTHING;
  END LOOP;
END
$$;
DELETE FROM balance_checkpoints WHERE NOT canonical;
