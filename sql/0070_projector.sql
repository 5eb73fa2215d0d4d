-- Ingestion in two steps: the observer's 200 means "durably appended to event_log"; a projector applies
-- the log to every derived table in id order, exactly once (src/observer/projector.ts).
--
-- projector_state.applied_id is the id of the last message applied; it is updated in the same transaction as the rows
-- that message produced, so a crash or a restart resumes right after it. A database upgraded from the one-transaction
-- ingest had applied every logged message: it starts at the newest id.
CREATE TABLE IF NOT EXISTS projector_state (
  id            integer     PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  applied_id    bigint      NOT NULL DEFAULT 0,
  applied_at    timestamptz,
  -- the message the projector could not apply (NULL while it is healthy), why, and when it last tried
  failed_id     bigint,
  failed_reason text,
  failed_at     timestamptz
);
INSERT INTO projector_state (id, applied_id) SELECT 1, COALESCE(max(id), 0) FROM event_log ON CONFLICT (id) DO NOTHING;

-- The derived writes of the one-statement paths now take the logged message's id instead of logging it themselves
-- (same rows, same order as sql/0017: only the event_log INSERT and its duplicate check moved to the observer).
DROP FUNCTION IF EXISTS ingest_block_fast(text, text, text, json, json, json, json, json, json, text[], bigint, bigint, bigint, boolean);
DROP FUNCTION IF EXISTS ingest_mempool(text, text, text, json, boolean);
DROP FUNCTION IF EXISTS drop_mempool(text, text, text, text[], text, text, boolean);

-- A new block on the canonical tip (see sql/0013 for the conditions): NULL, having written nothing, otherwise.
CREATE OR REPLACE FUNCTION project_block_fast(
  p_event_id bigint,
  p_block json, p_txs json, p_events json, p_pox json, p_rewards json, p_microblocks json,
  p_tx_ids text[], p_pox_v1 bigint, p_pox_v2 bigint, p_pox_v3 bigint, p_outbox boolean
) RETURNS json LANGUAGE plpgsql AS $$
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
  PERFORM mempool_prune(p_tx_ids);
  v_gc := mempool_garbage_collect(v_tip_height, v_tip_nakamoto);
  PERFORM mempool_replace_by_fee(p_tx_ids, false);

  IF p_outbox THEN
    PERFORM push_outbox_record(p_event_id, 'block', v_hash, v_gc);
  END IF;
  RETURN json_build_object('id', p_event_id, 'tx_ids', v_gc);
END
$$;

-- /new_mempool_tx: mempool_insert (the reference's insertDbMempoolTxs), then the push_outbox row.
CREATE OR REPLACE FUNCTION project_mempool(p_event_id bigint, p_txs json, p_outbox boolean)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint := nextval('change_seq');
  v_ids text[];
  v_new text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
  v_ids := mempool_insert(p_txs, COALESCE((SELECT max(block_height) FROM blocks WHERE canonical), 0), v_seq);
  -- the txs seen for the first time (the others were revived): the reference announces those to the mempool room
  v_new := ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i)
    WHERE EXISTS (SELECT 1 FROM mempool_txs m WHERE m.tx_id = u.x AND m.seq = v_seq) ORDER BY i);
  IF p_outbox THEN
    PERFORM push_outbox_record(p_event_id, 'mempool', NULL, v_ids);
    UPDATE push_outbox SET result = result || jsonb_build_object('newMempoolTxs', to_jsonb(v_new)) WHERE event_id = p_event_id;
  END IF;
  RETURN json_build_object('id', p_event_id, 'tx_ids', v_ids, 'new_tx_ids', v_new);
END
$$;

-- /drop_mempool_tx: the dropped txs (status from the reason, replaced_by when the node names the replacement) and the
-- push_outbox row.
CREATE OR REPLACE FUNCTION project_drop_mempool(p_event_id bigint, p_tx_ids text[], p_status text, p_replaced_by text,
  p_outbox boolean)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_ids text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609);
  WITH upd AS (
    UPDATE mempool_txs SET pruned = true, status = p_status, replaced_by_tx_id = p_replaced_by
    WHERE tx_id = ANY(p_tx_ids) AND NOT pruned
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_ids FROM upd;
  IF p_outbox THEN
    PERFORM push_outbox_record(p_event_id, 'drop_mempool', NULL, v_ids);
  END IF;
  RETURN json_build_object('id', p_event_id, 'tx_ids', v_ids);
END
$$;

-- The chain version the API's ETags and in-memory cache follow (sql/0007_cache.sql) moves with the projection, not with
-- the acknowledgement: bumped once per projector transaction, at its COMMIT, so a reader that sees version V sees every
-- row V's transaction applied (bumping at the append would let an API cache an old answer under the new version).
DROP TRIGGER IF EXISTS event_log_cache_version ON event_log;
DROP TRIGGER IF EXISTS projector_cache_version ON projector_state;
CREATE CONSTRAINT TRIGGER projector_cache_version
  AFTER UPDATE ON projector_state
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION cache_version_bump();

-- PoX cycles and signer sets of a block's reward set (sql/0031_pox_cycles.sql) are derived by the projector too
-- (src/store/ingest.ts calls pox_cycles_from_block), not by a trigger on the log.
DROP TRIGGER IF EXISTS event_log_pox_cycles ON event_log;
DROP FUNCTION IF EXISTS pox_cycles_on_event_log();
