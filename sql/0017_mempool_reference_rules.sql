-- The mempool table follows the reference's rules step by step (v8.13.6 pg-write-store.ts), so a tx's status
-- after replacements, drops, forks and re-mining is the reference's:
--   * mempool_prune (pruneMempoolTxs): txs mined by a canonical block or microblock leave the mempool together with
--     every mempool tx of the same payer (the sponsor when sponsored) and nonce: pruned, status kept, no replacement.
--   * mempool_replace_by_fee (updateReplacedByFeeStatusForTxIds): for each payer+nonce group of the given txs, the
--     winner is the newest canonically mined tx, else the highest-fee mempool tx; every other mempool tx of the group,
--     pruned or not, becomes dropped_replace_by_fee, replaced by the winner. Run for the txs of every stored block
--     (canonical or not) and for txs entering the mempool.
--   * mempool_restore (restoreMempoolTxs): txs orphaned by a reorg or a microblock fork come back as pending together
--     with the mempool txs of the same payer and nonce; those never seen in the mempool are inserted from their mined
--     row (receipt time = its burn block time, size = its raw result, as the reference does) through mempool_insert.
--   * mempool_insert (insertDbMempoolTxs): a known pruned tx that is not mined comes back as pending; a new one is
--     inserted; one already mined canonically is pruned at once; then replace-by-fee over what came in.
--   * mempool_garbage_collect (deleteGarbageCollectedMempoolTxs): at every stored block, txs received 256 blocks
--     before the previous tip (2,560 minutes once the tip is a Nakamoto block) become dropped_api_garbage_collect.
-- chain_state.tip_burn_block_height is the reference's chain_tip.burn_block_height: the burn height of the last
-- canonical block, raised by every /new_burn_block that is higher.

ALTER TABLE chain_state ADD COLUMN IF NOT EXISTS tip_burn_block_height bigint;
UPDATE chain_state SET tip_burn_block_height = (SELECT burn_block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1);
CREATE INDEX IF NOT EXISTS mempool_sponsor_nonce ON mempool_txs (sponsor_address, nonce);
CREATE INDEX IF NOT EXISTS mempool_receipt_height ON mempool_txs (receipt_block_height) WHERE NOT pruned;
-- replace-by-fee looks up the mined txs of a payer+nonce at every block (a miner's coinbase group included)
CREATE INDEX IF NOT EXISTS txs_sender_nonce ON txs (sender_address, nonce);
CREATE INDEX IF NOT EXISTS txs_sponsor_nonce ON txs (sponsor_address, nonce) WHERE sponsor_address IS NOT NULL;

CREATE OR REPLACE FUNCTION tip_burn_height_raise(p_height bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, p_height)
  ON CONFLICT (id) DO UPDATE SET tip_burn_block_height = GREATEST(chain_state.tip_burn_block_height, EXCLUDED.tip_burn_block_height)
$$;

CREATE OR REPLACE FUNCTION tip_burn_height_set(p_height bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, p_height)
  ON CONFLICT (id) DO UPDATE SET tip_burn_block_height = EXCLUDED.tip_burn_block_height
$$;

-- The given tx ids plus every mempool tx with the same payer (sponsor when sponsored) and nonce as one of them.
CREATE OR REPLACE FUNCTION mempool_same_nonce(p_ids text[]) RETURNS text[] LANGUAGE sql STABLE AS $$
  WITH src AS (
    SELECT DISTINCT CASE WHEN t.sponsored THEN COALESCE(t.sponsor_address, 'null') ELSE t.sender_address END AS address, t.nonce
    FROM txs t WHERE t.tx_id = ANY(p_ids)
  ), hit AS (
    SELECT m.tx_id FROM mempool_txs m JOIN src s ON m.nonce = s.nonce AND m.sender_address = s.address
    UNION SELECT m.tx_id FROM mempool_txs m JOIN src s ON m.nonce = s.nonce AND m.sponsor_address = s.address
    UNION SELECT unnest(p_ids)
  )
  SELECT COALESCE(array_agg(tx_id), '{}') FROM hit
$$;

CREATE OR REPLACE FUNCTION mempool_prune(p_ids text[]) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE v text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  WITH u AS (
    UPDATE mempool_txs SET pruned = true, replaced_by_tx_id = NULL
    WHERE NOT pruned AND tx_id = ANY(mempool_same_nonce(p_ids))
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

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
    FROM mempool_txs m JOIN src g ON m.nonce = g.nonce AND (m.sponsor_address = g.address OR m.sender_address = g.address)
  ), mined AS (
    SELECT DISTINCT ON (g.address, g.nonce) t.tx_id, g.address, g.nonce
    FROM txs t JOIN src g ON t.nonce = g.nonce AND (t.sponsor_address = g.address OR t.sender_address = g.address)
    WHERE t.canonical AND t.microblock_canonical
    ORDER BY g.address, g.nonce, t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC
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

-- p_rows: mempool_txs rows as JSON (without receipt_block_height, status, pruned, replaced_by_tx_id, seq), in the
-- order they came. Returns the revived and the inserted tx ids (those the reference announces).
CREATE OR REPLACE FUNCTION mempool_insert(p_rows json, p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql AS $$
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
    WHERE m.tx_id = ANY(v_ids) AND NOT m.pruned
      AND EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical);
  PERFORM mempool_replace_by_fee(v_revived || v_inserted, true);
  -- in the order they came
  RETURN ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i) WHERE x = ANY(v_revived || v_inserted) ORDER BY i);
