-- One hook for every table derived from canonical blocks (FT balances, NFT custody, per-principal
-- indexes, names, PoX cycles, …), so a family adds its table without touching either ingest path.
--
-- Both ingest paths (the general transaction in src/store/ingest.ts and the one-statement ingest_block_fast, sql/0013)
-- call stx_totals_apply(blocks, sign) with each block that becomes canonical (+1: a new block, or a branch restored by
-- a reorg) and each that stops being canonical (-1), in the block's transaction. That call now runs the STX totals
-- (renamed stx_totals_apply_rows) and then every function registered in derived_appliers, in name order:
--
--   CREATE FUNCTION my_family_apply(blocks text[], sign integer) RETURNS void ...;
--   INSERT INTO derived_appliers (name, fn) VALUES ('my_family', 'my_family_apply') ON CONFLICT DO NOTHING;
--
-- and backfills its table from what is stored, in the same migration.
CREATE TABLE IF NOT EXISTS derived_appliers (
  name text PRIMARY KEY,
  fn   text NOT NULL
);

ALTER FUNCTION stx_totals_apply(text[], integer) RENAME TO stx_totals_apply_rows;

CREATE OR REPLACE FUNCTION derived_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  a record;
BEGIN
  PERFORM stx_totals_apply_rows(blocks, sign);
  FOR a IN SELECT fn FROM derived_appliers ORDER BY name LOOP
    EXECUTE format('SELECT %I($1, $2)', a.fn) USING blocks, sign;
  END LOOP;
END
$$;

-- The name both ingest paths call.
CREATE OR REPLACE FUNCTION stx_totals_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM derived_apply(blocks, sign);
END
$$;
