-- Mempool steps of the projector, made cheaper per call; the rows they write are the same.
--
-- 1. Two UPDATEs found their rows among the whole pending mempool instead of by primary key: mempool_prune's and
--    mempool_insert's "already mined" step filter `tx_id = ANY(…) AND NOT pruned`. With generic plans (sql/0101) the
--    planner takes the partial index `mempool_receipt_height … WHERE NOT pruned` for that, and inside a projector
--    batch that index holds an entry for every row version the batch made pending and then pruned (none of them can
--    be marked dead while the batch's transaction runs, and autovacuum may be off): 180 to 335 buffers per call on
--    the 500-block generated chain where the primary key needs a few per tx. `pruned IS NOT TRUE` (pruned is NOT NULL,
--    so the same rows) is a condition no partial index matches: the primary key is used.
-- 2. A block on the canonical tip (project_block_fast) pruned its txs' payer+nonce groups, then garbage-collected, then
--    ran replace-by-fee over the same groups: the groups were looked up twice and a tx replaced by the mined one was
--    written twice (pruned, then dropped_replace_by_fee). mempool_mined does both in one UPDATE. Same rows because:
--    replace-by-fee's rows (its `same`) are a subset of prune's group (same payer+nonce lookup; prune's also holds
--    the ids themselves and treats a sponsored tx without sponsor as payer 'null'); replace-by-fee's winner and losers
--    depend only on fee_rate, receipt_time and mined txs, which prune does not change; after prune every row of the
--    group is pruned, so garbage collection (NOT pruned rows only) never touches a row of the group and runs after
--    both as well as between them. A loser's final state is replace-by-fee's; any other row of the group that was
--    pending ends pruned with status kept and no replacement, as prune leaves it.

CREATE OR REPLACE FUNCTION mempool_prune(p_ids text[]) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v text[];
  v_group text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  v_group := mempool_same_nonce(p_ids);
  WITH u AS (
    UPDATE mempool_txs SET pruned = true, replaced_by_tx_id = NULL
    WHERE tx_id = ANY(v_group) AND pruned IS NOT TRUE
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

CREATE OR REPLACE FUNCTION mempool_insert(p_rows json, p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_ids text[];
  v_first_time bigint;
  v_revived text[];
  v_inserted text[];
BEGIN
  SELECT array_agg(e->>'tx_id' ORDER BY i), (array_agg((e->>'receipt_time')::bigint ORDER BY i))[1]
    INTO v_ids, v_first_time
    FROM json_array_elements(p_rows) WITH ORDINALITY AS x(e, i);
  IF v_ids IS NULL THEN RETURN '{}'; END IF;
  WITH u AS (
    UPDATE mempool_txs m SET pruned = false, status = 'pending', replaced_by_tx_id = NULL,
      receipt_block_height = p_tip, receipt_time = v_first_time
    WHERE m.tx_id = ANY(v_ids) AND m.pruned
      AND NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical)
    RETURNING m.tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_revived FROM u;
  WITH ins AS (
    INSERT INTO mempool_txs (tx_id, raw_tx, tx_type, nonce, fee_rate, sender_address, sponsor_address, sponsored,
      token_transfer_recipient, token_transfer_amount, contract_call_contract_id, smart_contract_contract_id, byte_size,
      api, receipt_time, receipt_block_height, status, pruned, replaced_by_tx_id, seq)
    SELECT r.tx_id, r.raw_tx, r.tx_type, r.nonce, r.fee_rate, r.sender_address, r.sponsor_address, r.sponsored,
      r.token_transfer_recipient, r.token_transfer_amount, r.contract_call_contract_id, r.smart_contract_contract_id,
      r.byte_size, r.api, r.receipt_time, p_tip, 'pending', false, NULL, p_seq
    FROM json_populate_recordset(NULL::mempool_txs, p_rows) r
    ON CONFLICT (tx_id) DO NOTHING
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_inserted FROM ins;
  UPDATE mempool_txs m SET pruned = true
    WHERE m.tx_id = ANY(v_ids) AND m.pruned IS NOT TRUE
      AND EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical);
  PERFORM mempool_replace_by_fee(v_revived || v_inserted, true);
  -- in the order they came
  RETURN ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i) WHERE x = ANY(v_revived || v_inserted) ORDER BY i);
END
$$;

-- mempool_prune(p_ids) then mempool_replace_by_fee(p_ids, false), in one UPDATE (see 2. above). For the txs of a
-- block that is stored canonical; the caller holds the mempool lock.
CREATE OR REPLACE FUNCTION mempool_mined(p_ids text[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_group text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN; END IF;
  v_group := mempool_same_nonce(p_ids);
  WITH src AS (
    SELECT DISTINCT CASE WHEN t.sponsored THEN t.sponsor_address ELSE t.sender_address END AS address, t.nonce
    FROM txs t WHERE t.tx_id = ANY(p_ids)
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
  ), target AS (
    -- prune's group, each row with its replace-by-fee winner when it loses (losers are in the group; joined in full all the same)
    SELECT COALESCE(g.tx_id, l.tx_id) AS tx_id, l.winner, l.tx_id IS NOT NULL AS loses
    FROM unnest(v_group) AS g(tx_id) FULL JOIN loser l ON l.tx_id = g.tx_id
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

-- sql/0070's one-statement block path, with mempool_mined (same arguments, same answer).
CREATE OR REPLACE FUNCTION project_block_fast(
  p_event_id bigint,
  p_block json, p_txs json, p_events json, p_pox json, p_rewards json, p_microblocks json,
  p_tx_ids text[], p_pox_v1 bigint, p_pox_v2 bigint, p_pox_v3 bigint, p_outbox boolean
) RETURNS json LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_hash   text   := p_block->>'index_block_hash';
  v_parent text   := p_block->>'parent_index_block_hash';
  v_height bigint := (p_block->>'block_height')::bigint;
  v_tip_hash text;
  v_tip_height bigint;
  v_seq bigint;
  v_tip_nakamoto boolean;
  v_gc text[];
  b_block blocks;
  b_tx txs;
  b_mb microblocks;
BEGIN
  IF v_height IS NULL OR v_height <= 1 THEN RETURN NULL; END IF;
  SELECT index_block_hash, block_height, signer_bitvec IS NOT NULL INTO v_tip_hash, v_tip_height, v_tip_nakamoto
    FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1;
  IF v_tip_hash IS DISTINCT FROM v_parent OR v_height <= v_tip_height THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM blocks WHERE index_block_hash = v_hash)
     OR EXISTS (SELECT 1 FROM microblocks WHERE parent_index_block_hash = v_parent AND index_block_hash = '') THEN
    RETURN NULL;
  END IF;
  v_seq := nextval('change_seq');

  b_block.canonical := true;
  b_block.seq := v_seq;
  INSERT INTO blocks SELECT * FROM json_populate_record(b_block, p_block);
  b_tx.seq := v_seq;
  INSERT INTO txs SELECT * FROM json_populate_recordset(b_tx, p_txs) ON CONFLICT DO NOTHING;
  INSERT INTO events SELECT * FROM json_populate_recordset(NULL::events, p_events) ON CONFLICT DO NOTHING;
  INSERT INTO pox_events (value_md5, name, stacker, locked, balance, burnchain_unlock_height, pox_addr_raw)
    SELECT md5(r.value_hex), r.name, r.stacker, r.locked, r.balance, r.burnchain_unlock_height, r.pox_addr_raw
    FROM json_to_recordset(p_pox) AS r(value_hex text, name text, stacker text, locked numeric, balance numeric,
      burnchain_unlock_height bigint, pox_addr_raw text)
    ON CONFLICT (value_md5) DO NOTHING;
  INSERT INTO miner_rewards SELECT * FROM json_populate_recordset(NULL::miner_rewards, p_rewards) ON CONFLICT DO NOTHING;
  b_mb.seq := v_seq;
  INSERT INTO microblocks SELECT * FROM json_populate_recordset(b_mb, p_microblocks) ON CONFLICT DO NOTHING;
  PERFORM stx_totals_apply(ARRAY[v_hash], 1);
  INSERT INTO chain_state (id, pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height)
    VALUES (1, p_pox_v1, p_pox_v2, p_pox_v3)
    ON CONFLICT (id) DO UPDATE SET pox_v1_unlock_height = EXCLUDED.pox_v1_unlock_height,
      pox_v2_unlock_height = EXCLUDED.pox_v2_unlock_height, pox_v3_unlock_height = EXCLUDED.pox_v3_unlock_height
    WHERE (chain_state.pox_v1_unlock_height, chain_state.pox_v2_unlock_height, chain_state.pox_v3_unlock_height)
      IS DISTINCT FROM (EXCLUDED.pox_v1_unlock_height, EXCLUDED.pox_v2_unlock_height, EXCLUDED.pox_v3_unlock_height);

  PERFORM tip_burn_height_set((p_block->>'burn_block_height')::bigint);

  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
  PERFORM mempool_mined(p_tx_ids); -- prune, then replace-by-fee (garbage collection touches none of their rows)
  v_gc := mempool_garbage_collect(v_tip_height, v_tip_nakamoto);

  IF p_outbox THEN
    PERFORM push_outbox_record(p_event_id, 'block', v_hash, v_gc);
  END IF;
  RETURN json_build_object('id', p_event_id, 'tx_ids', v_gc);
END
$$;
