-- Burnchain rewards and reward slot holders (sql/0030_burnchain_rewards.sql), and the ordinals of the burn heights
-- that carry canonical Stacks blocks (sql/0107_read_counts.sql).

-- Row trigger on burn_blocks (its only writer is the statement of src/store/ingest/burn-block.ts; a duplicate
-- message inserts nothing, so the trigger does not fire): no ingest path changes. The reference's rules (v8.13.6):
--   reward_slot_holders: a new burn block makes every canonical row at its height or above (or of its own hash)
--     non-canonical, then adds its own rows (a burn-chain fork replaces the higher rows);
--   burnchain_rewards: never touched by a burn-chain fork (see burnchain_rewards_apply).
-- The slot holders are retired by two UPDATEs, each on its own index: one UPDATE with `height >= … OR hash = …` kept
-- the planner from using either index, so every burn block scanned the table (0.2 ms per burn block at 1,000 blocks,
-- 1.4 ms at 25,000); a row matching both is updated by the first. `plan_cache_mode = auto`: the height condition is a
-- range, for which a generic plan assumes a third of the table and scans it.
CREATE OR REPLACE FUNCTION burnchain_rewards_on_burn_block() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = auto AS $$
BEGIN
  INSERT INTO burnchain_rewards (canonical, burn_block_hash, burn_block_height, burn_amount, reward_recipient,
    reward_amount, reward_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, NEW.burn_amount, r.value ->> 'recipient',
    (r.value ->> 'amt')::numeric, (r.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_recipients) WITH ORDINALITY r;

  UPDATE reward_slot_holders SET canonical = false WHERE canonical AND burn_block_height >= NEW.burn_block_height;
  UPDATE reward_slot_holders SET canonical = false WHERE canonical AND burn_block_hash = NEW.burn_block_hash;
  INSERT INTO reward_slot_holders (canonical, burn_block_hash, burn_block_height, address, slot_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, s.value #>> '{}', (s.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_slot_holders) WITH ORDINALITY s;
  RETURN NULL;
END
$$;

-- Derived hook (derived.sql): a Stacks block that stops being canonical takes the rewards of its burn block with it,
-- for good (a +1 does not restore them, so this applier is not batched: derived_appliers.batched = false).
CREATE OR REPLACE FUNCTION burnchain_rewards_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    UPDATE burnchain_rewards SET canonical = false
    WHERE canonical AND burn_block_hash IN (SELECT b.burn_block_hash FROM blocks b WHERE b.index_block_hash = ANY(blocks));
  END IF;
END
$$;

-- burn_block_ordinals holds every burn height that carries at least one canonical Stacks block with its rank from the
-- bottom (0, 1, 2, … in height order), so /extended/v2/burn-blocks?offset=N seeks the rank `top - offset` in an index
-- instead of walking N distinct heights. Renumbers the heights from p_low upward (the only heights whose presence can
-- change, and every height whose rank can); for a new block at the tip that is one or two rows.
CREATE OR REPLACE FUNCTION burn_block_ordinals_renumber(p_low bigint) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_base bigint;
BEGIN
  DELETE FROM burn_block_ordinals WHERE burn_block_height >= p_low;
  SELECT COALESCE(max(ordinal) + 1, 0) INTO v_base FROM burn_block_ordinals;
  INSERT INTO burn_block_ordinals (burn_block_height, ordinal)
  SELECT h, v_base + row_number() OVER (ORDER BY h) - 1
  FROM (SELECT DISTINCT burn_block_height AS h FROM blocks WHERE canonical AND burn_block_height >= p_low) d;
END
$$;

-- Derived hook: not additive, it recomputes from the blocks' current flags from the lowest burn height of the flipped
-- blocks; the result is a function of the blocks table alone, so batching and the order of the calls do not change it.
CREATE OR REPLACE FUNCTION burn_block_ordinals_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_low bigint;
BEGIN
  -- min over a subquery (OFFSET 0): as a plain min() the planner read blocks_burn_height upward from the bottom until
  -- one of these blocks came up, expecting them anywhere; they are the newest, so it read nearly every block each time
  -- (15 ms per batch on average, and growing, over an 8,000-block import)
  SELECT min(k.h) INTO v_low FROM (SELECT b.burn_block_height AS h FROM blocks b WHERE b.index_block_hash = ANY(blocks) OFFSET 0) k;
  IF v_low IS NOT NULL THEN
    PERFORM burn_block_ordinals_renumber(v_low);
  END IF;
END
$$;
