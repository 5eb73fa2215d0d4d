-- The unfiltered total of /extended/v1/tx, maintained per block instead of counted on each request: the sum of the
-- canonical blocks' tx_count, as the reference keeps it (its chain_tip.tx_count adds each canonical block's tx count
-- and follows reorgs). Note that this is not always the number of listed rows: a boot block's tx_count leaves out the
-- genesis txs stored with it, and the reference's total does too. Txs of unconfirmed microblocks are counted at read
-- time (unanchored).
CREATE TABLE IF NOT EXISTS tx_list_total (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  n  bigint  NOT NULL
);

CREATE OR REPLACE FUNCTION tx_list_total_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tx_list_total SET n = n + sign * (SELECT COALESCE(sum(tx_count), 0) FROM blocks b WHERE b.index_block_hash = ANY(blocks));
END
$$;

INSERT INTO tx_list_total (id, n)
SELECT true, COALESCE(sum(tx_count), 0) FROM blocks WHERE canonical
ON CONFLICT (id) DO NOTHING;

INSERT INTO derived_appliers (name, fn) VALUES ('tx_list_total', 'tx_list_total_apply') ON CONFLICT DO NOTHING;
