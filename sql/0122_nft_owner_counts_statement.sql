-- The NFT owner counts and totals (sql/0107, sql/0114) kept by statement-level triggers on nft_custody instead of a
-- row trigger: one pass over the statement's transition tables per statement, however many NFTs it moves (a projector
-- batch writes its custody in one statement, sql/0121).
--
-- Per (owner, asset) the net change is the statement's new rows less its old rows: a row whose owner and asset did not
-- change counts +1 and -1, which is what the row trigger skipped. A count that ends at 0 or below is deleted, as the
-- row trigger deleted it; one that went to 0 and back within the statement ends where the row trigger left it.
CREATE OR REPLACE FUNCTION nft_owner_counts_apply_delta(p_owner text[], p_asset text[], p_d bigint[])
RETURNS void LANGUAGE sql AS $$
  WITH d AS (
    SELECT o AS owner, a AS asset_identifier, sum(x) AS delta FROM unnest(p_owner, p_asset, p_d) AS u(o, a, x)
    GROUP BY o, a HAVING sum(x) <> 0
  ), f AS (
    SELECT d.owner, d.asset_identifier, COALESCE(c.n, 0) + d.delta AS n
    FROM d LEFT JOIN nft_owner_counts c ON c.owner = d.owner AND c.asset_identifier = d.asset_identifier
  ), del AS (
    DELETE FROM nft_owner_counts c USING f
    WHERE c.owner = f.owner AND c.asset_identifier = f.asset_identifier AND f.n <= 0
  )
  INSERT INTO nft_owner_counts AS c (owner, asset_identifier, n)
  SELECT owner, asset_identifier, n FROM f WHERE n > 0
  ON CONFLICT (owner, asset_identifier) DO UPDATE SET n = EXCLUDED.n;

  WITH d AS (
    SELECT o AS owner, sum(x) AS delta FROM unnest(p_owner, p_d) AS u(o, x) GROUP BY o HAVING sum(x) <> 0
  ), f AS (
    SELECT d.owner, COALESCE(c.n, 0) + d.delta AS n FROM d LEFT JOIN nft_owner_totals c ON c.owner = d.owner
  ), del AS (
    DELETE FROM nft_owner_totals c USING f WHERE c.owner = f.owner AND f.n <= 0
  )
  INSERT INTO nft_owner_totals AS c (owner, n)
  SELECT owner, n FROM f WHERE n > 0
  ON CONFLICT (owner) DO UPDATE SET n = EXCLUDED.n;
$$;

CREATE OR REPLACE FUNCTION nft_owner_counts_track_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_owner text[];
  v_asset text[];
  v_d bigint[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(owner), array_agg(asset_identifier), array_agg(1::bigint) INTO v_owner, v_asset, v_d
    FROM new_rows WHERE owner IS NOT NULL;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(owner), array_agg(asset_identifier), array_agg(d) INTO v_owner, v_asset, v_d FROM (
      SELECT owner, asset_identifier, 1::bigint AS d FROM new_rows WHERE owner IS NOT NULL
      UNION ALL
      SELECT owner, asset_identifier, -1::bigint FROM old_rows WHERE owner IS NOT NULL
    ) x;
  ELSE
    SELECT array_agg(owner), array_agg(asset_identifier), array_agg(-1::bigint) INTO v_owner, v_asset, v_d
    FROM old_rows WHERE owner IS NOT NULL;
  END IF;
  IF v_owner IS NOT NULL THEN PERFORM nft_owner_counts_apply_delta(v_owner, v_asset, v_d); END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS nft_owner_counts_track ON nft_custody;
DROP TRIGGER IF EXISTS nft_owner_counts_insert ON nft_custody;
DROP TRIGGER IF EXISTS nft_owner_counts_update ON nft_custody;
DROP TRIGGER IF EXISTS nft_owner_counts_delete ON nft_custody;
CREATE TRIGGER nft_owner_counts_insert AFTER INSERT ON nft_custody
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nft_owner_counts_track_rows();
CREATE TRIGGER nft_owner_counts_update AFTER UPDATE ON nft_custody
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nft_owner_counts_track_rows();
CREATE TRIGGER nft_owner_counts_delete AFTER DELETE ON nft_custody
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nft_owner_counts_track_rows();
