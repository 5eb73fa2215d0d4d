-- Hook payloads are stored as `json` (the text as written) instead of `jsonb`: nothing queries inside a payload, it is
-- only read back whole to be sent, so the jsonb tree was built on every insert for nothing (a fifth of a history
-- chunk's time). A history chunk's payloads are put together as JSON text in the database and only validated on
-- insert (sql/functions/hooks.sql); the key order of a payload is now the order it was written in, the same for both
-- builders. Existing rows are converted; lz4 compression is kept where the server has it.
ALTER TABLE hook_deliveries ALTER COLUMN block TYPE json USING block::json;
DO $$
BEGIN
  ALTER TABLE hook_deliveries ALTER COLUMN block SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR undefined_object THEN
  RAISE NOTICE 'lz4 compression not available: keeping pglz';
END
$$;
