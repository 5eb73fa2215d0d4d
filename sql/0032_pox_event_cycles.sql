-- Stacking: an index of pox-2/3/4 print values by the fields the stacking views filter on, so they read only
-- the events that can concern them instead of decoding every PoX event:
--   start_cycle_id / end_cycle_id  the reward-cycle range (pox-4): /extended/v2/pox/cycles/{n}/signers…
--   delegate_to                    the delegate's address (version + hash160, hex; a contract principal indexes its
--                                  address): /extended/v1/{pox}/{pool}/delegations
-- Like pox_events (sql/0008) a row is a pure function of the printed value, keyed by its md5, never updated; placement
-- and canonical state stay on the events rows. The exact fields are still decoded by the API (src/api/serialize-pox.ts).
--
-- The fields are read from the serialized value: tuple keys are length-prefixed names (`0e` "start-cycle-id", `0c`
-- "end-cycle-id", `0b` "delegate-to"), followed by the value (`01` + 16-byte uint, optionally inside `0a` some; `05` /
-- `06` + version + hash160 for a principal).
--
-- Written at ingest by a row trigger on events, filtered by its WHEN clause to PoX print events: no ingest path
-- changes. Backfilled below.
CREATE TABLE IF NOT EXISTS pox_event_cycles (
  value_md5      text   PRIMARY KEY,
  start_cycle_id bigint,
  end_cycle_id   bigint,
  delegate_to    text
);
CREATE INDEX IF NOT EXISTS pox_event_cycles_range ON pox_event_cycles (start_cycle_id, end_cycle_id);
CREATE INDEX IF NOT EXISTS pox_event_cycles_delegate ON pox_event_cycles (delegate_to) WHERE delegate_to IS NOT NULL;

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

-- A row trigger whose WHEN clause (evaluated without calling the function) lets every other event through untouched.
DROP TRIGGER IF EXISTS events_pox_event_cycles ON events;
CREATE TRIGGER events_pox_event_cycles AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.contract_id IN (
      'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
      'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
      'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
    AND NEW.topic = 'print' AND NEW.event_type = 'smart_contract_log' AND NEW.value_hex IS NOT NULL)
  EXECUTE FUNCTION pox_event_cycles_row();

INSERT INTO pox_event_cycles (value_md5, start_cycle_id, end_cycle_id, delegate_to)
SELECT DISTINCT ON (md5(e.value_hex)) md5(e.value_hex),
  pox_print_uint(e.value_hex, '0e73746172742d6379636c652d6964'),
  pox_print_uint(e.value_hex, '0c656e642d6379636c652d6964'),
  pox_print_address(e.value_hex, '0b64656c65676174652d746f')
FROM events e
WHERE e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (
    'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
    'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
    'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
  AND e.value_hex IS NOT NULL
ON CONFLICT (value_md5) DO NOTHING;
