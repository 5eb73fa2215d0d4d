-- Stacking: the burnchain reward recipients and reward slot holders of /new_burn_block messages, as rows
-- (/extended/v1/burnchain/rewards…, /reward_slot_holders…). Until now they were kept only as JSON in burn_blocks.
--
-- Written at ingest by a trigger on burn_blocks (the only writer is the burn-block statement of src/store/ingest.ts;
-- a duplicate message inserts nothing, so the trigger does not fire): no ingest path changes.
--
-- Canonical rules, the reference's (v8.13.6):
--   reward_slot_holders: a new burn block makes every canonical row at its height or above (or of its own hash)
--     non-canonical, then adds its own rows (a burn-chain fork replaces the higher rows).
--   burnchain_rewards: never touched by a burn-chain fork; the rows of a burn block become non-canonical (for good)
--     when a Stacks block anchored to that burn block stops being canonical (derived hook, sign -1).
CREATE TABLE IF NOT EXISTS burnchain_rewards (
  id                bigserial PRIMARY KEY,
  canonical         boolean NOT NULL,
  burn_block_hash   text    NOT NULL,
  burn_block_height bigint  NOT NULL,
  burn_amount       numeric NOT NULL,
  reward_recipient  text    NOT NULL,
  reward_amount     numeric NOT NULL,
  reward_index      integer NOT NULL
);
CREATE INDEX IF NOT EXISTS burnchain_rewards_order ON burnchain_rewards (burn_block_height DESC, reward_index DESC) WHERE canonical;
CREATE INDEX IF NOT EXISTS burnchain_rewards_recipient ON burnchain_rewards (reward_recipient, burn_block_height DESC) WHERE canonical;
CREATE INDEX IF NOT EXISTS burnchain_rewards_hash ON burnchain_rewards (burn_block_hash);

CREATE TABLE IF NOT EXISTS reward_slot_holders (
  id                bigserial PRIMARY KEY,
  canonical         boolean NOT NULL,
  burn_block_hash   text    NOT NULL,
  burn_block_height bigint  NOT NULL,
  address           text    NOT NULL,
  slot_index        integer NOT NULL
);
CREATE INDEX IF NOT EXISTS reward_slot_holders_order ON reward_slot_holders (burn_block_height DESC, slot_index DESC) WHERE canonical;
CREATE INDEX IF NOT EXISTS reward_slot_holders_address ON reward_slot_holders (address, burn_block_height DESC) WHERE canonical;

CREATE OR REPLACE FUNCTION burnchain_rewards_on_burn_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO burnchain_rewards (canonical, burn_block_hash, burn_block_height, burn_amount, reward_recipient,
    reward_amount, reward_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, NEW.burn_amount, r.value ->> 'recipient',
    (r.value ->> 'amt')::numeric, (r.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_recipients) WITH ORDINALITY r;

  UPDATE reward_slot_holders SET canonical = false
  WHERE canonical AND (burn_block_hash = NEW.burn_block_hash OR burn_block_height >= NEW.burn_block_height);
  INSERT INTO reward_slot_holders (canonical, burn_block_hash, burn_block_height, address, slot_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, s.value #>> '{}', (s.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_slot_holders) WITH ORDINALITY s;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS burn_blocks_rewards ON burn_blocks;
CREATE TRIGGER burn_blocks_rewards AFTER INSERT ON burn_blocks
  FOR EACH ROW EXECUTE FUNCTION burnchain_rewards_on_burn_block();

-- Derived hook (sql/0016): a Stacks block that stops being canonical takes the rewards of its burn block with it.
CREATE OR REPLACE FUNCTION burnchain_rewards_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    UPDATE burnchain_rewards SET canonical = false
    WHERE canonical AND burn_block_hash IN (SELECT b.burn_block_hash FROM blocks b WHERE b.index_block_hash = ANY(blocks));
  END IF;
END
$$;
INSERT INTO derived_appliers (name, fn) VALUES ('burnchain_rewards', 'burnchain_rewards_apply') ON CONFLICT DO NOTHING;

-- Backfill from the stored burn blocks, in arrival order (seq). Slot holders: a row stays canonical unless a later burn
-- block arrived at its height or below. Rewards: non-canonical when a non-canonical Stacks block is anchored to that
-- burn block (the stored chain cannot tell a block that was orphaned from one that never was canonical).
INSERT INTO burnchain_rewards (canonical, burn_block_hash, burn_block_height, burn_amount, reward_recipient,
  reward_amount, reward_index)
SELECT NOT EXISTS (SELECT 1 FROM blocks x WHERE x.burn_block_hash = bb.burn_block_hash AND NOT x.canonical),
  bb.burn_block_hash, bb.burn_block_height, bb.burn_amount, r.value ->> 'recipient', (r.value ->> 'amt')::numeric,
  (r.ordinality - 1)::integer
FROM burn_blocks bb, json_array_elements(bb.reward_recipients) WITH ORDINALITY r
WHERE NOT EXISTS (SELECT 1 FROM burnchain_rewards)
ORDER BY bb.seq, r.ordinality;

INSERT INTO reward_slot_holders (canonical, burn_block_hash, burn_block_height, address, slot_index)
SELECT NOT EXISTS (SELECT 1 FROM burn_blocks later WHERE later.seq > bb.seq AND later.burn_block_height <= bb.burn_block_height),
  bb.burn_block_hash, bb.burn_block_height, s.value #>> '{}', (s.ordinality - 1)::integer
FROM burn_blocks bb, json_array_elements(bb.reward_slot_holders) WITH ORDINALITY s
WHERE NOT EXISTS (SELECT 1 FROM reward_slot_holders)
ORDER BY bb.seq, s.ordinality;
