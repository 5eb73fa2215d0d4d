-- NFT custody (sql/0106) written once per projector batch instead of once per block.
--
-- Its result depends on the order of its calls (a restored branch writes the owners of its lowest block, a later call
-- overwrites an earlier one), so inside a deferred batch (sql/0100) each +1 call still chooses its rows when it is
-- made, from the events as they are then, but keeps them in nft_custody_deferred under its call number instead of
-- writing them. derived_flush() then writes, per NFT, the rows of the last call that moved it: what the calls one
-- after the other would have left. The custody triggers (owner counts and totals) fire once per batch.
CREATE UNLOGGED TABLE IF NOT EXISTS nft_custody_deferred (
  call_no          bigint  NOT NULL,
  asset_identifier text    NOT NULL,
  value_hex        text    NOT NULL,
  owner            text,
  tx_id            text    NOT NULL,
  index_block_hash text    NOT NULL,
  block_height     bigint  NOT NULL,
  tx_index         integer NOT NULL,
  event_index      integer NOT NULL,
  PRIMARY KEY (asset_identifier, value_hex, call_no)
);
CREATE SEQUENCE IF NOT EXISTS nft_custody_call_seq;

-- The rows one +1 call writes: per NFT, the newest event of the lowest of the given blocks that moves it.
CREATE OR REPLACE FUNCTION nft_custody_rows(blocks text[])
RETURNS TABLE (asset_identifier text, value_hex text, owner text, tx_id text, index_block_hash text, block_height bigint,
  tx_index integer, event_index integer)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT ON (e.asset_identifier, e.value_hex)
    e.asset_identifier, e.value_hex, e.recipient, e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index
  FROM events e
  JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
  WHERE e.index_block_hash = ANY(blocks) AND e.event_type = 'non_fungible_token_asset'
    AND e.canonical AND e.microblock_canonical
  ORDER BY e.asset_identifier, e.value_hex, e.block_height ASC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
$$;

CREATE OR REPLACE FUNCTION nft_custody_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    RETURN;
  END IF;
  IF current_setting('stacks_pulse.defer_derived', true) IS NOT DISTINCT FROM 'on' THEN
    INSERT INTO nft_custody_deferred (call_no, asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height,
      tx_index, event_index)
    SELECT nextval('nft_custody_call_seq'), r.* FROM nft_custody_rows(blocks) r;
    RETURN;
  END IF;
  INSERT INTO nft_custody AS c (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
  SELECT * FROM nft_custody_rows(blocks)
  ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET
    owner = EXCLUDED.owner, tx_id = EXCLUDED.tx_id, index_block_hash = EXCLUDED.index_block_hash,
    block_height = EXCLUDED.block_height, tx_index = EXCLUDED.tx_index, event_index = EXCLUDED.event_index;
END
$$;

-- The deferred calls' net effect: per NFT, the last call's row.
CREATE OR REPLACE FUNCTION nft_custody_flush() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO nft_custody AS c (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
  SELECT DISTINCT ON (d.asset_identifier, d.value_hex)
    d.asset_identifier, d.value_hex, d.owner, d.tx_id, d.index_block_hash, d.block_height, d.tx_index, d.event_index
  FROM nft_custody_deferred d
  ORDER BY d.asset_identifier, d.value_hex, d.call_no DESC
  ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET
    owner = EXCLUDED.owner, tx_id = EXCLUDED.tx_id, index_block_hash = EXCLUDED.index_block_hash,
    block_height = EXCLUDED.block_height, tx_index = EXCLUDED.tx_index, event_index = EXCLUDED.event_index;
  DELETE FROM nft_custody_deferred;
END
$$;

-- sql/0100's derived_flush, with the custody written first (one-by-one, it is written before the batched appliers run).
CREATE OR REPLACE FUNCTION derived_flush() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_minus text[];
  v_plus text[];
  v_touched text[];
  v_bad text;
BEGIN
  PERFORM nft_custody_flush();
  SELECT index_block_hash INTO v_bad FROM derived_deferred WHERE abs(sign) > 1 LIMIT 1;
  IF v_bad IS NOT NULL THEN
    RAISE EXCEPTION 'derived_flush: block % was flipped the same way twice in one batch', v_bad;
  END IF;
  v_minus := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign < 0 ORDER BY index_block_hash);
  v_plus := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign > 0 ORDER BY index_block_hash);
  v_touched := ARRAY(SELECT index_block_hash FROM derived_deferred WHERE sign = 0 AND first_sign > 0 ORDER BY index_block_hash);
  DELETE FROM derived_deferred;
  IF cardinality(v_touched) > 0 THEN PERFORM derived_touch(v_touched); END IF;
  IF cardinality(v_minus) > 0 THEN PERFORM derived_apply_now(v_minus, -1, true); END IF;
  IF cardinality(v_plus) > 0 THEN PERFORM derived_apply_now(v_plus, 1, true); END IF;
  RETURN cardinality(v_minus) + cardinality(v_plus);
END
$$;
ALTER FUNCTION derived_flush() SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION nft_custody_apply(text[], integer) SET plan_cache_mode = force_generic_plan;
