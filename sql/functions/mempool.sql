-- The mempool table follows the reference's rules step by step (v8.13.6 pg-write-store.ts), so a tx's status after
-- replacements, drops, forks and re-mining is the reference's (tables: sql/0017_mempool_reference_rules.sql):
--   * mempool_prune (pruneMempoolTxs): txs mined by a canonical block or microblock leave the mempool together with
--     every mempool tx of the same payer (the sponsor when sponsored) and nonce: pruned, status kept, no replacement.
--   * mempool_replace_by_fee (updateReplacedByFeeStatusForTxIds): for each payer+nonce group of the given txs, the
--     winner is the newest canonically mined tx, else the highest-fee mempool tx; every other mempool tx of the group,
--     pruned or not, becomes dropped_replace_by_fee, replaced by the winner. Run for the txs of every stored block
--     (canonical or not) and for txs entering the mempool. A loser that is not sponsored is stored lazy: its
--     replacement is its group's row of mempool_rbf_winners, so a change of winner writes one row, not the group
--     (sql/0150_mempool_rbf_winners.sql; the API reads it through mempool_replaced_by).
--   * mempool_mined: both of the above for the txs of a block stored canonical, in one UPDATE.
--   * mempool_restore (restoreMempoolTxs): txs orphaned by a reorg or a microblock fork come back as pending together
--     with the mempool txs of the same payer and nonce; those never seen in the mempool are inserted from their mined
--     row (receipt time = its burn block time, size = its raw result, as the reference does) through mempool_insert_rows.
--   * mempool_insert_rows (insertDbMempoolTxs): a known pruned tx that is not mined comes back as pending; a new one is
--     inserted; one already mined canonically is pruned at once; then replace-by-fee over what came in.
--   * mempool_garbage_collect (deleteGarbageCollectedMempoolTxs): at every stored block, txs received 256 blocks
--     before the previous tip (2,560 minutes once the tip is a Nakamoto block) become dropped_api_garbage_collect.
-- The callers (projector.sql, src/store/ingest/) hold the mempool lock. Plans are generic (`plan_cache_mode`, see
-- projector.sql) except for the garbage collection, whose conditions are ranges.

