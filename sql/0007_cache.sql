-- HTTP caching: a cheap "chain version" the API reads to build ETags and to validate its in-memory cache.
--
-- Every message the observer stores inserts one event_log row (a re-delivered message inserts none), in the same
-- transaction as every row derived from it. A DEFERRED constraint trigger bumps cache_version.version at COMMIT time of
-- that transaction, so
--   * the new version becomes visible atomically with the data it describes (a reader that sees version V also sees
--     every row written by the transaction that produced V — unlike a sequence's last_value, which moves at nextval()
--     time, long before the commit);
--   * it works whatever process wrote (in-process observer, an `ingest`-only process, `import-events`);
--   * the row lock is taken only for the last instant of the transaction, so block and mempool ingests do not queue
--     behind each other on it.
-- `token` is random per database: tags from another (or a re-created) database never match.

CREATE TABLE IF NOT EXISTS cache_version (
  id      integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  token   text    NOT NULL,
  version bigint  NOT NULL
);

INSERT INTO cache_version (id, token, version)
VALUES (1, substr(md5(random()::text || clock_timestamp()::text), 1, 10), 0)
ON CONFLICT (id) DO NOTHING;

CREATE OR REPLACE FUNCTION cache_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- once per transaction, however many messages it stored (bulk imports)
  IF current_setting('stacks_pulse.cache_version_bumped', true) = 'yes' THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('stacks_pulse.cache_version_bumped', 'yes', true);
  UPDATE cache_version SET version = version + 1 WHERE id = 1;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS event_log_cache_version ON event_log;
CREATE CONSTRAINT TRIGGER event_log_cache_version
  AFTER INSERT ON event_log
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION cache_version_bump();
