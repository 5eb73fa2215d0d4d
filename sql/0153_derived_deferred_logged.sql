-- The flips a projector batch defers (derived_deferred, nft_custody_deferred) may now be applied by a second
-- connection after the batch commits (src/projector/projector.ts): between the two commits they are the only record of
-- what the derived tables still owe, so they must survive a crash of the server like every other table. An unlogged
-- table is emptied by crash recovery; these become ordinary tables (both small: a few batches' rows at most, vacuumed
-- by the projector).
ALTER TABLE derived_deferred SET LOGGED;
ALTER TABLE nft_custody_deferred SET LOGGED;

-- How far the derived tables are applied. projector_state.applied_id is where the projector resumes (the last batch
-- committed); this is the last message whose batch's derived tables are written too, what the status routes report as
-- applied. A batch that writes its derived tables in its own transaction moves both; the flush behind moves this one to
-- the projector_state.applied_id of its snapshot.
CREATE TABLE IF NOT EXISTS projector_derived (
  id         integer     PRIMARY KEY CHECK (id = 1),
  applied_id bigint      NOT NULL DEFAULT 0,
  applied_at timestamptz
);
INSERT INTO projector_derived (id, applied_id, applied_at)
SELECT 1, COALESCE((SELECT applied_id FROM projector_state), 0), (SELECT applied_at FROM projector_state)
ON CONFLICT (id) DO NOTHING;
