-- Rosetta: balances as of any block without summing an account's history. One row per (principal, asset,
-- block) where the block moved the principal's balance of that asset — the STX balance ('stx') or a fungible token
-- (its asset identifier): the balance after that block, and for 'stx' the highest nonce executed as of it. A balance
-- at height h is then the principal's newest canonical row at or below h: one index lookup, however busy the account.
--
-- What counts is what the reference's historical reads sum (getStxBalanceAtBlock, getFungibleTokenBalances,
-- getAddressNonceAtBlock), over the canonical anchored chain (a block's confirmed microblock rows included):
--   stx:  stx_asset events in (recipient) and out (sender), the fee of every tx to its payer (the sponsor's when
--         sponsored), the miner rewards the block pays; nonce: the tx's nonce to its sender (unsponsored) or to its
--         sponsor (sponsored), as the reference's nonce-at-block query attributes it;
--   FT:   fungible_token_asset events in (recipient) and out (sender); a block with events that net to 0 still has
--         its row (the reference lists every token the account ever moved, balance 0 included).
--
-- A row only depends on its block's ancestry, which never changes, so rows are never recomputed: a block that stops
-- being canonical has its rows marked non-canonical (sign -1), and one that becomes canonical again gets them back
-- (sign +1); a block made canonical for the first time gets rows from its deltas on top of each principal's newest
-- canonical row below it. Both ingest paths run this through the derived-table hook (sql/0016_derived_hook.sql),
-- after the canonical flags of the blocks are set, the orphaned blocks before the restored ones.
CREATE TABLE IF NOT EXISTS balance_checkpoints (
  principal        text    NOT NULL,
  asset_identifier text    NOT NULL,
  index_block_hash text    NOT NULL,
  block_height     bigint  NOT NULL,
  balance          numeric NOT NULL,
  nonce            bigint,
  canonical        boolean NOT NULL,
  PRIMARY KEY (index_block_hash, principal, asset_identifier)
);
-- the newest canonical row at or below a height
CREATE INDEX IF NOT EXISTS balance_checkpoints_at ON balance_checkpoints (principal, asset_identifier, block_height DESC)
  WHERE canonical;

-- What blocks moved, per principal and asset (the blocks' own rows, whatever their canonical flag).
CREATE OR REPLACE FUNCTION balance_checkpoint_deltas(blocks text[])
RETURNS TABLE (index_block_hash text, principal text, asset_identifier text, delta numeric, nonce bigint)
LANGUAGE sql STABLE AS $$
  SELECT d.index_block_hash, d.principal, d.asset_identifier, sum(d.delta), max(d.nonce)
  FROM (
    SELECT e.index_block_hash, e.recipient AS principal, 'stx' AS asset_identifier, e.amount AS delta, NULL::bigint AS nonce
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.sender, 'stx', -e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'stx_asset' AND e.sender IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.recipient, e.asset_identifier, e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'fungible_token_asset' AND e.recipient IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.sender, e.asset_identifier, -e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'fungible_token_asset' AND e.sender IS NOT NULL
    UNION ALL
    SELECT t.index_block_hash, CASE WHEN t.sponsored THEN t.sponsor_address ELSE t.sender_address END, 'stx', -t.fee_rate,
      t.nonce
    FROM txs t
    WHERE t.index_block_hash = ANY(blocks) AND t.index_block_hash <> '' AND t.microblock_canonical
    UNION ALL
    SELECT r.index_block_hash, r.recipient, 'stx',
      r.coinbase_amount + r.tx_fees_anchored + r.tx_fees_streamed_confirmed + r.tx_fees_streamed_produced, NULL
    FROM miner_rewards r
    WHERE r.index_block_hash = ANY(blocks)
  ) d
  WHERE d.principal IS NOT NULL
  GROUP BY d.index_block_hash, d.principal, d.asset_identifier
$$;

CREATE OR REPLACE FUNCTION balance_checkpoints_apply(p_blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  b record;
BEGIN
  IF sign < 0 THEN
    UPDATE balance_checkpoints SET canonical = false WHERE index_block_hash = ANY(p_blocks) AND canonical;
    RETURN;
  END IF;
  -- lowest first: a block's rows build on those of the blocks below it
  FOR b IN SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(p_blocks) ORDER BY k.block_height LOOP
    UPDATE balance_checkpoints SET canonical = true WHERE index_block_hash = b.index_block_hash;
    -- a block's rows are written in one statement: some rows means all of them (a restored branch)
    CONTINUE WHEN FOUND;
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

INSERT INTO derived_appliers (name, fn) VALUES ('balance_checkpoints', 'balance_checkpoints_apply') ON CONFLICT DO NOTHING;

-- A database ingested before this migration: the rows of every canonical block, from what is stored (running sums
-- and maxima over each principal's canonical blocks in height order).
INSERT INTO balance_checkpoints (principal, asset_identifier, index_block_hash, block_height, balance, nonce, canonical)
SELECT d.principal, d.asset_identifier, d.index_block_hash, b.block_height,
  sum(d.delta) OVER w, max(d.nonce) OVER w, true
FROM balance_checkpoint_deltas(ARRAY(SELECT index_block_hash FROM blocks WHERE canonical)) d
JOIN blocks b ON b.index_block_hash = d.index_block_hash
WINDOW w AS (PARTITION BY d.principal, d.asset_identifier ORDER BY b.block_height ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
ON CONFLICT DO NOTHING;
