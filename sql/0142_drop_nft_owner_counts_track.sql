-- nft_owner_counts_track() was the row trigger function of the NFT owner counts (sql/0107, sql/0114); sql/0122
-- replaced its trigger with statement-level ones (nft_owner_counts_track_rows, sql/functions/tokens.sql) and left the
-- function behind, called by nothing.
DROP FUNCTION IF EXISTS nft_owner_counts_track();
