-- Ingest speed: mempool messages as functions called with bound parameters (one round trip, one implicit
-- transaction, plans cached per session by plpgsql) instead of a simple-protocol query that inlined the whole message
-- as literals and was parsed and planned anew every time. Same statements as before (src/store/ingest.ts):
-- the mempool lock first; each later statement takes its snapshot after the lock is granted, so it sees every block
-- committed before. Each returns the event_log id of the message (NULL for a duplicate) and the tx ids it changed.

-- /new_mempool_tx: the raw message, the new pending txs (a tx already mined on the canonical chain does not return to
-- the mempool) and, when a push publisher asks for it, the push_outbox row.
CREATE OR REPLACE FUNCTION ingest_mempool(p_path text, p_sha text, p_body text, p_txs json, p_outbox boolean)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_id  bigint;
  v_seq bigint;
  v_ids text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest.ts
  INSERT INTO event_log (path, body_sha256, body) VALUES (p_path, p_sha, p_body)
    ON CONFLICT (path, body_sha256) DO NOTHING
    RETURNING id, nextval('change_seq')::bigint INTO v_id, v_seq;
  IF v_id IS NULL THEN
    RETURN json_build_object('id', NULL, 'tx_ids', '{}'::text[]);
  END IF;
  WITH ins AS (
    INSERT INTO mempool_txs (tx_id, raw_tx, tx_type, nonce, fee_rate, sender_address, sponsor_address, sponsored,
      token_transfer_recipient, token_transfer_amount, contract_call_contract_id, smart_contract_contract_id, byte_size,
      api, receipt_time, receipt_block_height, status, pruned, replaced_by_tx_id, seq)
    SELECT r.tx_id, r.raw_tx, r.tx_type, r.nonce, r.fee_rate, r.sender_address, r.sponsor_address, r.sponsored,
      r.token_transfer_recipient, r.token_transfer_amount, r.contract_call_contract_id, r.smart_contract_contract_id,
      r.byte_size, r.api, r.receipt_time, COALESCE((SELECT max(block_height) FROM blocks WHERE canonical), 0),
      'pending', false, NULL, v_seq
    FROM json_populate_recordset(NULL::mempool_txs, p_txs) r
    WHERE NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = r.tx_id AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> '')
    ON CONFLICT (tx_id) DO NOTHING
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_ids FROM ins;
  IF p_outbox THEN
    PERFORM push_outbox_record(v_id, 'mempool', NULL, v_ids);
  END IF;
  RETURN json_build_object('id', v_id, 'tx_ids', v_ids);
END
$$;

-- /drop_mempool_tx: the raw message, the dropped txs (status from the reason, replaced_by when the node names the
-- replacement) and the push_outbox row.
CREATE OR REPLACE FUNCTION drop_mempool(p_path text, p_sha text, p_body text, p_tx_ids text[], p_status text,
  p_replaced_by text, p_outbox boolean)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_id  bigint;
  v_ids text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609);
  INSERT INTO event_log (path, body_sha256, body) VALUES (p_path, p_sha, p_body)
    ON CONFLICT (path, body_sha256) DO NOTHING
    RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    RETURN json_build_object('id', NULL, 'tx_ids', '{}'::text[]);
  END IF;
  WITH upd AS (
    UPDATE mempool_txs SET pruned = true, status = p_status, replaced_by_tx_id = p_replaced_by
    WHERE tx_id = ANY(p_tx_ids) AND NOT pruned
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v_ids FROM upd;
  IF p_outbox THEN
    PERFORM push_outbox_record(v_id, 'drop_mempool', NULL, v_ids);
  END IF;
  RETURN json_build_object('id', v_id, 'tx_ids', v_ids);
END
$$;
