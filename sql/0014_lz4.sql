-- Ingest speed: the large text/json columns (raw messages, raw txs, decoded txs, ABIs, Clarity values) are
-- TOAST-compressed with lz4 instead of pglz where the server has it: a 300 KB block message (contract deployments)
-- spent about 5 ms compressing its raw body alone with pglz. Only values written from now on change; reads handle both.
-- A server built without lz4 (the embedded PGlite, say) keeps pglz: the statement's error is swallowed.
DO $$
BEGIN
  ALTER TABLE event_log ALTER COLUMN body SET COMPRESSION lz4;
  ALTER TABLE txs ALTER COLUMN raw_tx SET COMPRESSION lz4;
  ALTER TABLE txs ALTER COLUMN api SET COMPRESSION lz4;
  ALTER TABLE txs ALTER COLUMN contract_abi SET COMPRESSION lz4;
  ALTER TABLE txs ALTER COLUMN raw_result SET COMPRESSION lz4;
  ALTER TABLE events ALTER COLUMN value_hex SET COMPRESSION lz4;
  ALTER TABLE mempool_txs ALTER COLUMN raw_tx SET COMPRESSION lz4;
  ALTER TABLE mempool_txs ALTER COLUMN api SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR undefined_object THEN
  RAISE NOTICE 'lz4 compression not available: keeping pglz';
END
$$;
