-- The projector's one-statement paths (src/projector/projector.ts, src/store/ingest/): the observer's 200 means the
-- message is durably in event_log; the projector applies the log to the tables in id order, exactly once
-- (sql/0070_projector.sql). These functions write what the general path writes for the common messages, in one
-- round trip each, and take the logged message's id.
--
-- Plans. The ingest functions run the same statements with new values thousands of times; with the default plan cache
-- mode the planner re-plans their larger statements (the mempool rules, the derived appliers) on almost every call,
-- which costs more than running them (the 1,000-block generated chain: 14.4 s → 11.0 s to import with generic plans).
-- A generic plan (`SET plan_cache_mode = force_generic_plan`) is right for statements that look rows up by equality
-- (hashes, ids, addresses and nonces) or take the newest row below a height (ORDER BY … LIMIT 1), which is all these
-- functions and what they call do. It is wrong for a range condition alone (`height >= $1`: the generic plan assumes a
-- third of the table and scans it), so the functions built on one (mempool_garbage_collect,
-- burnchain_rewards_on_burn_block) say `plan_cache_mode = auto` explicitly: a function's SET applies to the functions
-- it calls.

-- The chain version the API's ETags and in-memory cache follow (cache_version, sql/0007_cache.sql), bumped by a
-- DEFERRED constraint trigger on projector_state once per projector transaction, at its COMMIT: a reader that sees
-- version V sees every row V's transaction applied (a sequence's last_value moves at nextval() time, long before the
-- commit), whatever process wrote, and the row lock is held only for the last instant of the transaction.
CREATE OR REPLACE FUNCTION cache_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- once per transaction, however many messages it stored (bulk imports)
  IF current_setting('stacks_pulse.cache_version_bumped', true) = 'yes' THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('stacks_pulse.cache_version_bumped', 'yes', true);
  UPDATE cache_version SET version = version + 1 WHERE id = 1;
  RETURN NULL;
END
$$;

-- The push_outbox row of a change stored in one statement (sql/0009_push_outbox.sql): the IngestResult of
-- src/store/ingest/result.ts as JSON, for a change with no reorg and no orphaned microblock txs.
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

