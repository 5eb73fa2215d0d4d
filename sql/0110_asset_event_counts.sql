-- /extended/v1/address/{principal}/assets read every asset event the principal ever sent, received or locked on each
-- page (all of them materialized for `count(*) OVER ()` and sorted whole): 2.3 s for the busiest principal of the
-- 100,000-block chain (65,728 events) against 26 ms at 1,000 blocks. Now (src/store/principal-txs.ts,
-- principalAssetEvents), as stx_inbound (sql/0109):
--   * `total` comes from asset_event_counts, the principal's canonical anchored asset events, kept per block like the
--     other summed tables (additive, batched, zero rows written by derived_touch), corrected at read time by the
--     unconfirmed microblock stream's rows and by the anchored rows above the requested height;
--   * the page takes each arm's newest limit + offset heights from its height index (events_sender_height,
--     events_recipient_height, events_locked_height of sql/0010) and sorts only the rows at or above the lowest of them.
-- An asset event is one row of the page however many of its roles the principal has (the reference's `sender = $1 OR
-- recipient = $1`): it is counted for its sender, and for its recipient when that is another principal.
CREATE TABLE IF NOT EXISTS asset_event_counts (
  principal text   PRIMARY KEY,
  n         bigint NOT NULL DEFAULT 0
);

-- The asset events of the given blocks (whatever their canonical flag), one row per principal they count for.
CREATE OR REPLACE FUNCTION asset_event_rows(blocks text[]) RETURNS TABLE (principal text) LANGUAGE sql STABLE AS $$
  SELECT e.sender FROM events e
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset') AND e.sender IS NOT NULL
  UNION ALL
  SELECT e.recipient FROM events e
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset') AND e.recipient IS NOT NULL
    AND e.recipient IS DISTINCT FROM e.sender
  UNION ALL
  SELECT e.locked_address FROM events e
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type = 'stx_lock' AND e.locked_address IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION asset_event_counts_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO asset_event_counts AS c (principal, n)
  SELECT r.principal, sign * count(*) FROM asset_event_rows(blocks) r GROUP BY r.principal
  ON CONFLICT (principal) DO UPDATE SET n = c.n + EXCLUDED.n;
END
$$;

-- Backfill of a summed table: its applier over the canonical anchored blocks stored so far, a thousand at a time, in
-- height order (what sql/0109 wrote out for stx_inbound_counts; the next summed table calls this).
CREATE OR REPLACE FUNCTION derived_backfill(p_fn text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_chunk text[];
BEGIN
  FOR v_chunk IN
    SELECT array_agg(index_block_hash) FROM (
      SELECT index_block_hash, (row_number() OVER (ORDER BY block_height, index_block_hash) - 1) / 1000 AS g
      FROM blocks WHERE canonical AND index_block_hash <> ''
    ) b GROUP BY g
  LOOP
    EXECUTE format('SELECT %I($1, 1)', p_fn) USING v_chunk;
  END LOOP;
END
$$;

TRUNCATE asset_event_counts;
SELECT derived_backfill('asset_event_counts_apply');

INSERT INTO derived_appliers (name, fn, zero_rows) VALUES ('asset_event_counts', 'asset_event_counts_apply', true) ON CONFLICT DO NOTHING;
