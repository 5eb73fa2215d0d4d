-- PoX synthetic events: the decoded print events of the boot pox-2 / pox-3 / pox-4 contracts (stack-stx, stack-extend,
-- stack-increase, delegate-stack-*, handle-unlock …), which decide the lock fields of /extended/v1/address/{p}/stx.
--
-- A row is a pure function of the printed Clarity value, so it is keyed by md5(value_hex) and never updated: where and
-- whether the event counts (block height, tx, canonical / microblock_canonical after reorgs, boot-block adoption,
-- microblock confirmation) is always read from the `events` row(s) carrying that value. Filled at ingest
-- (src/store/ingest.ts, rows from src/chain/pox.ts poxEventRows).

CREATE TABLE IF NOT EXISTS pox_events (
  value_md5               text    PRIMARY KEY,
  name                    text    NOT NULL,
  stacker                 text    NOT NULL,
  locked                  numeric NOT NULL,
  balance                 numeric NOT NULL,
  burnchain_unlock_height bigint  NOT NULL,
  pox_addr_raw            text
);
CREATE INDEX IF NOT EXISTS pox_events_stacker ON pox_events (stacker);

-- Finds the events rows of a PoX print value (the predicate is repeated literally by the queries that use it).
CREATE INDEX IF NOT EXISTS events_pox_print ON events (md5(value_hex))
  WHERE event_type = 'smart_contract_log' AND topic = 'print' AND contract_id IN (
    'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
    'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
    'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4');
