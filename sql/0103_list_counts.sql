-- The `total` of /extended/v1/tx?from_address=…(&type=…) and of /extended/v1/tx?type=…, maintained per block instead
-- of counted on each request: the number of canonical anchored txs per (sender, tx type), and per tx type over every
-- sender (the rows with sender_address ''). Counting a busy sender's rows on every page was the one read of the
-- recent-tx list that grew with the chain (439 ms at 100,000 blocks for a sender of 62,000 txs); a type alone counted
-- a fraction of the whole table.
-- Txs of unconfirmed microblocks are counted at read time (unanchored), as for the unfiltered total.
--
-- And the `total` of /extended/v1/tokens/nft/mints: the canonical anchored mints per asset class (a collection of
-- 100,000 names counted its mints, joined to their txs, on every page).
--
-- Both additive (the appliers add or remove the blocks' own rows), so they are batched by the projector like the other
-- summed tables; derived_touch writes their zero rows (derived_appliers.zero_rows, below).
CREATE TABLE IF NOT EXISTS sender_tx_counts (
  sender_address text   NOT NULL,
  tx_type        text   NOT NULL,
  n              bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (sender_address, tx_type)
);

CREATE OR REPLACE FUNCTION sender_tx_counts_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO sender_tx_counts AS t (sender_address, tx_type, n)
  SELECT COALESCE(sender_address, ''), tx_type, sign * count(*)
  FROM txs
  WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
  GROUP BY GROUPING SETS ((sender_address, tx_type), (tx_type))
  ON CONFLICT (sender_address, tx_type) DO UPDATE SET n = t.n + EXCLUDED.n;
END
$$;

CREATE TABLE IF NOT EXISTS nft_mint_counts (
  asset_identifier text   PRIMARY KEY,
  n                bigint NOT NULL DEFAULT 0
);

CREATE OR REPLACE FUNCTION nft_mint_counts_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO nft_mint_counts AS t (asset_identifier, n)
  SELECT asset_identifier, sign * count(*)
  FROM events
  WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
    AND event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
  GROUP BY asset_identifier
  ON CONFLICT (asset_identifier) DO UPDATE SET n = t.n + EXCLUDED.n;
END
$$;

-- derived_touch wrote each summed table's zero rows by name (sql/0100), so every new summed table had to copy its
-- body. Appliers whose zero rows it must write now say so in the registry (called with sign 0, which writes a 0 row
-- for every key the blocks touch); the two summed tables outside the registry's calling convention stay named.
ALTER TABLE derived_appliers ADD COLUMN IF NOT EXISTS zero_rows boolean NOT NULL DEFAULT false;

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

-- backfill (an existing database): the canonical anchored txs stored so far
INSERT INTO sender_tx_counts (sender_address, tx_type, n)
SELECT COALESCE(sender_address, ''), tx_type, count(*)
FROM txs
WHERE canonical AND microblock_canonical AND index_block_hash <> ''
GROUP BY GROUPING SETS ((sender_address, tx_type), (tx_type))
ON CONFLICT (sender_address, tx_type) DO NOTHING;

INSERT INTO nft_mint_counts (asset_identifier, n)
SELECT asset_identifier, count(*)
FROM events
WHERE canonical AND microblock_canonical AND index_block_hash <> ''
  AND event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint'
GROUP BY asset_identifier
ON CONFLICT (asset_identifier) DO NOTHING;

INSERT INTO derived_appliers (name, fn) VALUES ('sender_tx_counts', 'sender_tx_counts_apply') ON CONFLICT DO NOTHING;
INSERT INTO derived_appliers (name, fn) VALUES ('nft_mint_counts', 'nft_mint_counts_apply') ON CONFLICT DO NOTHING;
-- ft_balances_apply writes ft_balances and nft_totals
UPDATE derived_appliers SET zero_rows = true WHERE name IN ('ft_balances', 'sender_tx_counts', 'nft_mint_counts');
