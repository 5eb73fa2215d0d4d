-- Two reads that still grew with the chain in the 1,000 vs 100,000-block growth run (README, Growth), each now an index
-- lookup over a maintained table:
--
-- 1. The `total` of /extended/v1/tokens/nft/holdings (and of the v3 NFT balances) counted the principal's nft_custody
--    rows on every page (4 → 14 ms for a principal holding 120,000 names). nft_owner_counts keeps, per (owner, asset
--    class), how many custody rows name that owner. It is written by a row trigger on nft_custody, so it follows
--    whatever writes custody (the order-dependent applier of sql/0106, the backfills) without a rule of its own; a
--    row whose count falls to zero is deleted, so two ingests that reach the same custody table by different paths
--    (one message at a time, or projector batches) also have the same counts.
--
-- 2. /extended/v2/burn-blocks?offset=N walked N distinct heights of the canonical blocks' burn heights (4 → 31 ms at
--    the middle of a 100,000-block chain). burn_block_ordinals holds every burn height that carries at least one
--    canonical Stacks block with its rank from the bottom (0, 1, 2, … in height order), so a page seeks the rank
--    `top - offset` in an index. Not additive: its applier recomputes, from the blocks' current flags, the heights
--    from the lowest burn height of the flipped blocks upward (the only heights whose presence can change, and every
--    height whose rank can); for a new block at the tip that is one or two rows. The result is a function of the
--    blocks table alone, so batching (sql/0100) and the order of the calls do not change it.
CREATE TABLE IF NOT EXISTS nft_owner_counts (
  owner            text   NOT NULL,
  asset_identifier text   NOT NULL,
  n                bigint NOT NULL,
  PRIMARY KEY (owner, asset_identifier)
);

CREATE OR REPLACE FUNCTION nft_owner_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.owner IS NOT NULL
     AND (TG_OP = 'DELETE' OR OLD.owner IS DISTINCT FROM NEW.owner OR OLD.asset_identifier <> NEW.asset_identifier) THEN
    UPDATE nft_owner_counts SET n = n - 1 WHERE owner = OLD.owner AND asset_identifier = OLD.asset_identifier;
    DELETE FROM nft_owner_counts WHERE owner = OLD.owner AND asset_identifier = OLD.asset_identifier AND n <= 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.owner IS NOT NULL
     AND (TG_OP = 'INSERT' OR OLD.owner IS DISTINCT FROM NEW.owner OR OLD.asset_identifier <> NEW.asset_identifier) THEN
    INSERT INTO nft_owner_counts AS c (owner, asset_identifier, n) VALUES (NEW.owner, NEW.asset_identifier, 1)
    ON CONFLICT (owner, asset_identifier) DO UPDATE SET n = c.n + 1;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS nft_owner_counts_track ON nft_custody;
-- backfill (an existing database) before the trigger counts anything, in the migration's transaction
TRUNCATE nft_owner_counts;
INSERT INTO nft_owner_counts (owner, asset_identifier, n)
SELECT owner, asset_identifier, count(*) FROM nft_custody WHERE owner IS NOT NULL GROUP BY owner, asset_identifier;
CREATE TRIGGER nft_owner_counts_track AFTER INSERT OR UPDATE OR DELETE ON nft_custody
  FOR EACH ROW EXECUTE FUNCTION nft_owner_counts_track();

CREATE TABLE IF NOT EXISTS burn_block_ordinals (
  burn_block_height bigint PRIMARY KEY,
  ordinal           bigint NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS burn_block_ordinals_ordinal ON burn_block_ordinals (ordinal);
-- the applier's "distinct canonical burn heights from h up" (blocks_burn_height covers every block)
CREATE INDEX IF NOT EXISTS blocks_canonical_burn_height ON blocks (burn_block_height) WHERE canonical;

CREATE OR REPLACE FUNCTION burn_block_ordinals_renumber(p_low bigint) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_base bigint;
BEGIN
  DELETE FROM burn_block_ordinals WHERE burn_block_height >= p_low;
  SELECT COALESCE(max(ordinal) + 1, 0) INTO v_base FROM burn_block_ordinals;
  INSERT INTO burn_block_ordinals (burn_block_height, ordinal)
  SELECT h, v_base + row_number() OVER (ORDER BY h) - 1
  FROM (SELECT DISTINCT burn_block_height AS h FROM blocks WHERE canonical AND burn_block_height >= p_low) d;
END
$$;

CREATE OR REPLACE FUNCTION burn_block_ordinals_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_low bigint;
BEGIN
  SELECT min(b.burn_block_height) INTO v_low FROM blocks b WHERE b.index_block_hash = ANY(blocks);
  IF v_low IS NOT NULL THEN
    PERFORM burn_block_ordinals_renumber(v_low);
  END IF;
END
$$;

-- backfill: every canonical burn height stored so far
SELECT burn_block_ordinals_renumber(COALESCE((SELECT min(burn_block_height) FROM blocks), 0));

INSERT INTO derived_appliers (name, fn) VALUES ('burn_block_ordinals', 'burn_block_ordinals_apply') ON CONFLICT DO NOTHING;
