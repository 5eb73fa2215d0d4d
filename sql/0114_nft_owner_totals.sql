-- The `total` of a principal's NFT holdings with no asset filter (/extended/v1/tokens/nft/holdings, the v3 NFT balances)
-- summed nft_owner_counts over every asset class the principal holds: 3,024 rows per page for the busiest principal
-- of the 100,000-block chain. nft_owner_totals keeps the sum per owner, written by the same custody trigger (sql/0107)
-- in the same statements, so it follows whatever writes custody; a row that falls to zero is deleted.
CREATE TABLE IF NOT EXISTS nft_owner_totals (
  owner text   PRIMARY KEY,
  n     bigint NOT NULL
);

CREATE OR REPLACE FUNCTION nft_owner_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.owner IS NOT NULL
     AND (TG_OP = 'DELETE' OR OLD.owner IS DISTINCT FROM NEW.owner OR OLD.asset_identifier <> NEW.asset_identifier) THEN
    UPDATE nft_owner_counts SET n = n - 1 WHERE owner = OLD.owner AND asset_identifier = OLD.asset_identifier;
    DELETE FROM nft_owner_counts WHERE owner = OLD.owner AND asset_identifier = OLD.asset_identifier AND n <= 0;
    UPDATE nft_owner_totals SET n = n - 1 WHERE owner = OLD.owner;
    DELETE FROM nft_owner_totals WHERE owner = OLD.owner AND n <= 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.owner IS NOT NULL
     AND (TG_OP = 'INSERT' OR OLD.owner IS DISTINCT FROM NEW.owner OR OLD.asset_identifier <> NEW.asset_identifier) THEN
    INSERT INTO nft_owner_counts AS c (owner, asset_identifier, n) VALUES (NEW.owner, NEW.asset_identifier, 1)
    ON CONFLICT (owner, asset_identifier) DO UPDATE SET n = c.n + 1;
    INSERT INTO nft_owner_totals AS c (owner, n) VALUES (NEW.owner, 1)
    ON CONFLICT (owner) DO UPDATE SET n = c.n + 1;
  END IF;
  RETURN NULL;
END
$$;

-- backfill from the per-class counts, in the migration's transaction (the trigger writes both from now on)
TRUNCATE nft_owner_totals;
INSERT INTO nft_owner_totals (owner, n) SELECT owner, sum(n) FROM nft_owner_counts GROUP BY owner HAVING sum(n) > 0;
