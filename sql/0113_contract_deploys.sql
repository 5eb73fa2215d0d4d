-- /extended/v1/contract/by_trait read each matching deploy's key and height from its txs row: the md5 expression index
-- of sql/0108 names the rows, but an expression index cannot answer an index-only scan (the expression's column is
-- needed), so every matching deploy cost a visit to a wide, scattered txs heap row: 380 ms at 10 connections for the
-- 20,174 deploys of one template on the 100,000-block chain, against 31 ms at 1,000 blocks.
--
-- contract_deploys holds, for every deploy that is canonical (anchored or in the unconfirmed microblock stream, as the
-- old partial index) and has a function list, the list's md5, its storage-order key (seq, microblock_sequence, tx_index), its height
-- and its txs key: a narrow table whose index returns the matching deploys in storage order, index-only once vacuumed,
-- so the reference's tie order (the same sort over the same rows in storage order, src/store/contract-lists.ts) costs
-- a read of narrow index tuples. Row triggers on txs keep it: a deploy's row is removed on delete or update and added
-- again when the new version is canonical, whatever path wrote the tx (one message, a projector batch, a reorg).
CREATE TABLE IF NOT EXISTS contract_deploys (
  tx_id               text    NOT NULL,
  index_block_hash    text    NOT NULL,
  microblock_hash     text    NOT NULL,
  functions_md5       text    NOT NULL,
  seq                 bigint  NOT NULL,
  microblock_sequence integer NOT NULL,
  tx_index            integer NOT NULL,
  block_height        bigint  NOT NULL,
  PRIMARY KEY (tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX IF NOT EXISTS contract_deploys_list ON contract_deploys (functions_md5, seq, microblock_sequence, tx_index)
  INCLUDE (block_height, tx_id, index_block_hash, microblock_hash);

CREATE OR REPLACE FUNCTION contract_deploys_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM contract_deploys
    WHERE tx_id = OLD.tx_id AND index_block_hash = OLD.index_block_hash AND microblock_hash = OLD.microblock_hash;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.contract_abi IS NOT NULL AND NEW.smart_contract_contract_id IS NOT NULL
     AND NEW.canonical AND NEW.microblock_canonical AND (NEW.contract_abi::jsonb) -> 'functions' IS NOT NULL THEN
    INSERT INTO contract_deploys (tx_id, index_block_hash, microblock_hash, functions_md5, seq, microblock_sequence, tx_index, block_height)
    VALUES (NEW.tx_id, NEW.index_block_hash, NEW.microblock_hash, md5(((NEW.contract_abi::jsonb) -> 'functions')::text),
            NEW.seq, NEW.microblock_sequence, NEW.tx_index, NEW.block_height)
    ON CONFLICT (tx_id, index_block_hash, microblock_hash) DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS contract_deploys_insert ON txs;
DROP TRIGGER IF EXISTS contract_deploys_update ON txs;
DROP TRIGGER IF EXISTS contract_deploys_delete ON txs;
-- backfill (an existing database) before the triggers see anything, in the migration's transaction
TRUNCATE contract_deploys;
INSERT INTO contract_deploys (tx_id, index_block_hash, microblock_hash, functions_md5, seq, microblock_sequence, tx_index, block_height)
SELECT tx_id, index_block_hash, microblock_hash, md5(((contract_abi::jsonb) -> 'functions')::text), seq, microblock_sequence, tx_index, block_height
FROM txs
WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical AND microblock_canonical
  AND (contract_abi::jsonb) -> 'functions' IS NOT NULL;
-- only deploys wake the function (the WHEN is checked without calling it)
CREATE TRIGGER contract_deploys_insert AFTER INSERT ON txs
  FOR EACH ROW WHEN (NEW.contract_abi IS NOT NULL AND NEW.smart_contract_contract_id IS NOT NULL)
  EXECUTE FUNCTION contract_deploys_track();
CREATE TRIGGER contract_deploys_update AFTER UPDATE ON txs
  FOR EACH ROW WHEN ((OLD.contract_abi IS NOT NULL AND OLD.smart_contract_contract_id IS NOT NULL)
                  OR (NEW.contract_abi IS NOT NULL AND NEW.smart_contract_contract_id IS NOT NULL))
  EXECUTE FUNCTION contract_deploys_track();
CREATE TRIGGER contract_deploys_delete AFTER DELETE ON txs
  FOR EACH ROW WHEN (OLD.contract_abi IS NOT NULL AND OLD.smart_contract_contract_id IS NOT NULL)
  EXECUTE FUNCTION contract_deploys_track();

DROP INDEX IF EXISTS txs_contract_functions_md5;
