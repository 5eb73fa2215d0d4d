-- Stacking: PoX cycles and signer sets (/extended/v2/pox/cycles…), and the index of pox-2/3/4 print values by the
-- fields the stacking views filter on. Tables and backfills: sql/0031_pox_cycles.sql, sql/0032_pox_event_cycles.sql.

-- The rows of one /new_block body (parsed JSON) that carries a reward set (Nakamoto, start of a prepare phase);
-- nothing when it has none. Called by the projector (src/store/ingest/index.ts) for such a block; its rows start
-- non-canonical and pox_cycles_apply flips them with the block. As the reference: one pox_cycles row per (cycle, block) even for a reward set without
-- signers; one pox_sets row per signer (signing_key 0x-prefixed as the reference stores it), with the cycle's totals.
CREATE OR REPLACE FUNCTION pox_cycles_from_block(b json, is_canonical boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  rs json := b -> 'reward_set';
  signers json;
  v_cycle bigint := (b ->> 'cycle_number')::bigint;
  v_hash text := b ->> 'index_block_hash';
  v_weight bigint;
  v_stacked numeric;
  v_count integer;
BEGIN
  IF rs IS NULL OR json_typeof(rs) <> 'object' OR v_cycle IS NULL OR v_hash IS NULL THEN RETURN; END IF;
  signers := CASE WHEN json_typeof(rs -> 'signers') = 'array' THEN rs -> 'signers' ELSE '[]'::json END;
  SELECT COALESCE(sum((s ->> 'weight')::bigint), 0), COALESCE(sum((s ->> 'stacked_amt')::numeric), 0), count(*)
    INTO v_weight, v_stacked, v_count
    FROM json_array_elements(signers) s;
  INSERT INTO pox_cycles (cycle_number, index_block_hash, parent_index_block_hash, block_height, canonical,
    total_weight, total_stacked_amount, total_signers)
  VALUES (v_cycle, v_hash, COALESCE(b ->> 'parent_index_block_hash', ''), (b ->> 'block_height')::bigint, is_canonical,
    v_weight, v_stacked, v_count)
  ON CONFLICT DO NOTHING;
  INSERT INTO pox_sets (cycle_number, index_block_hash, signing_key, block_height, canonical, pox_ustx_threshold,
    weight, stacked_amount, total_weight, total_stacked_amount)
  SELECT v_cycle, v_hash, '0x' || lower(s ->> 'signing_key'), (b ->> 'block_height')::bigint, is_canonical,
    COALESCE((rs ->> 'pox_ustx_threshold')::numeric, 0), (s ->> 'weight')::bigint, (s ->> 'stacked_amt')::numeric,
    v_weight, v_stacked
  FROM json_array_elements(signers) s
  ON CONFLICT DO NOTHING;
END
$$;

-- Derived hook: the rows of blocks that become (+1) or stop being (-1) canonical follow them.
CREATE OR REPLACE FUNCTION pox_cycles_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE pox_cycles SET canonical = (sign > 0) WHERE index_block_hash = ANY(blocks) AND canonical <> (sign > 0);
  UPDATE pox_sets SET canonical = (sign > 0) WHERE index_block_hash = ANY(blocks) AND canonical <> (sign > 0);
END
$$;

-- The fields are read from the serialized value: tuple keys are length-prefixed names (`0e` "start-cycle-id", `0c`
-- "end-cycle-id", `0b` "delegate-to"), followed by the value (`01` + 16-byte uint, optionally inside `0a` some; `05` /
-- `06` + version + hash160 for a principal). The exact fields are still decoded by the API.
--
-- The uint after a tuple key (name given as hex, with its length byte), optionally inside (some …); null when absent
-- or none. Cycle ids fit in 64 bits: the low 8 bytes are read.
CREATE OR REPLACE FUNCTION pox_print_uint(value_hex text, key_hex text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT ('x' || right(m[1], 16))::bit(64)::bigint
  FROM (SELECT regexp_match(lower(value_hex), key_hex || '(?:0a)?01([0-9a-f]{32})') AS m) s
  WHERE m IS NOT NULL
$$;

-- The address part (version + hash160 hex) of the principal after a tuple key; null when absent.
CREATE OR REPLACE FUNCTION pox_print_address(value_hex text, key_hex text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT m[1] FROM (SELECT regexp_match(lower(value_hex), key_hex || '0[56]([0-9a-f]{42})') AS m) s WHERE m IS NOT NULL
$$;

-- Row trigger on events (its WHEN clause passes PoX print events only), so no ingest path changes: the print's
-- start_cycle_id / end_cycle_id (pox-4 reward-cycle range) and delegate_to (version + hash160 hex; a contract
-- principal indexes its address). Like pox_events a row is a pure function of the printed value, keyed by its md5,
-- never updated; placement and canonical state stay on the events rows.
CREATE OR REPLACE FUNCTION pox_event_cycles_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pox_event_cycles (value_md5, start_cycle_id, end_cycle_id, delegate_to)
  VALUES (md5(NEW.value_hex), pox_print_uint(NEW.value_hex, '0e73746172742d6379636c652d6964'),
    pox_print_uint(NEW.value_hex, '0c656e642d6379636c652d6964'),
    pox_print_address(NEW.value_hex, '0b64656c65676174652d746f'))
  ON CONFLICT (value_md5) DO NOTHING;
  RETURN NULL;
END
$$;
