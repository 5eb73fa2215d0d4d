-- Mempool functions of sql/0017 that slowed down as the chain grew (projection throughput).
--
-- mempool_replace_by_fee joined a payer+nonce to mempool_txs and txs with `nonce = … AND (sponsor = … OR
-- sender = …)`: the planner can then use only the address half of each (address, nonce) index, so every call read all
-- of a busy sender's rows (83,000 per sender on the 100,000-block generated chain: the projection slowed down as the
-- chain grew). The same function, each OR split into a UNION of two joins that use the whole composite index; the rows
-- are the same (a row matching both halves appears once, as with the OR).
CREATE OR REPLACE FUNCTION mempool_replace_by_fee(p_ids text[], p_from_mempool boolean) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE v text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  WITH src AS (
    SELECT DISTINCT CASE WHEN t.sponsored THEN t.sponsor_address ELSE t.sender_address END AS address, t.nonce
    FROM txs t WHERE NOT p_from_mempool AND t.tx_id = ANY(p_ids)
    UNION
    SELECT DISTINCT CASE WHEN m.sponsored THEN m.sponsor_address ELSE m.sender_address END, m.nonce
    FROM mempool_txs m WHERE p_from_mempool AND m.tx_id = ANY(p_ids)
  ), same AS (
    SELECT m.tx_id, m.fee_rate, m.receipt_time, g.address, g.nonce
    FROM mempool_txs m JOIN src g ON m.sponsor_address = g.address AND m.nonce = g.nonce
    UNION
    SELECT m.tx_id, m.fee_rate, m.receipt_time, g.address, g.nonce
    FROM mempool_txs m JOIN src g ON m.sender_address = g.address AND m.nonce = g.nonce
  ), candidates AS (
    SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index, g.address, g.nonce
    FROM txs t JOIN src g ON t.sponsor_address = g.address AND t.nonce = g.nonce
    WHERE t.canonical AND t.microblock_canonical
    UNION
    SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index, g.address, g.nonce
    FROM txs t JOIN src g ON t.sender_address = g.address AND t.nonce = g.nonce
    WHERE t.canonical AND t.microblock_canonical
  ), mined AS (
    SELECT DISTINCT ON (address, nonce) tx_id, address, nonce
    FROM candidates
    ORDER BY address, nonce, block_height DESC, microblock_sequence DESC, tx_index DESC
  ), fee AS (
    SELECT DISTINCT ON (address, nonce) tx_id, address, nonce FROM same
    ORDER BY address, nonce, fee_rate DESC, receipt_time DESC
  ), win AS (
    SELECT g.address, g.nonce, COALESCE(l.tx_id, h.tx_id) AS tx_id
    FROM src g LEFT JOIN mined l USING (address, nonce) LEFT JOIN fee h USING (address, nonce)
  ), loser AS (
    SELECT DISTINCT ON (s.tx_id) s.tx_id, w.tx_id AS winner
    FROM same s JOIN win w USING (address, nonce) WHERE s.tx_id <> w.tx_id
    ORDER BY s.tx_id
  ), u AS (
    UPDATE mempool_txs m SET pruned = true, status = 'dropped_replace_by_fee', replaced_by_tx_id = p.winner
    FROM loser p WHERE m.tx_id = p.tx_id
      AND (NOT m.pruned OR m.status <> 'dropped_replace_by_fee' OR m.replaced_by_tx_id IS DISTINCT FROM p.winner)
    RETURNING m.tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

-- mempool_prune (sql/0017) called the STABLE mempool_same_nonce() inside its UPDATE's WHERE, where it is evaluated
-- again for every row the scan looks at (about 20 times per call on the generated chains): computed once now.
CREATE OR REPLACE FUNCTION mempool_prune(p_ids text[]) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v text[];
  v_group text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  v_group := mempool_same_nonce(p_ids);
  WITH u AS (
    UPDATE mempool_txs SET pruned = true, replaced_by_tx_id = NULL
    WHERE NOT pruned AND tx_id = ANY(v_group)
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;
