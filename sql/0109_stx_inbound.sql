-- /extended/v1/address/{principal}/stx_inbound read every inbound transfer the principal ever had on each page (its
-- three arms materialized whole for `count(*) OVER ()` and the sort, a jsonb memo read from every STX event): linear
-- in the principal's history. Now (src/store/principal-txs.ts, inboundTransfers):
--   * `total` comes from stx_inbound_counts, the canonical anchored rows of each arm per recipient, kept per block
--     like the other summed tables (additive, batched, zero rows written by derived_touch), corrected at read time by
--     the few rows of the unconfirmed microblock stream and of the anchored blocks above the requested height;
--   * the page takes each arm's newest limit + offset rows from an index in height order, and sorts only the rows at
--     or above the lowest height among them; the bulk-send arm (rare) is skipped when the principal has none.
-- Arms (as the reference's query): 1 bulk-send: an STX event followed in its tx by a send-many-memo print; 2
-- stx-transfer-memo: an STX event whose asset has a memo; 3 stx-transfer: a token-transfer tx.
CREATE OR REPLACE FUNCTION send_many_contracts() RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.send-many-memo', 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B.send-many-memo']
$$;

-- the unconfirmed stream's token transfers to a principal (its events have events_unanchored_recipient)
CREATE INDEX IF NOT EXISTS txs_unanchored_recipient ON txs (token_transfer_recipient) WHERE index_block_hash = '';
-- arm 2 in height order (arm 3 has txs_list_recipient; arm 1 walks events_recipient_height)
CREATE INDEX IF NOT EXISTS events_stx_memo_recipient ON events (recipient, block_height DESC)
  WHERE event_type = 'stx_asset' AND recipient IS NOT NULL AND canonical AND microblock_canonical
    AND (api -> 'asset' ->> 'memo') IS NOT NULL;

CREATE TABLE IF NOT EXISTS stx_inbound_counts (
  recipient text     NOT NULL,
  arm       smallint NOT NULL,
  n         bigint   NOT NULL DEFAULT 0,
  PRIMARY KEY (recipient, arm)
);

-- The arms' rows of the given blocks (whatever their canonical flag: an orphaned block's rows are counted out after
-- its flag is cleared), as (recipient, arm).
CREATE OR REPLACE FUNCTION stx_inbound_rows(blocks text[]) RETURNS TABLE (recipient text, arm smallint) LANGUAGE sql STABLE AS $$
  SELECT e.recipient, 1::smallint FROM events e
  JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash AND l.microblock_hash = e.microblock_hash
    AND l.event_index = e.event_index + 1 AND l.event_type = 'smart_contract_log' AND l.contract_id = ANY(send_many_contracts())
    AND l.microblock_canonical
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL
  UNION ALL
  SELECT e.recipient, 2::smallint FROM events e
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL AND (e.api -> 'asset' ->> 'memo') IS NOT NULL
  UNION ALL
  SELECT t.token_transfer_recipient, 3::smallint FROM txs t
  WHERE t.index_block_hash = ANY(blocks) AND t.index_block_hash <> '' AND t.microblock_canonical
    AND t.tx_type = 'token_transfer' AND t.token_transfer_recipient IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION stx_inbound_counts_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO stx_inbound_counts AS c (recipient, arm, n)
  SELECT r.recipient, r.arm, sign * count(*) FROM stx_inbound_rows(blocks) r GROUP BY r.recipient, r.arm
  ON CONFLICT (recipient, arm) DO UPDATE SET n = c.n + EXCLUDED.n;
END
$$;

-- backfill: the canonical anchored rows stored so far, through the applier, a thousand blocks at a time
TRUNCATE stx_inbound_counts;
DO $$
DECLARE
  v_chunk text[];
BEGIN
  FOR v_chunk IN
    SELECT array_agg(index_block_hash) FROM (
      SELECT index_block_hash, (row_number() OVER (ORDER BY block_height, index_block_hash) - 1) / 1000 AS g
      FROM blocks WHERE canonical AND index_block_hash <> ''
    ) b GROUP BY g
  LOOP
    PERFORM stx_inbound_counts_apply(v_chunk, 1);
  END LOOP;
END
$$;

INSERT INTO derived_appliers (name, fn, zero_rows) VALUES ('stx_inbound_counts', 'stx_inbound_counts_apply', true) ON CONFLICT DO NOTHING;
