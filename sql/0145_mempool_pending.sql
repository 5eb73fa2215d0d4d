-- The pending mempool moves out of mempool_txs' partial indexes into a table of its own, kept by statement triggers
-- on mempool_txs (sql/functions/mempool.sql, mempool_pending_sync_*): one row per mempool tx that is not pruned, with
-- the columns the pending reads filter and sort on.
--
-- Why: every rule of the mempool (prune, replace-by-fee, restore, revive, garbage collection) rewrites `pruned`,
-- `status` or `replaced_by_tx_id`, and `pruned` was in the predicate of seven partial indexes. An UPDATE that changes
-- a column an index names can never be a heap-only (HOT) update: each rewrite of a 1.3 KB row wrote a new version
-- elsewhere in the heap and a new entry in every index, the primary key's included. Between two VACUUMs the indexes
-- filled with entries of dead versions, which the mempool statements then walked: on the first 60,000 messages of the
-- 100,000-block generated chain the buffers each call reads grew from start to end 345 → 616 (mempool_mined),
-- 118 → 544 (garbage collection), 3,326 → 14,711 (restore). Now no index of mempool_txs names a column the rules
-- change, its pages keep room for a new version (fillfactor), and the pending rows' indexes sit on a table the size
-- of the pending mempool.
DROP INDEX IF EXISTS mempool_pending;
DROP INDEX IF EXISTS mempool_sender;
DROP INDEX IF EXISTS mempool_sponsor;
DROP INDEX IF EXISTS mempool_recipient;
DROP INDEX IF EXISTS mempool_contract_call;
DROP INDEX IF EXISTS mempool_receipt_height;
DROP INDEX IF EXISTS mempool_smart_contract;
-- an import that deferred them recorded their old definitions (on mempool_txs): the new ones are created below
DELETE FROM deferred_indexes WHERE name IN ('mempool_sender', 'mempool_sponsor', 'mempool_recipient', 'mempool_smart_contract');

CREATE TABLE IF NOT EXISTS mempool_pending (
  tx_id                      text   PRIMARY KEY,
  receipt_time               bigint NOT NULL,
  receipt_block_height       bigint NOT NULL,
  sender_address             text   NOT NULL,
  sponsor_address            text,
  token_transfer_recipient   text,
  contract_call_contract_id  text,
  smart_contract_contract_id text
);
INSERT INTO mempool_pending (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
  token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
SELECT tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address, token_transfer_recipient,
  contract_call_contract_id, smart_contract_contract_id
FROM mempool_txs WHERE NOT pruned
ON CONFLICT (tx_id) DO NOTHING;

CREATE INDEX IF NOT EXISTS mempool_pending_time ON mempool_pending (receipt_time DESC);
CREATE INDEX IF NOT EXISTS mempool_pending_height ON mempool_pending (receipt_block_height);
CREATE INDEX IF NOT EXISTS mempool_sender ON mempool_pending (sender_address);
CREATE INDEX IF NOT EXISTS mempool_sponsor ON mempool_pending (sponsor_address);
CREATE INDEX IF NOT EXISTS mempool_recipient ON mempool_pending (token_transfer_recipient);
CREATE INDEX IF NOT EXISTS mempool_contract_call ON mempool_pending (contract_call_contract_id);
CREATE INDEX IF NOT EXISTS mempool_smart_contract ON mempool_pending (smart_contract_contract_id)
  WHERE smart_contract_contract_id IS NOT NULL;

-- Room on each page for a rewritten version of one of its rows (rows are about 1.3 KB): applies to pages filled from
-- now on.
ALTER TABLE mempool_txs SET (fillfactor = 70);

-- The triggers' functions (also in sql/functions/mempool.sql, which replaces them after every migrate).
CREATE OR REPLACE FUNCTION mempool_pending_sync_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO mempool_pending (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
    token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
  SELECT n.tx_id, n.receipt_time, n.receipt_block_height, n.sender_address, n.sponsor_address, n.token_transfer_recipient,
    n.contract_call_contract_id, n.smart_contract_contract_id
  FROM mempool_new n WHERE NOT n.pruned;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION mempool_pending_sync_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mempool_pending p USING mempool_new n WHERE p.tx_id = n.tx_id AND n.pruned;
  INSERT INTO mempool_pending AS p (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
    token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
  SELECT n.tx_id, n.receipt_time, n.receipt_block_height, n.sender_address, n.sponsor_address, n.token_transfer_recipient,
    n.contract_call_contract_id, n.smart_contract_contract_id
  FROM mempool_new n WHERE NOT n.pruned
  ON CONFLICT (tx_id) DO UPDATE SET receipt_time = EXCLUDED.receipt_time, receipt_block_height = EXCLUDED.receipt_block_height
    WHERE (p.receipt_time, p.receipt_block_height) IS DISTINCT FROM (EXCLUDED.receipt_time, EXCLUDED.receipt_block_height);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION mempool_pending_sync_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mempool_pending p USING mempool_old o WHERE p.tx_id = o.tx_id;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS mempool_pending_on_insert ON mempool_txs;
CREATE TRIGGER mempool_pending_on_insert AFTER INSERT ON mempool_txs REFERENCING NEW TABLE AS mempool_new
  FOR EACH STATEMENT EXECUTE FUNCTION mempool_pending_sync_insert();
DROP TRIGGER IF EXISTS mempool_pending_on_update ON mempool_txs;
CREATE TRIGGER mempool_pending_on_update AFTER UPDATE ON mempool_txs REFERENCING NEW TABLE AS mempool_new
  FOR EACH STATEMENT EXECUTE FUNCTION mempool_pending_sync_update();
DROP TRIGGER IF EXISTS mempool_pending_on_delete ON mempool_txs;
CREATE TRIGGER mempool_pending_on_delete AFTER DELETE ON mempool_txs REFERENCING OLD TABLE AS mempool_old
  FOR EACH STATEMENT EXECUTE FUNCTION mempool_pending_sync_delete();

-- Where autovacuum runs, it vacuums mempool_pending after a fixed number of deleted rows rather than a fraction of a
-- table that is nearly all deleted rows (src/projector/maintenance.ts does the same where it is off).
ALTER TABLE mempool_pending SET (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0);
