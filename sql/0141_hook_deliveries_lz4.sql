-- History evaluation speed: a hook's delivery rows carry the payload block (its matching txs with raw bytes and events),
-- often a few KB each, and a history writes one per matching block. Compressing them with lz4 instead of pglz makes
-- writing them cheaper (the benchmark's history spent most of its time writing). Only rows written from now on change;
-- a server without lz4 (the embedded PGlite) keeps pglz.
DO $$
BEGIN
  ALTER TABLE hook_deliveries ALTER COLUMN block SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR undefined_object THEN
  RAISE NOTICE 'lz4 compression not available: keeping pglz';
END
$$;
