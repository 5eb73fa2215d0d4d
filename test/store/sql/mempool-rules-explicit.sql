-- The replace-by-fee rules with every loser written (each mempool tx's replaced_by_tx_id in its own column), as the
-- reference stores them and as stacks-pulse did before lazy losers (sql/0150_mempool_rbf_winners.sql). Installed over
-- sql/functions/mempool.sql in a test database, they are the model the lazy rules must answer like
-- (test/store/mempool-rbf-lazy.test.ts). They never set rbf_lazy, so mempool_replaced_by() reads their column.
CREATE OR REPLACE FUNCTION mempool_rbf_losers(p_ids text[], p_from_mempool boolean)
RETURNS TABLE (tx_id text, winner text) LANGUAGE sql STABLE AS $$
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
  )
  SELECT DISTINCT ON (s.tx_id) s.tx_id, w.tx_id
  FROM same s JOIN win w USING (address, nonce) WHERE s.tx_id <> w.tx_id
  ORDER BY s.tx_id
$$;

-- Every loser of mempool_rbf_losers becomes dropped_replace_by_fee, replaced by its group's winner (pruned or not);
-- the txs written.
CREATE OR REPLACE FUNCTION mempool_replace_by_fee(p_ids text[], p_from_mempool boolean) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE v text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  WITH u AS (
    UPDATE mempool_txs m SET pruned = true, status = 'dropped_replace_by_fee', replaced_by_tx_id = p.winner
    FROM mempool_rbf_losers(p_ids, p_from_mempool) p WHERE m.tx_id = p.tx_id
      AND (NOT m.pruned OR m.status <> 'dropped_replace_by_fee' OR m.replaced_by_tx_id IS DISTINCT FROM p.winner)
    RETURNING m.tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

CREATE OR REPLACE FUNCTION mempool_restore(p_ids text[], p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_restored text[];
  v_need text[];
  v_rows json;
  v_group text[];
  v_came text[] := '{}';
  v_dropped text[] := '{}';
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  v_group := mempool_same_nonce(p_ids);
  v_restored := ARRAY(SELECT m.tx_id FROM mempool_txs m WHERE m.pruned AND m.tx_id = ANY(v_group) ORDER BY m.tx_id);
  v_need := ARRAY(SELECT DISTINCT x FROM unnest(p_ids) x WHERE x <> ALL(v_restored) ORDER BY x);
  IF cardinality(v_need) > 0 THEN
    v_rows := mempool_rows_of_mined(v_need);
    -- what came in (revived or inserted) is what the insert's replace-by-fee ran over
    IF v_rows IS NOT NULL THEN v_came := (mempool_insert_rows(v_rows, p_tip, p_seq)).ids; END IF;
  END IF;
  IF cardinality(v_came) > 0 AND cardinality(v_restored) > 0 THEN
    -- joins, not `= ANY` / `<> ALL`: both arrays hold a whole payer+nonce group, which can reach thousands of txs
    -- (one miner losing fork after fork at the same nonce), and an array test per row made these steps quadratic
    v_dropped := ARRAY(SELECT l.tx_id FROM mempool_rbf_losers(v_came, true) l JOIN unnest(v_restored) AS r(tx_id) USING (tx_id));
  END IF;
  IF cardinality(v_restored) > cardinality(v_dropped) THEN
    UPDATE mempool_txs m SET pruned = false, status = 'pending', replaced_by_tx_id = NULL
    FROM (SELECT unnest(v_restored) EXCEPT SELECT unnest(v_dropped)) AS k(tx_id)
    WHERE m.pruned AND m.tx_id = k.tx_id;
  END IF;
  RETURN v_restored || v_need;
END
$$;

CREATE OR REPLACE FUNCTION mempool_mined(p_ids text[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN; END IF;
  WITH payer AS (
    SELECT DISTINCT t.sponsored, t.sponsor_address, t.sender_address, t.nonce FROM txs t WHERE t.tx_id = ANY(p_ids)
  ), src AS (
    SELECT DISTINCT CASE WHEN p.sponsored THEN p.sponsor_address ELSE p.sender_address END AS address, p.nonce
    FROM payer p
  ), null_sponsor AS (
    SELECT DISTINCT p.nonce FROM payer p WHERE p.sponsored AND p.sponsor_address IS NULL
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
  ), grp AS (
    -- prune's group: mempool_same_nonce(p_ids)
    SELECT s.tx_id FROM same s
    UNION SELECT m.tx_id FROM mempool_txs m JOIN null_sponsor n ON m.nonce = n.nonce AND m.sender_address = 'null'
    UNION SELECT m.tx_id FROM mempool_txs m JOIN null_sponsor n ON m.nonce = n.nonce AND m.sponsor_address = 'null'
    UNION SELECT unnest(p_ids)
  ), target AS (
    -- prune's group, each row with its replace-by-fee winner when it loses (losers are in the group; joined in full all the same)
    SELECT COALESCE(g.tx_id, l.tx_id) AS tx_id, l.winner, l.tx_id IS NOT NULL AS loses
    FROM grp g FULL JOIN loser l ON l.tx_id = g.tx_id
  )
  UPDATE mempool_txs m
  SET pruned = true,
    status = CASE WHEN x.loses THEN 'dropped_replace_by_fee' ELSE m.status END,
    replaced_by_tx_id = x.winner
  FROM target x
  WHERE m.tx_id = x.tx_id
    AND CASE WHEN x.loses
      THEN NOT m.pruned OR m.status <> 'dropped_replace_by_fee' OR m.replaced_by_tx_id IS DISTINCT FROM x.winner
      ELSE NOT m.pruned END;
END
$$;
