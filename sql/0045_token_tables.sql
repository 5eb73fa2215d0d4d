-- Tokens and balances: three tables derived from the canonical anchored chain, kept by the derived hook
-- (sql/0016_derived_hook.sql) in the transaction that changes them, so no read sums a principal's or an asset's
-- history.
--
--   ft_balances  (principal, asset): FT received / sent over canonical anchored blocks; balance = received - sent.
--                Additive: ft_balances_apply(blocks, sign) adds (+1) or removes (-1) the blocks' ft events.
--   nft_totals   (principal, asset): NFT events received / sent (the counts /address/{p}/balances reports).
--                Additive, kept by the same function.
--   nft_custody  (asset, value): the current owner of every NFT (the latest canonical anchored event wins; a burn
--                leaves owner NULL). Not additive: nft_custody_apply(blocks, sign) recomputes only the keys the
--                given blocks' nft events touch, from the canonical rows (the hook is called after the flags flip).
--
-- Rows of unconfirmed microblocks (index_block_hash = '') are not in these tables: the reads add them when asked.
CREATE TABLE IF NOT EXISTS ft_balances (
  principal        text    NOT NULL,
  asset_identifier text    NOT NULL,
  received         numeric NOT NULL DEFAULT 0,
  sent             numeric NOT NULL DEFAULT 0,
  balance          numeric GENERATED ALWAYS AS (received - sent) STORED,
  PRIMARY KEY (principal, asset_identifier)
);
-- holders of a token, richest first
CREATE INDEX IF NOT EXISTS ft_balances_asset_balance ON ft_balances (asset_identifier, balance DESC, principal);

CREATE TABLE IF NOT EXISTS nft_totals (
  principal        text   NOT NULL,
  asset_identifier text   NOT NULL,
  received         bigint NOT NULL DEFAULT 0,
  sent             bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (principal, asset_identifier)
);

CREATE TABLE IF NOT EXISTS nft_custody (
  asset_identifier text    NOT NULL,
  value_hex        text    NOT NULL,
  owner            text,
  tx_id            text    NOT NULL,
  index_block_hash text    NOT NULL,
  block_height     bigint  NOT NULL,
  tx_index         integer NOT NULL,
  event_index      integer NOT NULL,
  PRIMARY KEY (asset_identifier, value_hex)
);
-- a principal's holdings, newest first
CREATE INDEX IF NOT EXISTS nft_custody_owner ON nft_custody (owner, block_height DESC, tx_index DESC, event_index DESC)
  WHERE owner IS NOT NULL;

-- STX holders (/tokens/ft/stx/holders) read stx_totals by balance.
CREATE INDEX IF NOT EXISTS stx_totals_balance ON stx_totals (((received - sent - fees + rewards)) DESC, principal);
-- NFT mints of an asset class, newest first.
CREATE INDEX IF NOT EXISTS events_nft_mints ON events (asset_identifier, block_height DESC)
  WHERE event_type = 'non_fungible_token_asset' AND asset_event_type = 'mint';
-- A principal's unconfirmed FT / NFT rows (added at read time).
CREATE INDEX IF NOT EXISTS events_unanchored_asset ON events (asset_identifier, value_hex)
  WHERE index_block_hash = '' AND event_type = 'non_fungible_token_asset';

CREATE OR REPLACE FUNCTION ft_balances_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ft_balances AS t (principal, asset_identifier, received, sent)
  SELECT principal, asset_identifier, sign * COALESCE(sum(received), 0), sign * COALESCE(sum(sent), 0)
  FROM (
    SELECT recipient AS principal, asset_identifier, amount AS received, 0 AS sent
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'fungible_token_asset' AND recipient IS NOT NULL
    UNION ALL
    SELECT sender, asset_identifier, 0, amount
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'fungible_token_asset' AND sender IS NOT NULL
  ) d
  GROUP BY principal, asset_identifier
  ON CONFLICT (principal, asset_identifier) DO UPDATE SET
    received = t.received + EXCLUDED.received,
    sent = t.sent + EXCLUDED.sent;

  INSERT INTO nft_totals AS t (principal, asset_identifier, received, sent)
  SELECT principal, asset_identifier, sign * sum(received), sign * sum(sent)
  FROM (
    SELECT recipient AS principal, asset_identifier, 1 AS received, 0 AS sent
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'non_fungible_token_asset' AND recipient IS NOT NULL
    UNION ALL
    SELECT sender, asset_identifier, 0, 1
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'non_fungible_token_asset' AND sender IS NOT NULL
  ) d
  GROUP BY principal, asset_identifier
  ON CONFLICT (principal, asset_identifier) DO UPDATE SET
    received = t.received + EXCLUDED.received,
    sent = t.sent + EXCLUDED.sent;
