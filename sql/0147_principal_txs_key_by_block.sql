-- principal_txs' primary key led with the principal, then the tx id, so each of a block's rows (about 30 on the
-- generated chain) went to a random leaf of the table's largest index: 270 MB at 30,000 blocks, far more than the
-- default shared buffers, so late in a long import nearly every row's insert read a leaf in and dirtied it
-- (principal_txs_apply: 72 ms per projector batch at the start of that import, 167 ms at the end). The same columns
-- led by the block put a block's rows side by side in a leaf or two; the key also answers the reorg's delete by block,
-- so principal_txs_block goes. Uniqueness (the applier's ON CONFLICT DO NOTHING) is over the same columns as before;
-- the API reads a principal's rows through principal_txs_order.
ALTER TABLE principal_txs DROP CONSTRAINT IF EXISTS principal_txs_pkey;
ALTER TABLE principal_txs ADD CONSTRAINT principal_txs_pkey PRIMARY KEY (index_block_hash, microblock_hash, tx_id, principal);
DROP INDEX IF EXISTS principal_txs_block;
