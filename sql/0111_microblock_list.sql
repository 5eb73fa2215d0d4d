-- /extended/v1/microblock pages (canonical microblock × its canonical tx) rows, newest first. The planner joined every
-- canonical microblock to its txs through a BitmapAnd of txs_microblock and txs_block and sorted the whole product:
-- 518 ms at 100,000 blocks (20,000 microblocks) against 27 ms at 1,000. With the microblocks in list order and each
-- one's txs in tx order, the page (src/store/microblocks.ts, microblockPage) is a walk of the newest microblocks, a
-- nested loop and an incremental sort of each microblock's few txs, stopping at limit + offset rows.
CREATE INDEX IF NOT EXISTS microblocks_list ON microblocks (block_height DESC, microblock_sequence DESC)
  WHERE canonical AND microblock_canonical;
-- only txs streamed in microblocks (microblock_hash <> ''): a small index
CREATE INDEX IF NOT EXISTS txs_microblock_list ON txs (microblock_hash, index_block_hash, tx_index DESC)
  WHERE canonical AND microblock_canonical AND microblock_hash <> '';