END
$$;

CREATE OR REPLACE FUNCTION nft_custody_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- the keys these blocks touch: their latest canonical anchored event, whichever block it is in
  INSERT INTO nft_custody AS c (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
  SELECT DISTINCT ON (e.asset_identifier, e.value_hex)
    e.asset_identifier, e.value_hex, e.recipient, e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index
  FROM (
    SELECT DISTINCT asset_identifier, value_hex FROM events
    WHERE index_block_hash = ANY(blocks) AND event_type = 'non_fungible_token_asset'
  ) k
  JOIN events e ON e.asset_identifier = k.asset_identifier AND e.value_hex = k.value_hex
  WHERE e.event_type = 'non_fungible_token_asset' AND e.canonical AND e.microblock_canonical AND e.index_block_hash <> ''
  ORDER BY e.asset_identifier, e.value_hex, e.block_height DESC, e.tx_index DESC, e.event_index DESC
  ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET
    owner = EXCLUDED.owner, tx_id = EXCLUDED.tx_id, index_block_hash = EXCLUDED.index_block_hash,
    block_height = EXCLUDED.block_height, tx_index = EXCLUDED.tx_index, event_index = EXCLUDED.event_index;
  -- touched keys with no canonical event left (their only events were orphaned)
  DELETE FROM nft_custody c
  USING (
    SELECT DISTINCT asset_identifier, value_hex FROM events
    WHERE index_block_hash = ANY(blocks) AND event_type = 'non_fungible_token_asset'
  ) k
  WHERE c.asset_identifier = k.asset_identifier AND c.value_hex = k.value_hex
    AND NOT EXISTS (
      SELECT 1 FROM events e
      WHERE e.asset_identifier = k.asset_identifier AND e.value_hex = k.value_hex
        AND e.event_type = 'non_fungible_token_asset' AND e.canonical AND e.microblock_canonical AND e.index_block_hash <> '');
END
$$;

INSERT INTO derived_appliers (name, fn) VALUES ('ft_balances', 'ft_balances_apply') ON CONFLICT DO NOTHING;
INSERT INTO derived_appliers (name, fn) VALUES ('nft_custody', 'nft_custody_apply') ON CONFLICT DO NOTHING;

-- A database ingested before this migration: the tables from what is stored.
INSERT INTO ft_balances (principal, asset_identifier, received, sent)
SELECT principal, asset_identifier, COALESCE(sum(received), 0), COALESCE(sum(sent), 0)
FROM (
  SELECT recipient AS principal, asset_identifier, amount AS received, 0 AS sent FROM events
  WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'fungible_token_asset' AND recipient IS NOT NULL
  UNION ALL
  SELECT sender, asset_identifier, 0, amount FROM events
  WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'fungible_token_asset' AND sender IS NOT NULL
) d
GROUP BY principal, asset_identifier
ON CONFLICT DO NOTHING;

INSERT INTO nft_totals (principal, asset_identifier, received, sent)
SELECT principal, asset_identifier, sum(received), sum(sent)
FROM (
  SELECT recipient AS principal, asset_identifier, 1 AS received, 0 AS sent FROM events
  WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset' AND recipient IS NOT NULL
  UNION ALL
  SELECT sender, asset_identifier, 0, 1 FROM events
  WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'non_fungible_token_asset' AND sender IS NOT NULL
) d
GROUP BY principal, asset_identifier
ON CONFLICT DO NOTHING;

INSERT INTO nft_custody (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
SELECT DISTINCT ON (asset_identifier, value_hex)
  asset_identifier, value_hex, recipient, tx_id, index_block_hash, block_height, tx_index, event_index
FROM events
WHERE event_type = 'non_fungible_token_asset' AND canonical AND microblock_canonical AND index_block_hash <> ''
ORDER BY asset_identifier, value_hex, block_height DESC, tx_index DESC, event_index DESC
ON CONFLICT DO NOTHING;