-- mempool_pending (sql/0145_mempool_pending.sql): the mempool txs that are not pruned, kept by statement triggers on
-- mempool_txs from each statement's new (or deleted) rows. The pending reads go through mempool_pending's indexes, and
-- the indexes of mempool_txs name no column the rules below change but rbf_lazy (set once when a tx first loses
-- replace-by-fee, cleared when it comes back) and receipt_time (rewritten when a tx comes back), so their other
-- rewrites are heap-only updates.
CREATE OR REPLACE FUNCTION mempool_pending_sync_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO mempool_pending (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
    token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
  SELECT n.tx_id, n.receipt_time, n.receipt_block_height, n.sender_address, n.sponsor_address, n.token_transfer_recipient,
    n.contract_call_contract_id, n.smart_contract_contract_id
  FROM mempool_new n WHERE NOT n.pruned;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION mempool_pending_sync_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mempool_pending p USING mempool_new n WHERE p.tx_id = n.tx_id AND n.pruned;
  INSERT INTO mempool_pending AS p (tx_id, receipt_time, receipt_block_height, sender_address, sponsor_address,
    token_transfer_recipient, contract_call_contract_id, smart_contract_contract_id)
  SELECT n.tx_id, n.receipt_time, n.receipt_block_height, n.sender_address, n.sponsor_address, n.token_transfer_recipient,
    n.contract_call_contract_id, n.smart_contract_contract_id
  FROM mempool_new n WHERE NOT n.pruned
  ON CONFLICT (tx_id) DO UPDATE SET receipt_time = EXCLUDED.receipt_time, receipt_block_height = EXCLUDED.receipt_block_height
    WHERE (p.receipt_time, p.receipt_block_height) IS DISTINCT FROM (EXCLUDED.receipt_time, EXCLUDED.receipt_block_height);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION mempool_pending_sync_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mempool_pending p USING mempool_old o WHERE p.tx_id = o.tx_id;
  RETURN NULL;
END
$$;

-- chain_state.tip_burn_block_height is the reference's chain_tip.burn_block_height: the burn height of the last
-- canonical block, raised by every /new_burn_block that is higher.
CREATE OR REPLACE FUNCTION tip_burn_height_raise(p_height bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, p_height)
  ON CONFLICT (id) DO UPDATE SET tip_burn_block_height = GREATEST(chain_state.tip_burn_block_height, EXCLUDED.tip_burn_block_height)
$$;

-- A block stored canonical sets it to its own burn height, whatever it was.
CREATE OR REPLACE FUNCTION tip_burn_height_set(p_height bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO chain_state (id, tip_burn_block_height) VALUES (1, p_height)
  ON CONFLICT (id) DO UPDATE SET tip_burn_block_height = EXCLUDED.tip_burn_block_height
$$;

-- The mempool txs with the same payer (the sponsor when sponsored) and nonce as one of the given txs, a row per branch
-- that finds it: a tx found by its sender and by its sponsor comes twice (mempool_same_nonce_rows removes duplicates;
-- mempool_restore, which adds rows of its own, removes them once for all). Inlined where it is read, so a
-- caller's filter applies inside each branch: with `NOT rbf_lazy`, the sender's branch reads
-- mempool_sender_nonce_explicit and skips a group's lazy losers (sql/0150).
CREATE OR REPLACE FUNCTION mempool_same_nonce_rows_all(p_ids text[])
RETURNS TABLE (tx_id text, sender_address text, sponsor_address text, nonce bigint, pruned boolean, rbf_lazy boolean)
LANGUAGE sql STABLE AS $$
  WITH src AS (
    SELECT DISTINCT CASE WHEN t.sponsored THEN COALESCE(t.sponsor_address, 'null') ELSE t.sender_address END AS address, t.nonce
    FROM txs t WHERE t.tx_id = ANY(p_ids)
  )
  SELECT m.tx_id, m.sender_address, m.sponsor_address, m.nonce, m.pruned, m.rbf_lazy
  FROM mempool_txs m JOIN src s ON m.nonce = s.nonce AND m.sender_address = s.address
  UNION ALL SELECT m.tx_id, m.sender_address, m.sponsor_address, m.nonce, m.pruned, m.rbf_lazy
  FROM mempool_txs m JOIN src s ON m.nonce = s.nonce AND m.sponsor_address = s.address
$$;

-- mempool_same_nonce_rows_all, each tx once.
CREATE OR REPLACE FUNCTION mempool_same_nonce_rows(p_ids text[])
RETURNS TABLE (tx_id text, sender_address text, sponsor_address text, nonce bigint, pruned boolean, rbf_lazy boolean)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT g.tx_id, g.sender_address, g.sponsor_address, g.nonce, g.pruned, g.rbf_lazy FROM mempool_same_nonce_rows_all(p_ids) g
$$;

-- The given tx ids plus every mempool tx with the same payer and nonce as one of them (the UNION removes duplicates).
CREATE OR REPLACE FUNCTION mempool_same_nonce(p_ids text[]) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT COALESCE(array_agg(x), '{}') FROM (SELECT g.tx_id FROM mempool_same_nonce_rows_all(p_ids) g UNION SELECT unnest(p_ids)) AS h(x)
$$;

-- The group is computed once, before the UPDATE: called inside its WHERE, the STABLE lookup was evaluated again for
-- every row the scan looked at. The rows are found by primary key. A lazy loser is pruned already, so the group's
-- lazy txs are not read.
CREATE OR REPLACE FUNCTION mempool_prune(p_ids text[]) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v text[];
  v_group text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  v_group := ARRAY(SELECT g.tx_id FROM mempool_same_nonce_rows(p_ids) g WHERE NOT g.rbf_lazy) || p_ids;
  WITH u AS (
    UPDATE mempool_txs SET pruned = true, replaced_by_tx_id = NULL
    WHERE tx_id = ANY(v_group) AND pruned IS NOT TRUE
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

-- Replace-by-fee's groups for the given txs (from txs when p_from_mempool is false, from mempool_txs when it is
-- true): each payer+nonce (the sponsor when sponsored) with its winner, the newest canonically mined tx of the group,
-- else its highest-fee mempool tx (the newest first); NULL when the group has neither. The winner depends on fees,
-- receipt times and mined txs only, never on a row's pruned, status, replaced_by_tx_id or rbf_lazy, so it is the same
-- before and after any rule's writes.
--
-- Each winner is one index probe per side, whatever the size of the group: the mined tx through txs' (sender, nonce)
-- and (sponsor, nonce) indexes, the highest fee through mempool_sender_nonce_fee and the sponsor's (sponsor, nonce)
-- index. A payer+nonce is looked up as two probes (sponsor, sender) rather than `nonce = … AND (sponsor = … OR
-- sender = …)`, for which the planner could use only the address half of each index (it then read every row of a busy
-- sender: 83,000 on the 100,000-block generated chain).
CREATE OR REPLACE FUNCTION mempool_rbf_groups(p_ids text[], p_from_mempool boolean)
RETURNS TABLE (address text, nonce bigint, winner text) LANGUAGE sql STABLE AS $$
  WITH src AS (
    SELECT DISTINCT CASE WHEN t.sponsored THEN t.sponsor_address ELSE t.sender_address END AS address, t.nonce
    FROM txs t WHERE NOT p_from_mempool AND t.tx_id = ANY(p_ids)
    UNION
    SELECT DISTINCT CASE WHEN m.sponsored THEN m.sponsor_address ELSE m.sender_address END, m.nonce
    FROM mempool_txs m WHERE p_from_mempool AND m.tx_id = ANY(p_ids)
  )
  SELECT g.address, g.nonce, COALESCE(
    (SELECT c.tx_id FROM (
      (SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index FROM txs t
       WHERE t.sender_address = g.address AND t.nonce = g.nonce AND t.canonical AND t.microblock_canonical
       ORDER BY t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC LIMIT 1)
      UNION ALL
      (SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index FROM txs t
       WHERE t.sponsor_address = g.address AND t.nonce = g.nonce AND t.canonical AND t.microblock_canonical
       ORDER BY t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC LIMIT 1)
    ) c ORDER BY c.block_height DESC, c.microblock_sequence DESC, c.tx_index DESC LIMIT 1),
    (SELECT f.tx_id FROM (
      (SELECT m.tx_id, m.fee_rate, m.receipt_time FROM mempool_txs m
       WHERE m.sender_address = g.address AND m.nonce = g.nonce
       ORDER BY m.fee_rate DESC, m.receipt_time DESC LIMIT 1)
      UNION ALL
      (SELECT m.tx_id, m.fee_rate, m.receipt_time FROM mempool_txs m
       WHERE m.sponsor_address = g.address AND m.nonce = g.nonce
       ORDER BY m.fee_rate DESC, m.receipt_time DESC LIMIT 1)
    ) f ORDER BY f.fee_rate DESC, f.receipt_time DESC LIMIT 1))
  FROM src g
$$;

-- replaced_by_tx_id as the API reads it: a lazy loser's is its sender+nonce group's winner (sql/0150).
CREATE OR REPLACE FUNCTION mempool_replaced_by(p_lazy boolean, p_sender text, p_nonce bigint, p_replaced_by text)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN p_lazy
    THEN (SELECT w.winner FROM mempool_rbf_winners w WHERE w.address = p_sender AND w.nonce = p_nonce)
    ELSE p_replaced_by END
$$;

-- Writes replace-by-fee's outcome for the payer+nonce groups of p_ids (mempool_rbf_groups; a group without a winner
-- has no loser), and, when p_prune, mempool_prune's for p_ids in the same UPDATE. Every mempool tx of a group but
-- its winner ends pruned, dropped_replace_by_fee, replaced by the winner (a sponsored one in its own column, any other
-- lazy: sql/0150); with p_prune, every other tx of mempool_prune's group that is pending ends pruned, status kept, no
-- replacement. The txs written.
--
-- Lazy losers are not read: they are already pruned and dropped, and the winner's row of their group is what they
-- answer. So the statements touch the group's winner row, the winner's own tx when it was a lazy loser (it keeps the
-- replacement it had, written into its column before the group's winner changes), and the group's txs that are not
-- lazy (new, revived, pending or sponsored ones), whatever the group's size. A group's mempool_rbf_winners row exists
-- from the first time one of its losers is lazy.
--
-- `enable_seqscan = off`: the plan is made once per session, and an import starts with mempool_rbf_winners empty, for
-- which a scan of the whole table is the cheapest plan; that plan stayed while the table grew (9 million rows read by
-- 8,672 scans over a 10,000-block import). Every row these statements read has an index that finds it.
CREATE OR REPLACE FUNCTION mempool_rbf_apply(p_ids text[], p_from_mempool boolean, p_prune boolean)
RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
  v text[];
  v_addr text[];
  v_nonce bigint[];
  v_win text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  -- each group's winner computed once (OFFSET 0: not again for each place the statement below reads it)
  SELECT COALESCE(array_agg(g.address), '{}'), COALESCE(array_agg(g.nonce), '{}'), COALESCE(array_agg(g.winner), '{}')
  INTO v_addr, v_nonce, v_win
  FROM (SELECT * FROM mempool_rbf_groups(p_ids, p_from_mempool) OFFSET 0) g WHERE g.winner IS NOT NULL;
  IF cardinality(v_win) = 0 AND NOT p_prune THEN RETURN '{}'; END IF;
  -- one statement (each UPDATE of mempool_txs runs mempool_pending's statement trigger); every CTE reads the tables as
  -- they were before it, so `win`'s old_winner is the winner the group's lazy losers answered until now
  WITH win AS (
    SELECT w.address, w.nonce, w.winner, o.winner AS old_winner
    FROM unnest(v_addr, v_nonce, v_win) AS w(address, nonce, winner)
    LEFT JOIN mempool_rbf_winners o ON o.address = w.address AND o.nonce = w.nonce
  ), same AS (
    -- the groups' txs that are not lazy (a sponsored tx never is)
    SELECT m.tx_id, g.winner FROM mempool_txs m JOIN win g ON m.sponsor_address = g.address AND m.nonce = g.nonce
    UNION
    SELECT m.tx_id, g.winner FROM mempool_txs m JOIN win g ON m.sender_address = g.address AND m.nonce = g.nonce
    WHERE NOT m.rbf_lazy
  ), loser AS (
    SELECT DISTINCT ON (s.tx_id) s.tx_id, s.winner FROM same s WHERE s.tx_id <> s.winner ORDER BY s.tx_id
  ), payer AS (
    SELECT DISTINCT t.sponsored, t.sponsor_address, t.nonce FROM txs t WHERE p_prune AND t.tx_id = ANY(p_ids)
  ), null_sponsor AS (
    SELECT DISTINCT p.nonce FROM payer p WHERE p.sponsored AND p.sponsor_address IS NULL
  ), grp AS (
    -- with p_prune, prune's group (mempool_same_nonce(p_ids)) but its lazy txs, which are pruned already: the block's
    -- txs are mined, so each of their groups has a winner and is in `same`
    SELECT s.tx_id FROM same s WHERE p_prune
    UNION SELECT m.tx_id FROM mempool_txs m JOIN null_sponsor n ON m.nonce = n.nonce AND m.sender_address = 'null'
    UNION SELECT m.tx_id FROM mempool_txs m JOIN null_sponsor n ON m.nonce = n.nonce AND m.sponsor_address = 'null'
    UNION SELECT x FROM unnest(p_ids) x WHERE p_prune
  ), target AS (
    -- a winner that was a lazy loser keeps the replacement it had (`keeps`), now in its own column; it is pruned, so
    -- as a member of prune's group it would not be written
    SELECT DISTINCT ON (t.tx_id) t.* FROM (
      SELECT COALESCE(g.tx_id, l.tx_id) AS tx_id, l.winner, l.tx_id IS NOT NULL AS loses, NULL::text AS keeps
      FROM grp g FULL JOIN loser l ON l.tx_id = g.tx_id
      UNION ALL
      SELECT m.tx_id, NULL, false, w.old_winner
      FROM win w JOIN mempool_txs m ON m.tx_id = w.winner
      WHERE m.rbf_lazy AND w.old_winner <> w.winner
    ) t ORDER BY t.tx_id, t.keeps IS NULL
  ), u AS (
    UPDATE mempool_txs m
    SET pruned = true,
      status = CASE WHEN x.loses THEN 'dropped_replace_by_fee' ELSE m.status END,
      replaced_by_tx_id = CASE WHEN x.keeps IS NOT NULL THEN x.keeps WHEN x.loses AND m.sponsor_address IS NOT NULL THEN x.winner END,
      rbf_lazy = x.loses AND m.sponsor_address IS NULL
    FROM target x
    WHERE m.tx_id = x.tx_id
      AND CASE WHEN x.keeps IS NOT NULL THEN true
        WHEN x.loses THEN NOT m.pruned OR m.status <> 'dropped_replace_by_fee' OR m.rbf_lazy <> (m.sponsor_address IS NULL)
          OR m.replaced_by_tx_id IS DISTINCT FROM CASE WHEN m.sponsor_address IS NOT NULL THEN x.winner END
        ELSE NOT m.pruned END
    RETURNING m.tx_id, m.rbf_lazy, m.sender_address, m.nonce
  ), winners AS (
    -- the group's winner row: changed where it exists, created when the group's first lazy loser is written
    INSERT INTO mempool_rbf_winners AS o (address, nonce, winner)
    SELECT w.address, w.nonce, w.winner FROM win w
    WHERE w.old_winner <> w.winner
      OR (w.old_winner IS NULL AND EXISTS (SELECT 1 FROM u WHERE u.rbf_lazy AND u.sender_address = w.address AND u.nonce = w.nonce))
    ON CONFLICT (address, nonce) DO UPDATE SET winner = EXCLUDED.winner
  )
  SELECT COALESCE(array_agg(u.tx_id), '{}') INTO v FROM u;
  RETURN v;
END
$$;

-- Replace-by-fee over the payer+nonce groups of the given txs (mempool_rbf_apply); the txs written.
CREATE OR REPLACE FUNCTION mempool_replace_by_fee(p_ids text[], p_from_mempool boolean) RETURNS text[] LANGUAGE sql AS $$
  SELECT mempool_rbf_apply(p_ids, p_from_mempool, false)
$$;

-- p_rows: mempool_txs rows as JSON (without receipt_block_height, status, pruned, replaced_by_tx_id, seq), in the
-- order they came. ids: the revived and the inserted tx ids (those the reference announces), in the order they came;
-- inserted: those of them seen for the first time (the rows this call inserted).
--
-- The reference's steps are: revive the known pruned txs that are not mined; insert the new ones; prune those (known
-- or new) already mined canonically; replace-by-fee over what came in. The first and third steps are one UPDATE of the
-- known rows here (a known row changes when its `pruned` differs from "not mined": pruned and not mined is revived,
-- pending and mined is pruned; the rows each step touches are disjoint, and a revived row is not mined), and a new row
-- that is already mined is inserted pruned rather than inserted pending and pruned by a second statement.
-- Both conditions name the rows by primary key.
--
-- p_mined_next: txs that the next message of the projector's transaction, a block stored canonical on the tip by
-- project_block_fast, mines (src/projector/projector.ts decides; empty otherwise). A new row among them is inserted
-- pruned, which is how that block's mempool_mined leaves it: the rows written in between (burn blocks, attachments)
-- never read mempool_txs; replace-by-fee here does not depend on `pruned` and ends each loser pruned either way;
-- mempool_mined then prunes the rest of each group, keeps a pruned row's status, and its losers' updates do not depend
-- on `pruned`; and the garbage collection, after mempool_mined, touches no row of these groups. Should the block not
-- take that path, the projector rolls the transaction back and applies it again without this.
CREATE OR REPLACE FUNCTION mempool_insert_rows(p_rows json, p_tip bigint, p_seq bigint, p_mined_next text[] DEFAULT '{}',
  OUT ids text[], OUT inserted text[])
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_rows mempool_txs[];
  v_ids text[];
  v_first_time bigint;
  v_revived text[];
BEGIN
  -- the JSON is parsed once, into rows
  v_rows := ARRAY(SELECT r FROM json_populate_recordset(NULL::mempool_txs, p_rows) AS r);
  IF cardinality(v_rows) = 0 THEN
    ids := '{}';
    inserted := '{}';
    RETURN;
  END IF;
  v_ids := ARRAY(SELECT r.tx_id FROM unnest(v_rows) WITH ORDINALITY AS r ORDER BY r.ordinality);
  v_first_time := (v_rows[1]).receipt_time;
  WITH u AS (
    UPDATE mempool_txs m SET pruned = NOT m.pruned, rbf_lazy = false,
      status = CASE WHEN m.pruned THEN 'pending' ELSE m.status END,
      replaced_by_tx_id = CASE WHEN m.pruned THEN NULL ELSE m.replaced_by_tx_id END,
      receipt_block_height = CASE WHEN m.pruned THEN p_tip ELSE m.receipt_block_height END,
      receipt_time = CASE WHEN m.pruned THEN v_first_time ELSE m.receipt_time END
    WHERE m.tx_id = ANY(v_ids)
      AND m.pruned = NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id AND t.canonical AND t.microblock_canonical)
    RETURNING m.tx_id, m.pruned
  ) SELECT COALESCE(array_agg(tx_id) FILTER (WHERE NOT pruned), '{}') INTO v_revived FROM u;
  WITH ins AS (
    INSERT INTO mempool_txs (tx_id, raw_tx, tx_type, nonce, fee_rate, sender_address, sponsor_address, sponsored,
      token_transfer_recipient, token_transfer_amount, contract_call_contract_id, smart_contract_contract_id, byte_size,
      api, receipt_time, receipt_block_height, status, pruned, replaced_by_tx_id, seq)
    SELECT r.tx_id, r.raw_tx, r.tx_type, r.nonce, r.fee_rate, r.sender_address, r.sponsor_address, r.sponsored,
      r.token_transfer_recipient, r.token_transfer_amount, r.contract_call_contract_id, r.smart_contract_contract_id,
      r.byte_size, r.api, r.receipt_time, p_tip, 'pending',
      r.tx_id = ANY(p_mined_next)
        OR EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = r.tx_id AND t.canonical AND t.microblock_canonical), NULL, p_seq
    FROM unnest(v_rows) WITH ORDINALITY AS r
    ORDER BY r.ordinality
    ON CONFLICT (tx_id) DO NOTHING
    RETURNING tx_id
  ) SELECT COALESCE(array_agg(tx_id), '{}') INTO inserted FROM ins;
  PERFORM mempool_replace_by_fee(v_revived || inserted, true);
  -- in the order they came
  ids := ARRAY(SELECT x FROM unnest(v_ids) WITH ORDINALITY AS u(x, i) WHERE x = ANY(v_revived || inserted) ORDER BY i);
