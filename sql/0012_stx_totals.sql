-- Growth: each principal's STX totals over the canonical anchored chain, kept up to date by the ingest
-- (src/store/ingest.ts) in the transaction that changes them, so /extended/v1/address/{p}/stx and the
-- address-stx-balance push no longer sum a principal's whole history on every request.
--
--   received / sent: stx_asset events (transfers, mints, burns) to / from the principal
--   fees:            fees of txs it paid (the sponsor's for a sponsored tx)
--   rewards:         miner rewards (coinbase + fees) paid to it
--
-- Only rows of canonical anchored blocks count (index_block_hash <> ''); unconfirmed microblock rows are added at read
-- time. stx_totals_apply(blocks, sign) adds (+1) or removes (-1) every counted row of the given blocks: called with
-- each block that becomes canonical (a new block, or a branch restored by a reorg) and each that stops being canonical.
CREATE TABLE IF NOT EXISTS stx_totals (
  principal text    PRIMARY KEY,
  received  numeric NOT NULL DEFAULT 0,
  sent      numeric NOT NULL DEFAULT 0,
  fees      numeric NOT NULL DEFAULT 0,
  rewards   numeric NOT NULL DEFAULT 0
);

CREATE OR REPLACE FUNCTION stx_totals_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- plpgsql: the statement's plan is cached for the session (a LANGUAGE sql function would plan it on every call)
  INSERT INTO stx_totals AS t (principal, received, sent, fees, rewards)
  SELECT principal, sign * COALESCE(sum(received), 0), sign * COALESCE(sum(sent), 0), sign * COALESCE(sum(fees), 0),
    sign * COALESCE(sum(rewards), 0)
  FROM (
    SELECT recipient AS principal, amount AS received, 0 AS sent, 0 AS fees, 0 AS rewards
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'stx_asset' AND recipient IS NOT NULL
    UNION ALL
    SELECT sender, 0, amount, 0, 0
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'stx_asset' AND sender IS NOT NULL
    UNION ALL
    SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 0, 0, fee_rate, 0
    FROM txs
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
    UNION ALL
    SELECT recipient, 0, 0, 0, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
    FROM miner_rewards
    WHERE index_block_hash = ANY(blocks)
  ) d
  WHERE principal IS NOT NULL
  GROUP BY principal
  ON CONFLICT (principal) DO UPDATE SET
    received = t.received + EXCLUDED.received,
    sent = t.sent + EXCLUDED.sent,
    fees = t.fees + EXCLUDED.fees,
    rewards = t.rewards + EXCLUDED.rewards;
END
$$;

-- A database ingested before this migration: its totals from what is stored.
INSERT INTO stx_totals (principal, received, sent, fees, rewards)
SELECT principal, COALESCE(sum(received), 0), COALESCE(sum(sent), 0), COALESCE(sum(fees), 0), COALESCE(sum(rewards), 0)
FROM (
  SELECT recipient AS principal, amount AS received, 0 AS sent, 0 AS fees, 0 AS rewards
  FROM events WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'stx_asset' AND recipient IS NOT NULL
  UNION ALL
  SELECT sender, 0, amount, 0, 0
  FROM events WHERE canonical AND microblock_canonical AND index_block_hash <> '' AND event_type = 'stx_asset' AND sender IS NOT NULL
  UNION ALL
  SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 0, 0, fee_rate, 0
  FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''
  UNION ALL
  SELECT recipient, 0, 0, 0, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
  FROM miner_rewards WHERE canonical
) d
WHERE principal IS NOT NULL
GROUP BY principal
ON CONFLICT (principal) DO NOTHING;

-- The unconfirmed microblock rows a balance adds at read time: found without walking the principal's history.
CREATE INDEX IF NOT EXISTS events_unanchored_recipient ON events (recipient) WHERE index_block_hash = '';
CREATE INDEX IF NOT EXISTS events_unanchored_sender ON events (sender) WHERE index_block_hash = '';
CREATE INDEX IF NOT EXISTS txs_unanchored_sender ON txs (sender_address) WHERE index_block_hash = '';
CREATE INDEX IF NOT EXISTS txs_unanchored_sponsor ON txs (sponsor_address) WHERE index_block_hash = '';