END
$$;

-- Returns the restored tx ids and those it had to insert (the reference's restoredTxs).
CREATE OR REPLACE FUNCTION mempool_restore(p_ids text[], p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_restored text[];
  v_need text[];
  v_rows json;
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  WITH u AS (
    UPDATE mempool_txs SET pruned = false, status = 'pending', replaced_by_tx_id = NULL
    WHERE pruned AND tx_id = ANY(mempool_same_nonce(p_ids))
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

CREATE OR REPLACE FUNCTION mempool_garbage_collect(p_tip_height bigint, p_nakamoto boolean) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE v text[];
BEGIN
  WITH u AS (
    UPDATE mempool_txs SET pruned = true, status = 'dropped_api_garbage_collect'
    WHERE NOT pruned AND CASE WHEN p_nakamoto
      THEN receipt_time <= EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - INTERVAL '2560 minutes'))::bigint
      ELSE receipt_block_height <= p_tip_height - 256 END
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

-- /new_mempool_tx: the raw message, then mempool_insert (the reference's insertDbMempoolTxs), then the push_outbox row.
CREATE OR REPLACE FUNCTION ingest_mempool(p_path text, p_sha text, p_body text, p_txs json, p_outbox boolean)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_id  bigint;
  v_seq bigint;
  v_ids text[];
  v_new text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
  INSERT INTO event_log (path, body_sha256, body) VALUES (p_path, p_sha, p_body)
    ON CONFLICT (path, body_sha256) DO NOTHING
    RETURNING id, nextval('change_seq')::bigint INTO v_id, v_seq;
  IF v_id IS NULL THEN
    RETURN json_build_object('id', NULL, 'tx_ids', '{}'::text[]);
  END IF;
  v_ids := mempool_insert(p_txs, COALESCE((SELECT max(block_height) FROM blocks WHERE canonical), 0), v_seq);
  -- the txs seen for the first time (the others were revived): the reference announces those to the mempool room
  v_new := ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i)
    WHERE EXISTS (SELECT 1 FROM mempool_txs m WHERE m.tx_id = u.x AND m.seq = v_seq) ORDER BY i);
  IF p_outbox THEN
    PERFORM push_outbox_record(v_id, 'mempool', NULL, v_ids);
    UPDATE push_outbox SET result = result || jsonb_build_object('newMempoolTxs', to_jsonb(v_new)) WHERE event_id = v_id;
  END IF;
  RETURN json_build_object('id', v_id, 'tx_ids', v_ids, 'new_tx_ids', v_new);
END
$$;

-- The one-statement block path (sql/0013_ingest_block_fast.sql) with the reference's mempool rules above (prune the
-- mined txs with their payer+nonce group, garbage-collect, replace-by-fee) and the tip's burn height. Its tx_ids: the
-- garbage-collected txs (the block's own txs are known to the caller).
CREATE OR REPLACE FUNCTION ingest_block_fast(
  p_path text, p_sha text, p_body text,
  p_block json, p_txs json, p_events json, p_pox json, p_rewards json, p_microblocks json,
  p_tx_ids text[], p_pox_v1 bigint, p_pox_v2 bigint, p_pox_v3 bigint, p_outbox boolean
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_hash   text   := p_block->>'index_block_hash';
  v_parent text   := p_block->>'parent_index_block_hash';
  v_height bigint := (p_block->>'block_height')::bigint;
  v_tip_hash text;
  v_tip_height bigint;
  v_id  bigint;
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
     OR EXISTS (SELECT 1 FROM microblocks WHERE parent_index_block_hash = v_parent AND index_block_hash = '')
     OR EXISTS (SELECT 1 FROM event_log WHERE path = p_path AND body_sha256 = p_sha) THEN
    RETURN NULL;
  END IF;

  INSERT INTO event_log (path, body_sha256, body) VALUES (p_path, p_sha, p_body)
    ON CONFLICT (path, body_sha256) DO NOTHING
    RETURNING id, nextval('change_seq')::bigint INTO v_id, v_seq;
  IF v_id IS NULL THEN RETURN NULL; END IF;

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

  -- the mempool, as the reference does for a canonical block (sql/0017_mempool_reference_rules.sql)
  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
  PERFORM mempool_prune(p_tx_ids);
  v_gc := mempool_garbage_collect(v_tip_height, v_tip_nakamoto);
  PERFORM mempool_replace_by_fee(p_tx_ids, false);

  IF p_outbox THEN
    PERFORM push_outbox_record(v_id, 'block', v_hash, v_gc);
  END IF;
  RETURN json_build_object('id', v_id, 'tx_ids', v_gc);
END
$$;
