-- Balance checkpoints (sql/0090, sql/0100) of the blocks that become canonical, in one statement for all of them
-- instead of one INSERT per block.
--
-- The blocks given with +1 all end canonical, so they are one chain, at most one per height, and every canonical
-- checkpoint already stored lies below the lowest of them (a canonical row above it would belong to a block that
-- descends from both the old and the new block at that height). A block's row for a principal and asset is then that
-- key's newest stored canonical row (the base) plus the deltas of the given blocks up to and including it: running
-- sums and maxima over the given blocks in height order, as the per-block loop built them one on the other.
CREATE OR REPLACE FUNCTION balance_checkpoints_apply(p_blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    DELETE FROM balance_checkpoints WHERE index_block_hash = ANY(p_blocks);
    RETURN;
  END IF;
  WITH bl AS (
    SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(p_blocks)
  ), d AS (
    SELECT x.index_block_hash, bl.block_height, x.principal, x.asset_identifier, x.delta, x.nonce
    FROM balance_checkpoint_deltas(p_blocks) x JOIN bl USING (index_block_hash)
  ), base AS MATERIALIZED ( -- one lookup per key, not per row
    SELECT k.principal, k.asset_identifier, prev.balance, prev.nonce
    FROM (SELECT DISTINCT principal, asset_identifier FROM d) k
    LEFT JOIN LATERAL (
      SELECT p.balance, p.nonce FROM balance_checkpoints p
      WHERE p.principal = k.principal AND p.asset_identifier = k.asset_identifier AND p.canonical
        AND p.block_height < (SELECT min(block_height) FROM bl)
      ORDER BY p.block_height DESC
      LIMIT 1
    ) prev ON true
  )
  INSERT INTO balance_checkpoints (principal, asset_identifier, index_block_hash, block_height, balance, nonce, canonical)
  SELECT d.principal, d.asset_identifier, d.index_block_hash, d.block_height,
    COALESCE(base.balance, 0) + sum(d.delta) OVER w,
    GREATEST(base.nonce, max(d.nonce) OVER w), -- NULLs ignored
    true
  FROM d JOIN base USING (principal, asset_identifier)
  WINDOW w AS (PARTITION BY d.principal, d.asset_identifier ORDER BY d.block_height ROWS UNBOUNDED PRECEDING)
  ON CONFLICT DO NOTHING;
END
$$;
