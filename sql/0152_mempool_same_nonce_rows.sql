-- mempool_prune and mempool_restore read mempool_same_nonce_rows (sql/functions/mempool.sql), which replaces this one.
DROP FUNCTION IF EXISTS mempool_same_nonce_not_lazy(text[]);
