-- Ingest statements that slowed down as the chain grew (found by pg_stat_statements on the 100,000-block
-- generated chain, at 25,000 blocks, against the 1,000-block one). Same rows written; each now reads only what it
-- needs.

-- A new burn block retires the slot holders at or above its height (and those of the same hash): the OR kept the
-- planner from using either half's index, so every burn block scanned the table (0.2 ms per burn block at 1,000
-- blocks, 1.4 ms at 25,000). Two UPDATEs, each on its own index; a row matching both is updated by the first.
CREATE INDEX IF NOT EXISTS reward_slot_holders_hash ON reward_slot_holders (burn_block_hash) WHERE canonical;
CREATE OR REPLACE FUNCTION burnchain_rewards_on_burn_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO burnchain_rewards (canonical, burn_block_hash, burn_block_height, burn_amount, reward_recipient,
    reward_amount, reward_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, NEW.burn_amount, r.value ->> 'recipient',
    (r.value ->> 'amt')::numeric, (r.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_recipients) WITH ORDINALITY r;

  UPDATE reward_slot_holders SET canonical = false WHERE canonical AND burn_block_height >= NEW.burn_block_height;
  UPDATE reward_slot_holders SET canonical = false WHERE canonical AND burn_block_hash = NEW.burn_block_hash;
  INSERT INTO reward_slot_holders (canonical, burn_block_hash, burn_block_height, address, slot_index)
  SELECT true, NEW.burn_block_hash, NEW.burn_block_height, s.value #>> '{}', (s.ordinality - 1)::integer
  FROM json_array_elements(NEW.reward_slot_holders) WITH ORDINALITY s;
  RETURN NULL;
END
$$;

-- The mempool garbage collection chose its condition with a CASE, so no index applied and every block scanned the
-- whole pending mempool: one statement per case, each on its index (mempool_pending, mempool_receipt_height).
CREATE OR REPLACE FUNCTION mempool_garbage_collect(p_tip_height bigint, p_nakamoto boolean) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE v text[];
BEGIN
  IF p_nakamoto THEN
    WITH u AS (
      UPDATE mempool_txs SET pruned = true, status = 'dropped_api_garbage_collect'
      WHERE NOT pruned AND receipt_time <= EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - INTERVAL '2560 minutes'))::bigint
      RETURNING tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  ELSE
    WITH u AS (
      UPDATE mempool_txs SET pruned = true, status = 'dropped_api_garbage_collect'
      WHERE NOT pruned AND receipt_block_height <= p_tip_height - 256
      RETURNING tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  END IF;
  RETURN v;
END
$$;

-- mempool_restore (a reorg returns the orphaned txs to the mempool) called the STABLE mempool_same_nonce() inside its
-- UPDATE's WHERE, evaluated again for each pruned row the scan looked at (sql/0071 fixed the same in mempool_prune):
-- 4.5 ms per orphaned block at 1,000 blocks, 34 ms at 25,000. Computed once now.
CREATE OR REPLACE FUNCTION mempool_restore(p_ids text[], p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_restored text[];
  v_need text[];
  v_rows json;
  v_group text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  v_group := mempool_same_nonce(p_ids);
  WITH u AS (
    UPDATE mempool_txs SET pruned = false, status = 'pending', replaced_by_tx_id = NULL
    WHERE pruned AND tx_id = ANY(v_group)
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_restored FROM u;
  v_need := ARRAY(SELECT DISTINCT x FROM unnest(p_ids) x WHERE x <> ALL(v_restored) ORDER BY x);
  IF cardinality(v_need) > 0 THEN
    SELECT json_agg(row_to_json(o) ORDER BY o.tx_id) INTO v_rows FROM (
      SELECT DISTINCT ON (t.tx_id) t.tx_id, t.raw_tx, t.tx_type, t.nonce, t.fee_rate, t.sender_address, t.sponsor_address,
        t.sponsored, t.token_transfer_recipient, t.token_transfer_amount, t.contract_call_contract_id,
        t.smart_contract_contract_id, (length(t.raw_result) - 2) / 2 AS byte_size, t.api, t.burn_block_time AS receipt_time
      FROM txs t WHERE t.tx_id = ANY(v_need)
      ORDER BY t.tx_id, t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC
    ) o;
    IF v_rows IS NOT NULL THEN PERFORM mempool_insert(v_rows, p_tip, p_seq); END IF;
  END IF;
  RETURN v_restored || v_need;
END
$$;

-- An anchored block adopting its confirmed microblocks' events looked them up among all unanchored events (those of
-- every orphaned microblock stay unanchored): 0.3 ms per block at 1,000 blocks, 3.1 ms at 25,000.
CREATE INDEX IF NOT EXISTS events_unanchored_microblock ON events (microblock_hash) WHERE index_block_hash = '';

-- Plans. The ingest functions run the same statements with new values thousands of times; with the default plan cache
-- mode the planner re-plans their larger statements (the mempool rules, the derived appliers) on almost every call,
-- which costs more than running them (the 1,000-block generated chain: 14.4 s → 11.0 s to import with generic
-- plans). A generic plan is right for statements that look rows up by equality (hashes, ids, addresses and nonces)
-- or take the newest row below a height (ORDER BY … LIMIT 1), which is all these functions and what they call do. It
-- is wrong for a range condition alone (`height >= $1`: the generic plan assumes a third of the table and scans it),
-- so the two functions built on one keep re-planning for each call (set explicitly: a function's SET applies to the
-- functions it calls).
ALTER FUNCTION project_block_fast(bigint, json, json, json, json, json, json, text[], bigint, bigint, bigint, boolean)
  SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION project_mempool(bigint, json, boolean) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION project_drop_mempool(bigint, text[], text, text, boolean) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION derived_apply(text[], integer) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION derived_flush() SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION mempool_insert(json, bigint, bigint) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION mempool_prune(text[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION mempool_replace_by_fee(text[], boolean) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION mempool_restore(text[], bigint, bigint) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION mempool_garbage_collect(bigint, boolean) SET plan_cache_mode = auto;
ALTER FUNCTION burnchain_rewards_on_burn_block() SET plan_cache_mode = auto;
