-- Stacking (issue 16): the reward-cycle range of each pox-4 print value, so the signer and stacker views of
-- /extended/v2/pox/cycles/{n}/signers… read only the events that can concern cycle n (an index) instead of decoding
-- every pox-4 event. Like pox_events (sql/0008) a row is a pure function of the printed value, keyed by its md5, never
-- updated; placement and canonical state stay on the events rows.
--
-- The range is read from the serialized value: the print tuple's data holds `start-cycle-id` (uint) and `end-cycle-id`
-- (optional uint); tuple keys are length-prefixed names, so `0e` + "start-cycle-id" + `01` is followed by the 16-byte
-- value. The exact fields are still decoded by the API (src/api/serialize-pox.ts); this is only the index.
--
-- Written at ingest by a row trigger on events, filtered by its WHEN clause to pox-4 print events: no ingest path
-- changes. Backfilled below.
CREATE TABLE IF NOT EXISTS pox_event_cycles (
  value_md5      text   PRIMARY KEY,
  start_cycle_id bigint,
  end_cycle_id   bigint
);
CREATE INDEX IF NOT EXISTS pox_event_cycles_range ON pox_event_cycles (start_cycle_id, end_cycle_id);

-- The uint after a tuple key (name given as hex, with its length byte), optionally inside (some …); null when absent
-- or none. Cycle ids fit in 64 bits: the low 8 bytes are read.
CREATE OR REPLACE FUNCTION pox_print_uint(value_hex text, key_hex text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT ('x' || right(m[1], 16))::bit(64)::bigint
  FROM (SELECT regexp_match(lower(value_hex), key_hex || '(?:0a)?01([0-9a-f]{32})') AS m) s
  WHERE m IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION pox_event_cycles_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pox_event_cycles (value_md5, start_cycle_id, end_cycle_id)
  VALUES (md5(NEW.value_hex), pox_print_uint(NEW.value_hex, '0e73746172742d6379636c652d6964'),
    pox_print_uint(NEW.value_hex, '0c656e642d6379636c652d6964'))
  ON CONFLICT (value_md5) DO NOTHING;
  RETURN NULL;
END
$$;

-- A row trigger whose WHEN clause (evaluated without calling the function) lets every other event through untouched.
DROP TRIGGER IF EXISTS events_pox_event_cycles ON events;
CREATE TRIGGER events_pox_event_cycles AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.contract_id IN ('SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
    AND NEW.topic = 'print' AND NEW.event_type = 'smart_contract_log' AND NEW.value_hex IS NOT NULL)
  EXECUTE FUNCTION pox_event_cycles_row();

INSERT INTO pox_event_cycles (value_md5, start_cycle_id, end_cycle_id)
SELECT DISTINCT ON (md5(e.value_hex)) md5(e.value_hex),
  pox_print_uint(e.value_hex, '0e73746172742d6379636c652d6964'),
  pox_print_uint(e.value_hex, '0c656e642d6379636c652d6964')
FROM events e
WHERE e.event_type = 'smart_contract_log' AND e.topic = 'print'
  AND e.contract_id IN ('SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
  AND e.value_hex IS NOT NULL
ON CONFLICT (value_md5) DO NOTHING;
