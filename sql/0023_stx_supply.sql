-- The unlocked STX supply, maintained per canonical block instead of summed over every event on each request.
--
-- The reference's figure at height h: STX minted minus STX burned by canonical stx_asset events up to h, plus the
-- coinbase of the miner rewards that matured up to h. stx_supply holds, per canonical block, that block's delta and
-- the running total up to and including it, so a supply at a height is one index lookup (the row at the highest
-- height <= h). Unconfirmed microblock mints and burns are added at read time (unanchored).
--
-- stx_supply_apply(blocks, sign): -1 deletes the rows of blocks that stopped being canonical (a reorg orphans the
-- chain's suffix from the fork point); +1 appends the blocks that became canonical, lowest first, each total built on
-- the row below it.
CREATE TABLE IF NOT EXISTS stx_supply (
  block_height     bigint  PRIMARY KEY,
  index_block_hash text    NOT NULL,
  delta            numeric NOT NULL,
  unlocked         numeric NOT NULL
);
CREATE INDEX IF NOT EXISTS stx_supply_block ON stx_supply (index_block_hash);

-- A block's contribution (the rows of confirmed microblocks carry the confirming block's hash).
CREATE OR REPLACE FUNCTION stx_supply_delta(block text) RETURNS numeric LANGUAGE sql STABLE AS $$
  SELECT
    COALESCE((SELECT sum(CASE asset_event_type WHEN 'mint' THEN amount ELSE -amount END) FROM events
              WHERE index_block_hash = block AND microblock_canonical AND event_type = 'stx_asset'
                AND asset_event_type IN ('mint', 'burn')), 0)
    + COALESCE((SELECT sum(coinbase_amount) FROM miner_rewards WHERE index_block_hash = block), 0)
$$;

CREATE OR REPLACE FUNCTION stx_supply_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  b record;
  d numeric;
BEGIN
  IF sign < 0 THEN
    DELETE FROM stx_supply s WHERE s.index_block_hash = ANY(blocks);
    RETURN;
  END IF;
  FOR b IN SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(blocks) ORDER BY k.block_height LOOP
    d := stx_supply_delta(b.index_block_hash);
    INSERT INTO stx_supply (block_height, index_block_hash, delta, unlocked)
    VALUES (b.block_height, b.index_block_hash, d,
      d + COALESCE((SELECT s.unlocked FROM stx_supply s WHERE s.block_height < b.block_height
                    ORDER BY s.block_height DESC LIMIT 1), 0))
    ON CONFLICT (block_height) DO UPDATE SET index_block_hash = EXCLUDED.index_block_hash, delta = EXCLUDED.delta,
      unlocked = EXCLUDED.unlocked;
  END LOOP;
END
$$;

-- A database ingested before this migration: every canonical block, in height order.
INSERT INTO stx_supply (block_height, index_block_hash, delta, unlocked)
SELECT block_height, index_block_hash, delta, sum(delta) OVER (ORDER BY block_height)
FROM (SELECT block_height, index_block_hash, stx_supply_delta(index_block_hash) AS delta FROM blocks WHERE canonical) c
ON CONFLICT (block_height) DO NOTHING;

INSERT INTO derived_appliers (name, fn) VALUES ('stx_supply', 'stx_supply_apply') ON CONFLICT DO NOTHING;
