-- An anchor block adopting the microblocks it confirms, and a microblock fork orphaning a stream's tail, look
-- microblocks up by hash among the unconfirmed ones (`index_block_hash = '' AND microblock_hash = ANY(…)`). Their plans
-- went through microblocks_anchor on `index_block_hash = ''`, which the statistics say matches a row or two; but every
-- microblock is stored unconfirmed first and then rewritten with its anchor, so that index kept an entry under '' for
-- every microblock ever adopted until a VACUUM, and each adoption visited them all: 48 buffers per adopting block after
-- 20,000 messages of a generated chain, 60 µs per message by the end of a 100,000-block import. The anchor index now
-- holds anchored microblocks only (the reorg flip, its one reader, says so); the lookups by hash take the primary key.
CREATE INDEX IF NOT EXISTS microblocks_anchored ON microblocks (index_block_hash) WHERE index_block_hash <> '';
DROP INDEX IF EXISTS microblocks_anchor;
