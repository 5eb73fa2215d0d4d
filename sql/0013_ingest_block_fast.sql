-- Ingest speed: the common block message in ONE statement, so ONE round trip and an implicit transaction
-- (no BEGIN / read / write / COMMIT exchange with the server). src/store/ingest.ts calls it first for every block.
--
-- The common case is a new block on the canonical tip: its parent is the tip, it is higher, it is neither stored nor
-- logged, height > 1 (no boot-block adoption) and the parent has no streamed (unconfirmed) microblocks to adopt or
-- orphan. Then every row follows from the message alone. The function checks exactly that first and returns NULL,
-- having written nothing, when any of it does not hold; the caller then runs the general transaction (reorgs,
-- duplicates, microblock streams, the first blocks), which makes the same decisions.
--
-- The writes are those of the general path, in the same order: raw message, block, txs, events, PoX events, miner
-- rewards, confirmed microblocks (from the message), STX totals, chain_state, then, holding the mempool lock, the
-- mempool reconciliation of the block's txs (mined ones pruned, same sender+nonce replaced), then the push_outbox row.
-- Each statement of a volatile plpgsql function takes its own snapshot, so the mempool UPDATEs see the rows inserted
-- above and every mempool change committed before the lock was granted; plpgsql caches the plans per session.
--
-- Rows arrive as JSON without `canonical` (txs, events, microblocks, rewards: set in the JSON by the caller) and
-- without `seq`: json_populate_record[set] fills the keys a row lacks from its base record, which holds the seq.
-- The push_outbox row of a change stored in one statement (sql/0009_push_outbox.sql): the IngestResult of
-- src/store/ingest.ts as JSON, for a change with no reorg and no orphaned microblock txs.
CREATE OR REPLACE FUNCTION push_outbox_record(p_event_id bigint, p_kind text, p_canonical_block text, p_tx_ids text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO push_outbox (event_id, result) VALUES (p_event_id, jsonb_build_object(
    'applied', true, 'eventId', p_event_id, 'kind', p_kind,
    'orphanedBlocks', '[]'::jsonb, 'restoredBlocks', '[]'::jsonb, 'unconfirmedOrphans', '[]'::jsonb,
    'txIds', to_jsonb(p_tx_ids))
    || CASE WHEN p_canonical_block IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('canonicalBlock', p_canonical_block) END);
END
$$;

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
  v_mined text[];
  v_replaced text[];
  b_block blocks;
  b_tx txs;
  b_mb microblocks;
BEGIN
  IF v_height IS NULL OR v_height <= 1 THEN RETURN NULL; END IF;
  SELECT index_block_hash, block_height INTO v_tip_hash, v_tip_height
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

  IF cardinality(p_tx_ids) > 0 THEN
    PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
    WITH u AS (
      UPDATE mempool_txs m SET pruned = true
      WHERE m.tx_id = ANY(p_tx_ids) AND NOT m.pruned
        AND EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical)
      RETURNING m.tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_mined FROM u;
    WITH u AS (
      UPDATE mempool_txs m SET pruned = true, status = 'dropped_replace_by_fee', replaced_by_tx_id = t.tx_id
      FROM txs t
      WHERE t.tx_id = ANY(p_tx_ids) AND t.canonical AND t.microblock_canonical
        AND m.sender_address = t.sender_address AND m.nonce = t.nonce AND m.tx_id <> t.tx_id AND NOT m.pruned
      RETURNING m.tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_replaced FROM u;
  ELSE
    v_mined := '{}';
    v_replaced := '{}';
  END IF;

  IF p_outbox THEN
    PERFORM push_outbox_record(v_id, 'block', v_hash, v_mined || v_replaced);
  END IF;
  RETURN json_build_object('id', v_id, 'tx_ids', v_mined || v_replaced);
END
$$;
