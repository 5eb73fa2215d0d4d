-- Bulk import. Every txs and events row pays for each of the tables' indexes (24 and 18 before this
-- migration): a 10,000-block generated chain imported with 65 indexes that nothing on the write path reads dropped
-- beforehand took 165 s instead of 193 s.
--
-- 1. txs_contract_abi_functions (sql/0024, a GIN index over every deploy's ABI functions) has had no reader since
--    /extended/v1/contract/by_trait matches traits against contract_function_lists (sql/0108): dropped for good.
-- 2. deferred_indexes: `import-events` into an empty database drops the indexes only the API reads
--    (src/store/bulk-indexes.ts names them), recording each one's definition here, and creates them again once
--    everything is applied. A row left here (the import was interrupted or killed) is an index still to be created:
--    every start-up (`serve`, `migrate`, a later import that does not defer) creates it before anything else.
DROP INDEX IF EXISTS txs_contract_abi_functions;

CREATE TABLE IF NOT EXISTS deferred_indexes (
  name        text        PRIMARY KEY,
  table_name  text        NOT NULL,
  definition  text        NOT NULL,
  deferred_at timestamptz NOT NULL DEFAULT now()
);
