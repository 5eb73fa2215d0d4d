-- Stacking: PoX cycles and their signer sets (/extended/v2/pox/cycles…), from the `reward_set` and
-- `cycle_number` a /new_block message carries at the start of a prepare phase (Nakamoto). Until now they were kept
-- only in event_log.
--
-- Written at ingest by a trigger on event_log (both ingest paths log the raw message first, in the block's
-- transaction): rows start non-canonical; the derived hook (sql/0016) marks a block's rows canonical when the block
-- becomes canonical and non-canonical when it stops being canonical. No ingest path changes.
--
-- As the reference: one pox_cycles row per (cycle, block) even for a reward set without signers; one pox_sets row per
-- signer (signing_key 0x-prefixed as the reference stores it), with the cycle's totals.
CREATE TABLE IF NOT EXISTS pox_cycles (
  cycle_number            bigint  NOT NULL,
  index_block_hash        text    NOT NULL,
  parent_index_block_hash text    NOT NULL,
  block_height            bigint  NOT NULL,
  canonical               boolean NOT NULL,
  total_weight            bigint  NOT NULL,
  total_stacked_amount    numeric NOT NULL,
  total_signers           integer NOT NULL,
  PRIMARY KEY (cycle_number, index_block_hash)
);
CREATE INDEX IF NOT EXISTS pox_cycles_block ON pox_cycles (index_block_hash);
CREATE INDEX IF NOT EXISTS pox_cycles_canonical ON pox_cycles (cycle_number DESC) WHERE canonical;

CREATE TABLE IF NOT EXISTS pox_sets (
  cycle_number            bigint  NOT NULL,
  index_block_hash        text    NOT NULL,
  signing_key             text    NOT NULL,
  block_height            bigint  NOT NULL,
  canonical               boolean NOT NULL,
  pox_ustx_threshold      numeric NOT NULL,
  weight                  bigint  NOT NULL,
  stacked_amount          numeric NOT NULL,
  total_weight            bigint  NOT NULL,
  total_stacked_amount    numeric NOT NULL,
  PRIMARY KEY (cycle_number, index_block_hash, signing_key)
);
CREATE INDEX IF NOT EXISTS pox_sets_block ON pox_sets (index_block_hash);
CREATE INDEX IF NOT EXISTS pox_sets_cycle ON pox_sets (cycle_number, signing_key) WHERE canonical;

-- The rows of one /new_block body (parsed JSON); nothing when it has no reward set object.
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

-- Ingest: a /new_block message with a reward set object. The body is parsed only when it names one: the key is found
-- with strpos and its value checked to be an object before the (possibly large) body is parsed.
CREATE OR REPLACE FUNCTION pox_cycles_on_event_log() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p integer := strpos(NEW.body, '"reward_set"');
BEGIN
  IF p = 0 OR substr(NEW.body, p + 12, 16) !~ '^\s*:\s*\{' THEN RETURN NULL; END IF;
  PERFORM pox_cycles_from_block(NEW.body::json, false);
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS event_log_pox_cycles ON event_log;
CREATE TRIGGER event_log_pox_cycles AFTER INSERT ON event_log
  FOR EACH ROW WHEN (NEW.path = '/new_block') EXECUTE FUNCTION pox_cycles_on_event_log();

-- Derived hook: the rows of blocks that become (+1) or stop being (-1) canonical follow them.
CREATE OR REPLACE FUNCTION pox_cycles_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE pox_cycles SET canonical = (sign > 0) WHERE index_block_hash = ANY(blocks) AND canonical <> (sign > 0);
  UPDATE pox_sets SET canonical = (sign > 0) WHERE index_block_hash = ANY(blocks) AND canonical <> (sign > 0);
END
$$;
INSERT INTO derived_appliers (name, fn) VALUES ('pox_cycles', 'pox_cycles_apply') ON CONFLICT DO NOTHING;

-- Backfill from the stored messages; canonical as the stored block is.
DO $$
DECLARE
  r record;
  b json;
BEGIN
  FOR r IN SELECT body FROM event_log WHERE path = '/new_block' AND strpos(body, '"reward_set"') > 0 ORDER BY id LOOP
    CONTINUE WHEN substr(r.body, strpos(r.body, '"reward_set"') + 12, 16) !~ '^\s*:\s*\{';
    b := r.body::json;
    PERFORM pox_cycles_from_block(b, COALESCE((SELECT canonical FROM blocks WHERE index_block_hash = b ->> 'index_block_hash'), false));
  END LOOP;
END
$$;
