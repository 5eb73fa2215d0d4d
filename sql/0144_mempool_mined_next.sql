-- project_mempool and mempool_insert_rows take the txs the next block of the projector's batch mines
-- (sql/functions/mempool.sql, projector.sql): their old signatures go, the functions files create the new ones.
DROP FUNCTION IF EXISTS project_mempool(bigint, json, boolean);
DROP FUNCTION IF EXISTS mempool_insert_rows(json, bigint, bigint);
