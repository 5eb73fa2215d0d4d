-- NFT custody as the reference (v8.13.6) keeps it, which is not "the latest canonical event of each NFT" (sql/0045)
-- once a block with NFT events is orphaned. The reference writes an NFT's owner in two places only:
--   * a new canonical block: the owner its newest event of that NFT gives (newer than what is stored, always, since a
--     new canonical block is above every block that was canonical before it);
--   * a block restored by a reorg (pg-write-store updateNftCustodyFromReOrg): the owner its newest canonical event of
--     that NFT gives, overwriting whatever is stored. Its restoreOrphanedChain restores from the top of the branch
--     down, so of several restored blocks that move one NFT, the lowest is written last and stays.
-- It never takes an owner back: when a block is orphaned, the owners its events wrote stay (its custody query for
-- that block finds no canonical event and writes nothing). So /extended/v1/tokens/nft/holdings (and the BNS names by
-- address, read from the same table) keep NFTs moved only by orphaned blocks, counted in `total`; found by replaying
-- a generated chain with forks into the reference (README, Conformance).
--
-- The applier now follows those rules: -1 writes nothing; +1 writes, per NFT, the newest event of the lowest of the
-- given blocks that moves it (one block per call for a new block; a restored branch in one call). Its result depends
-- on the order of the calls, so it runs at each call in a projector batch too (batched = false, sql/0100).
-- A database migrated with owners already recomputed keeps them: only reorgs after this migration leave the
-- reference's stale owners (a fresh import of the same stream gives the reference's table).
CREATE OR REPLACE FUNCTION nft_custody_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    RETURN;
  END IF;
  INSERT INTO nft_custody AS c (asset_identifier, value_hex, owner, tx_id, index_block_hash, block_height, tx_index, event_index)
  SELECT DISTINCT ON (e.asset_identifier, e.value_hex)
    e.asset_identifier, e.value_hex, e.recipient, e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index
  FROM events e
  JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
  WHERE e.index_block_hash = ANY(blocks) AND e.event_type = 'non_fungible_token_asset'
    AND e.canonical AND e.microblock_canonical
  ORDER BY e.asset_identifier, e.value_hex, e.block_height ASC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
  ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET
    owner = EXCLUDED.owner, tx_id = EXCLUDED.tx_id, index_block_hash = EXCLUDED.index_block_hash,
    block_height = EXCLUDED.block_height, tx_index = EXCLUDED.tx_index, event_index = EXCLUDED.event_index;
END
$$;

UPDATE derived_appliers SET batched = false WHERE name = 'nft_custody';
