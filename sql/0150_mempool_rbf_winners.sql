-- Replace-by-fee's losers point at their group's winner through the group, not each through a column of its own.
--
-- The reference's replace-by-fee rewrites every other mempool tx of a payer+nonce group whenever it runs over the group
-- (pruned, dropped_replace_by_fee, replaced by the winner), so when the winner changes, every loser's replaced_by
-- changes with it. A group grows by one tx each time a tx at that payer+nonce is orphaned and never mined again: a
-- miner that keeps losing forks at the same nonce adds its coinbase at every fork, and on the 100,000-block generated
-- chain one such group reached 1,999 txs, each rewritten twice per fork (the orphaned block's txs win the group when
-- it is stored, and lose it again when the fork is undone), a cost that grew with the chain.
--
-- Now the winner replace-by-fee last chose for a sender+nonce is one row of mempool_rbf_winners, and a loser that is
-- not sponsored (the only group it can be in is its sender's) is marked rbf_lazy: pruned, dropped_replace_by_fee, its
-- replaced_by read from that row. Replace-by-fee then writes the winner's row and the group's txs that are not lazy
-- yet, whatever the size of the group. A sponsored loser (in its sender's group and its sponsor's) keeps its
-- replaced_by in its own column, as every tx did before. Rows written before this migration are all explicit.
-- The API reads replaced_by through mempool_replaced_by() (sql/functions/mempool.sql).
CREATE TABLE IF NOT EXISTS mempool_rbf_winners (
  address text   NOT NULL,
  nonce   bigint NOT NULL,
  winner  text   NOT NULL,
  PRIMARY KEY (address, nonce)
);

ALTER TABLE mempool_txs ADD COLUMN IF NOT EXISTS rbf_lazy boolean NOT NULL DEFAULT false;

-- A group's highest fee without reading the group (replace-by-fee's winner when none of it is mined), and the group's
-- txs that are not lazy (those replace-by-fee may still have to write). The first replaces the (sender, nonce) index.
CREATE INDEX IF NOT EXISTS mempool_sender_nonce_fee ON mempool_txs (sender_address, nonce, fee_rate DESC, receipt_time DESC);
CREATE INDEX IF NOT EXISTS mempool_sender_nonce_explicit ON mempool_txs (sender_address, nonce) WHERE NOT rbf_lazy;
DROP INDEX IF EXISTS mempool_sender_nonce;
DROP FUNCTION IF EXISTS mempool_rbf_losers(text[], boolean);

-- A group's newest canonically mined tx (replace-by-fee's winner when there is one) without reading the group's
-- orphaned txs: txs_sender_nonce holds every placement, and a group that gains a tx at every fork gains an orphaned
-- one in txs too (199 read to find none, per lookup, on the 10,000-block generated chain). The index of the same name
-- in sql/0040 was never created, as 0017's came first.
CREATE INDEX IF NOT EXISTS txs_canonical_sender_nonce ON txs (sender_address, nonce)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_canonical_sponsor_nonce ON txs (sponsor_address, nonce)
  WHERE canonical AND microblock_canonical AND sponsor_address IS NOT NULL;