END
$$;

-- mempool_insert_rows' ids.
CREATE OR REPLACE FUNCTION mempool_insert(p_rows json, p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (mempool_insert_rows(p_rows, p_tip, p_seq)).ids;
END
$$;

-- The mempool rows (JSON for mempool_insert_rows, in tx id order) of txs known only as mined, which a restore inserts:
-- each one's newest placement, with the reference's receipt time (its burn block time) and size (its raw result).
CREATE OR REPLACE FUNCTION mempool_rows_of_mined(p_ids text[]) RETURNS json LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (SELECT json_agg(row_to_json(o) ORDER BY o.tx_id) FROM (
    SELECT DISTINCT ON (t.tx_id) t.tx_id, t.raw_tx, t.tx_type, t.nonce, t.fee_rate, t.sender_address, t.sponsor_address,
      t.sponsored, t.token_transfer_recipient, t.token_transfer_amount, t.contract_call_contract_id,
      t.smart_contract_contract_id, (length(t.raw_result) - 2) / 2 AS byte_size, t.api, t.burn_block_time AS receipt_time
    FROM txs t WHERE t.tx_id = ANY(p_ids)
    ORDER BY t.tx_id, t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC
  ) o);
END
$$;

-- Returns the restored tx ids and those it had to insert (the reference's restoredTxs). The reference's steps are:
-- every pruned mempool tx of the orphaned txs' payer+nonce groups comes back as pending; then the orphaned txs never
-- seen in the mempool go in through mempool_insert_rows, whose replace-by-fee then drops again every loser of their
-- groups. Here the restored rows are only read first (in tx id order: an UPDATE's RETURNING has no defined order), the
-- insert runs, and the restoring UPDATE leaves out the rows that replace-by-fee has just left dropped: the
-- same end state, without writing a row back to pending and at once to dropped again. On the generated chains one
-- payer+nonce group (a fork miner's coinbase) gains a tx at every fork, so that round trip rewrote the whole group
-- twice per orphaned block. The group's pruned rows are read once (their ids, payers and nonce), where the group's
-- ids, then its pruned rows, then the losers among them were three reads of the group.
CREATE OR REPLACE FUNCTION mempool_restore(p_ids text[], p_tip bigint, p_seq bigint) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_restored text[];
  v_r_sender text[];
  v_r_sponsor text[];
  v_r_nonce bigint[];
  v_need text[];
  v_rows json;
  v_came text[] := '{}';
  v_dropped text[] := '{}';
  v_addr text[];
  v_nonce bigint[];
  v_win text[];
BEGIN
  IF cardinality(p_ids) = 0 THEN RETURN '{}'; END IF;
  -- the pruned txs of mempool_same_nonce(p_ids), read once with what the re-dropped ones are told apart by, in tx id
  -- order. Duplicates go by tx id alone, and every sort compares bytes (`COLLATE "C"`: a tx id is 0x and lowercase hex,
  -- which every collation orders alike). Removing them with two UNIONs over whole rows, then four sorts under the
  -- database's collation, took 40% of a restore whose group of 2,000 txs (one miner losing fork after fork at the same
  -- nonce, as on the generated chains) was in shared buffers; when it is not, reading its rows is what costs.
  WITH h AS (
    SELECT DISTINCT ON (x.tx_id COLLATE "C") x.tx_id, x.sender_address, x.sponsor_address, x.nonce FROM (
      SELECT g.tx_id, g.sender_address, g.sponsor_address, g.nonce FROM mempool_same_nonce_rows_all(p_ids) g WHERE g.pruned
      UNION ALL SELECT m.tx_id, m.sender_address, m.sponsor_address, m.nonce FROM mempool_txs m WHERE m.tx_id = ANY(p_ids) AND m.pruned
    ) x ORDER BY x.tx_id COLLATE "C"
  )
  SELECT COALESCE(array_agg(h.tx_id ORDER BY h.tx_id COLLATE "C"), '{}'), array_agg(h.sender_address ORDER BY h.tx_id COLLATE "C"),
    array_agg(h.sponsor_address ORDER BY h.tx_id COLLATE "C"), array_agg(h.nonce ORDER BY h.tx_id COLLATE "C")
  INTO v_restored, v_r_sender, v_r_sponsor, v_r_nonce
  FROM h;
  v_need := ARRAY(SELECT DISTINCT x FROM unnest(p_ids) x WHERE x <> ALL(v_restored) ORDER BY x);
  IF cardinality(v_need) > 0 THEN
    v_rows := mempool_rows_of_mined(v_need);
    -- what came in (revived or inserted) is what the insert's replace-by-fee ran over
    IF v_rows IS NOT NULL THEN v_came := (mempool_insert_rows(v_rows, p_tip, p_seq)).ids; END IF;
  END IF;
  IF cardinality(v_came) > 0 AND cardinality(v_restored) > 0 THEN
    -- the restored txs that lose a group replace-by-fee has just run over (any tx of the group but its winner);
    -- joins, not `= ANY` / `<> ALL`: both arrays hold a whole payer+nonce group, which can reach thousands of txs
    -- (one miner losing fork after fork at the same nonce), and an array test per row made these steps quadratic
    SELECT COALESCE(array_agg(g.address), '{}'), COALESCE(array_agg(g.nonce), '{}'), COALESCE(array_agg(g.winner), '{}')
    INTO v_addr, v_nonce, v_win
    FROM (SELECT * FROM mempool_rbf_groups(v_came, true) OFFSET 0) g WHERE g.winner IS NOT NULL;
    v_dropped := ARRAY(
      SELECT DISTINCT r.tx_id FROM unnest(v_restored, v_r_sender, v_r_sponsor, v_r_nonce) AS r(tx_id, sender, sponsor, nonce)
      JOIN unnest(v_addr, v_nonce, v_win) AS g(address, nonce, winner)
        ON g.nonce = r.nonce AND (g.address = r.sender OR g.address = r.sponsor)
      WHERE r.tx_id <> g.winner);
  END IF;
  IF cardinality(v_restored) > cardinality(v_dropped) THEN
    UPDATE mempool_txs m SET pruned = false, status = 'pending', replaced_by_tx_id = NULL, rbf_lazy = false
    FROM (SELECT unnest(v_restored) EXCEPT SELECT unnest(v_dropped)) AS k(tx_id)
    WHERE m.pruned AND m.tx_id = k.tx_id;
  END IF;
  RETURN v_restored || v_need;
END
$$;

-- One statement per case, each on its index of mempool_pending (mempool_pending_time, mempool_pending_height): a CASE
-- choosing the condition let no index apply. `plan_cache_mode = auto`: the conditions are ranges (`receipt_time <= …`,
-- `receipt_block_height <= …`), for which a generic plan assumes a third of the table.
CREATE OR REPLACE FUNCTION mempool_garbage_collect(p_tip_height bigint, p_nakamoto boolean) RETURNS text[] LANGUAGE plpgsql
SET plan_cache_mode = auto AS $$
DECLARE v text[];
BEGIN
  IF p_nakamoto THEN
    WITH u AS (
      UPDATE mempool_txs m SET pruned = true, status = 'dropped_api_garbage_collect'
      FROM mempool_pending p
      WHERE m.tx_id = p.tx_id AND NOT m.pruned
        AND p.receipt_time <= EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - INTERVAL '2560 minutes'))::bigint
      RETURNING m.tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  ELSE
    WITH u AS (
      UPDATE mempool_txs m SET pruned = true, status = 'dropped_api_garbage_collect'
      FROM mempool_pending p
      WHERE m.tx_id = p.tx_id AND NOT m.pruned AND p.receipt_block_height <= p_tip_height - 256
      RETURNING m.tx_id
    ) SELECT COALESCE(array_agg(tx_id), '{}') INTO v FROM u;
  END IF;
  RETURN v;
END
$$;

-- mempool_prune(p_ids) then mempool_replace_by_fee(p_ids, false), in one UPDATE (mempool_rbf_apply with p_prune), for
-- the txs of a block that is stored canonical (project_block_fast); the caller holds the mempool lock. Pruning, then
-- garbage-collecting, then running replace-by-fee over the same groups looked the groups up twice and wrote a tx
-- replaced by the mined one twice. Same rows because: replace-by-fee's rows are a subset of prune's group (same
-- payer+nonce lookup; prune's also holds the ids themselves and treats a sponsored tx without sponsor as payer
-- 'null'); replace-by-fee's winner and losers depend only on fee_rate, receipt_time and mined txs, which prune does not
-- change; after prune every row of the group is pruned, so garbage collection (NOT pruned rows only) never touches a
-- row of the group and runs after both as well as between them. A loser's final state is replace-by-fee's; any other
-- row of the group that was pending ends pruned with status kept and no replacement, as prune leaves it.
CREATE OR REPLACE FUNCTION mempool_mined(p_ids text[]) RETURNS void LANGUAGE sql AS $$
  SELECT mempool_rbf_apply(p_ids, false, true)
$$;
