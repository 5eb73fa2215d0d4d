-- What writing a chain's transactions and events costs PostgreSQL, row by row and statement by statement, on a
-- database an import left (for example `npm run bench:import -- --file chain.tsv --keep`):
--
--   psql "$DATABASE_URL" -f load/row-costs.sql -v deferrable="$(node load/deferrable-indexes.mjs)"
--
-- It takes the txs and events of 400 canonical blocks from the middle of the chain, deletes them and writes them again
-- four ways, each timed, all inside one transaction that is rolled back (the database is left as it was):
--   1. one INSERT … json_populate_recordset per block, as the projector's one-statement block path writes them;
--   2. one such INSERT for all 400 blocks (what a set-based projector would do);
--   3. COPY of the same rows (the fastest way PostgreSQL has to take rows);
--   4. the JSON parsing alone, nothing written.
-- The indexes are the import's: those `import-events` defers (DEFERRABLE_INDEXES of src/store/bulk-indexes.ts, which
-- load/deferrable-indexes.mjs prints as an array literal for `-v deferrable=`) are dropped inside the transaction
-- first; the triggers stay.
\set ON_ERROR_STOP on
\if :{?deferrable}
\else
  \echo 'usage: psql "$DATABASE_URL" -f load/row-costs.sql -v deferrable="$(node load/deferrable-indexes.mjs)"'
  \quit
\endif
\pset pager off
SELECT (max(block_height) / 2)::bigint AS lo FROM blocks WHERE canonical \gset
BEGIN;
CREATE TEMP TABLE rc_txs AS SELECT * FROM txs WHERE canonical AND block_height BETWEEN :lo AND :lo + 399;
CREATE TEMP TABLE rc_events AS SELECT * FROM events WHERE canonical AND block_height BETWEEN :lo AND :lo + 399;
CREATE TEMP TABLE rc_json AS
  SELECT b.index_block_hash,
    (SELECT json_agg(t) FROM rc_txs t WHERE t.index_block_hash = b.index_block_hash)::text AS txs,
    (SELECT json_agg(e) FROM rc_events e WHERE e.index_block_hash = b.index_block_hash)::text AS events
  FROM (SELECT DISTINCT index_block_hash FROM rc_txs) b;
SELECT count(*) AS blocks, (SELECT count(*) FROM rc_txs) AS txs, (SELECT count(*) FROM rc_events) AS events,
  (SELECT count(*) FROM pg_index WHERE indrelid = 'txs'::regclass) AS txs_indexes_before FROM rc_json;
SELECT format('DROP INDEX %I', i.indexrelid::regclass::text) FROM pg_index i
  WHERE i.indrelid IN ('txs'::regclass, 'events'::regclass) AND NOT i.indisunique
    AND i.indexrelid::regclass::text = ANY(:'deferrable'::text[]) \gexec
SELECT count(*) AS txs_indexes_during_import FROM pg_index WHERE indrelid = 'txs'::regclass;
DELETE FROM events e USING rc_json j WHERE e.index_block_hash = j.index_block_hash;
DELETE FROM txs t USING rc_json j WHERE t.index_block_hash = j.index_block_hash;
SAVEPOINT empty;
\timing on
\echo '1. one INSERT per block (txs, then events)'
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT * FROM rc_json LOOP
    INSERT INTO txs SELECT * FROM json_populate_recordset(NULL::txs, r.txs::json) ON CONFLICT DO NOTHING;
  END LOOP;
END $$;
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT * FROM rc_json WHERE events IS NOT NULL LOOP
    INSERT INTO events SELECT * FROM json_populate_recordset(NULL::events, r.events::json) ON CONFLICT DO NOTHING;
  END LOOP;
END $$;
ROLLBACK TO empty;
\echo '2. one INSERT for all the blocks (txs, then events)'
INSERT INTO txs SELECT x.* FROM rc_json j, json_populate_recordset(NULL::txs, j.txs::json) x ON CONFLICT DO NOTHING;
INSERT INTO events SELECT x.* FROM rc_json j, json_populate_recordset(NULL::events, j.events::json) x
  WHERE j.events IS NOT NULL ON CONFLICT DO NOTHING;
ROLLBACK TO empty;
\echo '3. COPY (txs, then events)'
\copy rc_txs TO '/tmp/row-costs-txs.copy'
\copy rc_events TO '/tmp/row-costs-events.copy'
\copy txs FROM '/tmp/row-costs-txs.copy'
\copy events FROM '/tmp/row-costs-events.copy'
ROLLBACK TO empty;
\echo '4. the JSON parsing alone (txs, then events)'
SELECT count(*) FROM rc_json j, json_populate_recordset(NULL::txs, j.txs::json) x;
SELECT count(*) FROM rc_json j, json_populate_recordset(NULL::events, j.events::json) x WHERE j.events IS NOT NULL;
\timing off
ROLLBACK;
\! rm -f /tmp/row-costs-txs.copy /tmp/row-costs-events.copy
