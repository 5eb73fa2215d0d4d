-- /extended/v1/contract/by_trait checked the trait against the ABI of every canonical deploy the GIN index
-- (sql/0024) proposed, detoasting each ABI for the recheck: 7 ms for the 190 deploys of the 1,000-block generated
-- chain, linear in the number of deploys that match (a popular trait on a long chain: tens of thousands).
--
-- Most deploys share their function list with others (a token template deployed again and again), so the trait is
-- now checked once per distinct function list: contract_function_lists holds each list ever deployed (by the md5 of
-- its jsonb text, which is canonical), kept by a trigger on txs, and the deploys of the matching lists are found by an
-- expression index on that md5 (each deploy's heap row is visited for its key and height, but no ABI is read again),
-- and only the page's rows are read whole (src/store/contract-lists.ts).
-- A content dictionary, not a chain state: a list stays when its deploys are orphaned (the read joins canonical
-- deploys), so every ingest path and order of delivery leaves the same rows.
CREATE TABLE IF NOT EXISTS contract_function_lists (
  functions_md5 text  PRIMARY KEY,
  functions     jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS contract_function_lists_functions ON contract_function_lists USING gin (functions jsonb_path_ops);

CREATE INDEX IF NOT EXISTS txs_contract_functions_md5
  ON txs (md5(((contract_abi::jsonb) -> 'functions')::text), seq, microblock_sequence, tx_index)
  WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL AND canonical AND microblock_canonical;

CREATE OR REPLACE FUNCTION contract_function_lists_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contract_function_lists (functions_md5, functions)
  SELECT md5(f::text), f FROM (SELECT (NEW.contract_abi::jsonb) -> 'functions' AS f) x WHERE f IS NOT NULL
  ON CONFLICT (functions_md5) DO NOTHING;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS contract_function_lists_track ON txs;
CREATE TRIGGER contract_function_lists_track AFTER INSERT OR UPDATE OF contract_abi ON txs
  FOR EACH ROW WHEN (NEW.contract_abi IS NOT NULL AND NEW.smart_contract_contract_id IS NOT NULL)
  EXECUTE FUNCTION contract_function_lists_track();

-- backfill: every function list stored so far
INSERT INTO contract_function_lists (functions_md5, functions)
SELECT DISTINCT ON (md5(f::text)) md5(f::text), f
FROM (SELECT (contract_abi::jsonb) -> 'functions' AS f FROM txs
      WHERE contract_abi IS NOT NULL AND smart_contract_contract_id IS NOT NULL) x
WHERE f IS NOT NULL
ON CONFLICT (functions_md5) DO NOTHING;
