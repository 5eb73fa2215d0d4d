-- Unconfirmed microblock rows are stored with index_block_hash = '' and updated to their anchor block's hash when a
-- block confirms them, so every confirmed microblock leaves dead '' entries in the tables' indexes until VACUUM. With
-- autovacuum's defaults (a table is vacuumed once 20% of its rows are dead) a long chain keeps tens of thousands of
-- them, and every read of the unconfirmed rows (each address page and total with `unanchored`, the principal index's
-- unconfirmed part) visits them all: 160 ms per call on the 100,000-block generated chain (40,000 dead '' entries in
-- txs), 0.2 ms after a VACUUM. These tables are vacuumed after a fixed number of dead rows instead.
ALTER TABLE txs SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
ALTER TABLE events SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
ALTER TABLE microblocks SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000);