-- A canonical block adopts streamed (unconfirmed) microblocks it confirms: their txs, events and microblock rows move
-- into it. Both block paths call it (project_block_fast, and the general one in src/store/ingest/block.ts).
--
-- The txs are found by microblock hash (txs_microblock) and their events by tx id (events' primary key), never through
-- a partial index on `index_block_hash = ''`: every adoption leaves a dead entry there for each row it moves, until a
-- VACUUM, and a generic plan of `index_block_hash = '' AND microblock_hash = ANY(…)` chose one of those indexes
-- (they all look empty to the planner) and read every entry, dead ones included: 830 on average per adoption over an
-- 8,000-block generated chain, growing with the chain. `length(index_block_hash) = 0` says the same thing without
-- matching those indexes' predicate.
CREATE OR REPLACE FUNCTION microblocks_adopt(p_index_block_hash text, p_block_hash text, p_burn_block_time bigint,
  p_burn_block_height bigint, p_microblocks text[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_tx text[];
  v_mb text[];
BEGIN
  WITH u AS (
    UPDATE txs SET index_block_hash = p_index_block_hash, block_hash = p_block_hash,
      burn_block_time = p_burn_block_time, burn_block_height = p_burn_block_height,
      canonical = true, microblock_canonical = true
    WHERE microblock_hash = ANY(p_microblocks) AND length(index_block_hash) = 0
    RETURNING tx_id, microblock_hash
  ) SELECT COALESCE(array_agg(u.tx_id), '{}'), COALESCE(array_agg(u.microblock_hash), '{}') INTO v_tx, v_mb FROM u;
  UPDATE events e SET index_block_hash = p_index_block_hash, canonical = true, microblock_canonical = true
  FROM unnest(v_tx, v_mb) AS k(tx_id, microblock_hash)
  WHERE e.tx_id = k.tx_id AND e.microblock_hash = k.microblock_hash AND length(e.index_block_hash) = 0;
  UPDATE microblocks SET index_block_hash = p_index_block_hash, block_hash = p_block_hash, canonical = true,
    microblock_canonical = true
  WHERE index_block_hash = '' AND microblock_hash = ANY(p_microblocks);
END
$$;

-- The common block message in ONE statement: a new block on the canonical tip, whose parent is the tip, which is
-- higher, not yet stored, height > 1 (no boot-block adoption), and which orphans none of its parent's streamed
-- (unconfirmed) microblocks. Then every row follows from the message and the parent's stream. The function checks
-- exactly that first and returns NULL, having written nothing, when any of it does not hold; the caller then runs the
-- general transaction (reorgs, duplicates, microblock forks, the first blocks), which makes the same decisions.
--
-- The parent's stream: the general path (src/store/ingest/block.ts) accepts the streamed microblocks that the
-- message names and the chain of streamed microblocks that ends at the block's parent_microblock_hash, and orphans the
-- others (a microblock fork, left to it). When it orphans none, it adopts every streamed microblock: their stored txs,
-- events and microblock rows move into the block (microblocks_adopt, as on the general path), and the message's rows of
-- those microblocks are not inserted again.
--
-- The writes are those of the general path, in the same order: block, adopted microblocks, txs, events, PoX events,
-- miner rewards, confirmed microblocks (from the message), the derived tables, chain_state, then, holding the mempool
-- lock, the mempool reconciliation of the block's txs (mempool_mined, then the garbage collection), then the
-- push_outbox row. A block that adopts a stream orphans no microblock tx, so no tx returns to the mempool.
-- Each statement of a volatile plpgsql function takes its own snapshot, so the mempool UPDATEs see the rows inserted
-- above and every mempool change committed before the lock was granted.
--
-- Rows arrive as JSON without `canonical` (txs, events, microblocks, rewards: set in the JSON by the caller) and
-- without `seq`: json_populate_record[set] fills the keys a row lacks from its base record, which holds the seq.
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
  v_streamed text[];
  b_block blocks;
  b_tx txs;
  b_mb microblocks;
BEGIN
  IF v_height IS NULL OR v_height <= 1 THEN RETURN NULL; END IF;
  SELECT index_block_hash, block_height, signer_bitvec IS NOT NULL INTO v_tip_hash, v_tip_height, v_tip_nakamoto
    FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1;
  IF v_tip_hash IS DISTINCT FROM v_parent OR v_height <= v_tip_height THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM blocks WHERE index_block_hash = v_hash) THEN RETURN NULL; END IF;
  v_streamed := ARRAY(SELECT m.microblock_hash FROM microblocks m WHERE m.parent_index_block_hash = v_parent AND m.index_block_hash = '');
  IF cardinality(v_streamed) > 0 AND EXISTS (
    SELECT unnest(v_streamed)
    EXCEPT (
      WITH RECURSIVE chain(h) AS (
        SELECT p_block->>'parent_microblock_hash'
        UNION
        SELECT m.microblock_parent_hash FROM chain c
        JOIN microblocks m ON m.microblock_hash = c.h AND m.index_block_hash = '' AND m.parent_index_block_hash = v_parent
      )
      SELECT c.h FROM chain c
      UNION SELECT r->>'microblock_hash' FROM json_array_elements(p_microblocks) r
    )
  ) THEN
    RETURN NULL; -- a microblock fork: the general path orphans the stream's other branch
  END IF;
  v_seq := nextval('change_seq');

  b_block.canonical := true;
  b_block.seq := v_seq;
  INSERT INTO blocks SELECT * FROM json_populate_record(b_block, p_block);
  IF cardinality(v_streamed) > 0 THEN
    PERFORM microblocks_adopt(v_hash, p_block->>'block_hash', (p_block->>'burn_block_time')::bigint,
      (p_block->>'burn_block_height')::bigint, v_streamed);
  END IF;
  b_tx.seq := v_seq;
  INSERT INTO txs SELECT * FROM json_populate_recordset(b_tx, p_txs) r
    WHERE NOT COALESCE(r.microblock_hash = ANY(v_streamed), false) ON CONFLICT DO NOTHING;
  INSERT INTO events SELECT * FROM json_populate_recordset(NULL::events, p_events) r
    WHERE NOT COALESCE(r.microblock_hash = ANY(v_streamed), false) ON CONFLICT DO NOTHING;
  INSERT INTO pox_events (value_md5, name, stacker, locked, balance, burnchain_unlock_height, pox_addr_raw)
    SELECT md5(r.value_hex), r.name, r.stacker, r.locked, r.balance, r.burnchain_unlock_height, r.pox_addr_raw
    FROM json_to_recordset(p_pox) AS r(value_hex text, name text, stacker text, locked numeric, balance numeric,
      burnchain_unlock_height bigint, pox_addr_raw text)
    ON CONFLICT (value_md5) DO NOTHING;
  INSERT INTO miner_rewards SELECT * FROM json_populate_recordset(NULL::miner_rewards, p_rewards) ON CONFLICT DO NOTHING;
  b_mb.seq := v_seq;
  INSERT INTO microblocks SELECT * FROM json_populate_recordset(b_mb, p_microblocks) r
    WHERE NOT COALESCE(r.microblock_hash = ANY(v_streamed), false) ON CONFLICT DO NOTHING;
  PERFORM stx_totals_apply(ARRAY[v_hash], 1);
  INSERT INTO chain_state (id, pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height)
    VALUES (1, p_pox_v1, p_pox_v2, p_pox_v3)
    ON CONFLICT (id) DO UPDATE SET pox_v1_unlock_height = EXCLUDED.pox_v1_unlock_height,
      pox_v2_unlock_height = EXCLUDED.pox_v2_unlock_height, pox_v3_unlock_height = EXCLUDED.pox_v3_unlock_height
    WHERE (chain_state.pox_v1_unlock_height, chain_state.pox_v2_unlock_height, chain_state.pox_v3_unlock_height)
      IS DISTINCT FROM (EXCLUDED.pox_v1_unlock_height, EXCLUDED.pox_v2_unlock_height, EXCLUDED.pox_v3_unlock_height);

  PERFORM tip_burn_height_set((p_block->>'burn_block_height')::bigint);

  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest/rows.ts
  PERFORM mempool_mined(p_tx_ids); -- prune, then replace-by-fee (garbage collection touches none of their rows)
  v_gc := mempool_garbage_collect(v_tip_height, v_tip_nakamoto);

  IF p_outbox THEN
    PERFORM push_outbox_record(p_event_id, 'block', v_hash, v_gc);
  END IF;
  RETURN json_build_object('id', p_event_id, 'tx_ids', v_gc);
END
$$;

-- /new_mempool_tx: mempool_insert (the reference's insertDbMempoolTxs), then the push_outbox row. p_mined_next: see
-- mempool_insert_rows.
CREATE OR REPLACE FUNCTION project_mempool(p_event_id bigint, p_txs json, p_outbox boolean, p_mined_next text[] DEFAULT '{}')
RETURNS json LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_seq bigint := nextval('change_seq');
  v_ids text[];
  v_inserted text[];
  v_new text[];
BEGIN
  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest/rows.ts
  SELECT r.ids, r.inserted INTO v_ids, v_inserted
  FROM mempool_insert_rows(p_txs, COALESCE((SELECT max(block_height) FROM blocks WHERE canonical), 0), v_seq, p_mined_next) r;
  -- the txs seen for the first time (the others were revived): the reference announces those to the mempool room
  v_new := ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i) WHERE x = ANY(v_inserted) ORDER BY i);
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
RETURNS json LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
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

-- What project_microblocks returns (and, with p_outbox, records in push_outbox: the IngestResult of
-- src/store/ingest/result.ts as JSON).
CREATE OR REPLACE FUNCTION microblocks_result(p_event_id bigint, p_tx_ids text[], p_orphans text[], p_ignored text,
  p_outbox boolean) RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  IF p_outbox THEN
    INSERT INTO push_outbox (event_id, result) VALUES (p_event_id, jsonb_build_object(
      'applied', true, 'eventId', p_event_id, 'kind', 'microblocks',
      'orphanedBlocks', '[]'::jsonb, 'restoredBlocks', '[]'::jsonb,
      'txIds', to_jsonb(p_tx_ids), 'unconfirmedOrphans', to_jsonb(p_orphans))
      || CASE WHEN p_ignored IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('ignoredReason', p_ignored) END);
  END IF;
  RETURN json_build_object('tx_ids', p_tx_ids, 'orphans', p_orphans, 'ignored', p_ignored);
END
$$;

-- /new_microblocks in ONE statement: an unconfirmed microblock stream on the canonical tip, with the reference's rules.
-- A stream whose parent is not the canonical tip, or whose newest microblock does not
-- lead back to sequence 0 through the parent's streamed microblocks and the message's own (a gap), is not stored
-- (ignored: the message stays in the log). Microblocks stored already are not stored again; the message's others are
-- inserted with their txs and events, placed on the tip (height + 1, the tip's hash as the txs' parent block, the
-- arrival time p_now as block_time). The parent's streamed microblocks that are not on the new stream's chain are
-- orphaned (a microblock fork): their txs, events and microblock rows leave the microblock-canonical stream, and, holding
-- the mempool lock, those txs return to the mempool (mempool_restore) before the message's txs leave it (mempool_prune);
-- then the reference's count of streamed microblocks.
--
-- Rows arrive as JSON without the fields that depend on the tip (txs: block_height, block_time, parent_block_hash,
-- canonical; events: block_height, canonical; microblocks: the message's microblock_hash, microblock_sequence,
-- microblock_parent_hash and tx_count only): json_populate_recordset fills them from the base records. p_pox: the
-- PoX print values of the message's events, each with its event's microblock_hash. p_tx_ids: the message's tx ids.
-- Returns the IngestResult fields (src/store/ingest/result.ts) the message sets: tx_ids (stored, then restored),
-- orphans (the unconfirmedOrphans), ignored (a reason, or null); with p_outbox, the push_outbox row too.
--
-- Nothing here depends on an answer the projector has not received, so it sends the statement without waiting
-- (sendsWithoutWaiting), as it does for mempool and burn block messages.
CREATE OR REPLACE FUNCTION project_microblocks(
  p_event_id bigint, p_parent text, p_burn_hash text, p_burn_height bigint, p_burn_time bigint,
  p_microblocks json, p_txs json, p_events json, p_pox json, p_tx_ids text[], p_now bigint, p_outbox boolean
) RETURNS json LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_seq bigint := nextval('change_seq');
  v_tip_hash text;
  v_tip_height bigint;
  v_tip_block_hash text;
  v_incoming text[];
  v_on_chain text[];
  v_forked text[];
  v_ignored text;
  v_stored text[] := '{}';
  v_orphans text[] := '{}';
  v_restored text[] := '{}';
  b_mb microblocks;
  b_tx txs;
  b_ev events;
BEGIN
  SELECT index_block_hash, block_height, block_hash INTO v_tip_hash, v_tip_height, v_tip_block_hash
    FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1;
  IF v_tip_hash IS DISTINCT FROM p_parent THEN
    v_ignored := 'microblock parent is not the canonical tip';
  ELSE
    -- the message's microblocks not stored yet, in the message's order
    v_incoming := ARRAY(
      SELECT r.microblock_hash FROM ROWS FROM (json_to_recordset(p_microblocks) AS (microblock_hash text)) WITH ORDINALITY AS r(microblock_hash, o)
      WHERE NOT EXISTS (SELECT 1 FROM microblocks m WHERE m.microblock_hash = r.microblock_hash
        AND m.parent_index_block_hash = p_parent AND m.index_block_hash = '')
      ORDER BY r.o);
    IF cardinality(v_incoming) = 0 THEN
      UPDATE microblock_stream_count SET n = n + json_array_length(p_microblocks);
      RETURN microblocks_result(p_event_id, '{}', '{}', NULL, p_outbox);
    END IF;
    -- the chain from the newest incoming microblock (the first of the highest sequence) back through the parent's
    -- microblock-canonical streamed ones and the incoming ones; it must end at sequence 0
    WITH RECURSIVE chain(h, p, s) AS (
      SELECT m.microblock_hash, m.microblock_parent_hash, m.microblock_sequence FROM microblocks m
      WHERE m.parent_index_block_hash = p_parent AND m.index_block_hash = '' AND m.microblock_canonical
      UNION ALL
      SELECT r.microblock_hash, r.microblock_parent_hash, r.microblock_sequence
      FROM json_to_recordset(p_microblocks) AS r(microblock_hash text, microblock_parent_hash text, microblock_sequence integer)
      WHERE r.microblock_hash = ANY(v_incoming)
    ), newest AS (
      SELECT r.microblock_hash AS h
      FROM ROWS FROM (json_to_recordset(p_microblocks) AS (microblock_hash text, microblock_sequence integer))
        WITH ORDINALITY AS r(microblock_hash, microblock_sequence, o)
      WHERE r.microblock_hash = ANY(v_incoming) ORDER BY r.microblock_sequence DESC, r.o LIMIT 1
    ), walk(h, p, s) AS (
      SELECT c.h, c.p, c.s FROM chain c JOIN newest n ON c.h = n.h
      UNION
      SELECT c.h, c.p, c.s FROM walk w JOIN chain c ON c.h = w.p
    )
    SELECT CASE WHEN EXISTS (SELECT 1 FROM walk w WHERE w.s = 0 AND NOT EXISTS (SELECT 1 FROM chain c WHERE c.h = w.p))
      THEN ARRAY(SELECT DISTINCT w.h FROM walk w) END
    INTO v_on_chain;
    IF v_on_chain IS NULL THEN
      v_ignored := 'microblock stream has a gap';
    END IF;
  END IF;
  IF v_ignored IS NOT NULL THEN
    RETURN microblocks_result(p_event_id, '{}', '{}', v_ignored, p_outbox);
  END IF;

  b_mb.index_block_hash := '';
  b_mb.parent_index_block_hash := p_parent;
  b_mb.block_height := v_tip_height + 1;
  b_mb.block_hash := '';
  b_mb.parent_burn_block_height := p_burn_height;
  b_mb.parent_burn_block_hash := p_burn_hash;
  b_mb.parent_burn_block_time := p_burn_time;
  b_mb.block_time := p_now;
  b_mb.microblock_canonical := true;
  b_mb.canonical := true;
  b_mb.seq := v_seq;
  INSERT INTO microblocks SELECT * FROM json_populate_recordset(b_mb, p_microblocks) r
    WHERE r.microblock_hash = ANY(v_incoming) ON CONFLICT DO NOTHING;
  b_tx.block_height := v_tip_height + 1;
  b_tx.block_time := p_now;
  b_tx.parent_block_hash := v_tip_block_hash;
  b_tx.canonical := true;
  b_tx.seq := v_seq;
  INSERT INTO txs SELECT * FROM json_populate_recordset(b_tx, p_txs) r
    WHERE r.microblock_hash = ANY(v_incoming) ON CONFLICT DO NOTHING;
  -- the stored txs as the message lists them (every tx of an incoming microblock, inserted now or found stored)
  v_stored := ARRAY(SELECT r.tx_id FROM ROWS FROM (json_to_recordset(p_txs) AS (tx_id text, microblock_hash text))
    WITH ORDINALITY AS r(tx_id, microblock_hash, o)
    WHERE r.microblock_hash = ANY(v_incoming) ORDER BY r.o);
  b_ev.block_height := v_tip_height + 1;
  b_ev.canonical := true;
  INSERT INTO events SELECT * FROM json_populate_recordset(b_ev, p_events) r
    WHERE r.microblock_hash = ANY(v_incoming) ON CONFLICT DO NOTHING;
  INSERT INTO pox_events (value_md5, name, stacker, locked, balance, burnchain_unlock_height, pox_addr_raw)
    SELECT DISTINCT ON (r.value_hex) md5(r.value_hex), r.name, r.stacker, r.locked, r.balance, r.burnchain_unlock_height,
      r.pox_addr_raw
    FROM json_to_recordset(p_pox) AS r(microblock_hash text, value_hex text, name text, stacker text, locked numeric,
      balance numeric, burnchain_unlock_height bigint, pox_addr_raw text)
    WHERE r.microblock_hash = ANY(v_incoming)
    ORDER BY r.value_hex
    ON CONFLICT (value_md5) DO NOTHING;

  -- a microblock fork: the parent's streamed microblocks off the new stream's chain
  v_forked := ARRAY(SELECT m.microblock_hash FROM microblocks m
    WHERE m.parent_index_block_hash = p_parent AND m.index_block_hash = '' AND m.microblock_canonical
      AND m.microblock_hash <> ALL(v_on_chain) AND m.microblock_hash <> ALL(v_incoming));
  IF cardinality(v_forked) > 0 THEN
    UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(v_forked);
    UPDATE events SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(v_forked);
    WITH u AS (
      UPDATE txs SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash = ANY(v_forked)
      RETURNING tx_id
    ) SELECT COALESCE(array_agg(u.tx_id), '{}') INTO v_orphans FROM u;
  END IF;

  PERFORM pg_advisory_xact_lock(7355609); -- MEMPOOL_LOCK of src/store/ingest/rows.ts
  IF cardinality(v_orphans) > 0 THEN
    v_restored := mempool_restore(
      ARRAY(SELECT u.x FROM unnest(v_orphans) WITH ORDINALITY AS u(x, o) GROUP BY u.x ORDER BY min(u.o)), v_tip_height, v_seq);
  END IF;
  IF cardinality(p_tx_ids) > 0 THEN
    PERFORM mempool_prune(p_tx_ids);
  END IF;
  UPDATE microblock_stream_count SET n = n + json_array_length(p_microblocks);
  RETURN microblocks_result(p_event_id, v_stored || v_restored, v_orphans, NULL, p_outbox);
END
$$;
