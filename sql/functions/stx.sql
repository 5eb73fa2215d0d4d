-- STX: each principal's totals (sql/0012_stx_totals.sql), the unlocked supply per block (sql/0023_stx_supply.sql),
-- balance checkpoints for balances as of any block (sql/0090_balance_checkpoints.sql) and the inbound-transfer counts
-- of /extended/v1/address/{principal}/stx_inbound (sql/0109_stx_inbound.sql), all kept through the derived-table hook
-- (derived.sql) in the transaction that changes them.

-- Each principal's STX totals over the canonical anchored chain, so /extended/v1/address/{p}/stx and the
-- address-stx-balance push never sum a principal's history:
--   received / sent: stx_asset events (transfers, mints, burns) to / from the principal
--   fees:            fees of txs it paid (the sponsor's for a sponsored tx)
--   rewards:         miner rewards (coinbase + fees) paid to it
-- Only rows of canonical anchored blocks count (index_block_hash <> ''); unconfirmed microblock rows are added at read
-- time. Adds (+1) or removes (-1) every counted row of the given blocks. Called first by the derived hook
-- (derived_apply_now); the name stx_totals_apply is the hook itself (derived.sql).
CREATE OR REPLACE FUNCTION stx_totals_apply_rows(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- plpgsql: the statement's plan is cached for the session (a LANGUAGE sql function would plan it on every call)
  INSERT INTO stx_totals AS t (principal, received, sent, fees, rewards)
  SELECT principal, sign * COALESCE(sum(received), 0), sign * COALESCE(sum(sent), 0), sign * COALESCE(sum(fees), 0),
    sign * COALESCE(sum(rewards), 0)
  FROM (
    SELECT recipient AS principal, amount AS received, 0 AS sent, 0 AS fees, 0 AS rewards
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'stx_asset' AND recipient IS NOT NULL
    UNION ALL
    SELECT sender, 0, amount, 0, 0
    FROM events
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
      AND event_type = 'stx_asset' AND sender IS NOT NULL
    UNION ALL
    SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 0, 0, fee_rate, 0
    FROM txs
    WHERE index_block_hash = ANY(blocks) AND index_block_hash <> '' AND microblock_canonical
    UNION ALL
    SELECT recipient, 0, 0, 0, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
    FROM miner_rewards
    WHERE index_block_hash = ANY(blocks)
  ) d
  WHERE principal IS NOT NULL
  GROUP BY principal
  ON CONFLICT (principal) DO UPDATE SET
    received = t.received + EXCLUDED.received,
    sent = t.sent + EXCLUDED.sent,
    fees = t.fees + EXCLUDED.fees,
    rewards = t.rewards + EXCLUDED.rewards;
END
$$;

-- The unlocked STX supply at height h, as the reference figures it: STX minted minus STX burned by canonical
-- stx_asset events up to h, plus the coinbase of the miner rewards that matured up to h. stx_supply holds, per
-- canonical block, that block's delta and the running total, so a supply at a height is one index lookup (the row at
-- the highest height <= h); unconfirmed microblock mints and burns are added at read time.
--
-- A block's delta (the rows of confirmed microblocks carry the confirming block's hash).
CREATE OR REPLACE FUNCTION stx_supply_delta(block text) RETURNS numeric LANGUAGE sql STABLE AS $$
  SELECT
    COALESCE((SELECT sum(CASE asset_event_type WHEN 'mint' THEN amount ELSE -amount END) FROM events
              WHERE index_block_hash = block AND microblock_canonical AND event_type = 'stx_asset'
                AND asset_event_type IN ('mint', 'burn')), 0)
    + COALESCE((SELECT sum(coinbase_amount) FROM miner_rewards WHERE index_block_hash = block), 0)
$$;

-- Derived hook: -1 deletes the rows of blocks that stopped being canonical (a reorg orphans the chain's suffix from the
-- fork point); +1 appends the blocks that became canonical, lowest first, each total built on the row below it.
CREATE OR REPLACE FUNCTION stx_supply_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  b record;
  d numeric;
BEGIN
  IF sign < 0 THEN
    DELETE FROM stx_supply s WHERE s.index_block_hash = ANY(blocks);
    RETURN;
  END IF;
  FOR b IN SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(blocks) ORDER BY k.block_height LOOP
    d := stx_supply_delta(b.index_block_hash);
    INSERT INTO stx_supply (block_height, index_block_hash, delta, unlocked)
    VALUES (b.block_height, b.index_block_hash, d,
      d + COALESCE((SELECT s.unlocked FROM stx_supply s WHERE s.block_height < b.block_height
                    ORDER BY s.block_height DESC LIMIT 1), 0))
    ON CONFLICT (block_height) DO UPDATE SET index_block_hash = EXCLUDED.index_block_hash, delta = EXCLUDED.delta,
      unlocked = EXCLUDED.unlocked;
  END LOOP;
END
$$;

-- Rosetta balances as of any block: one balance_checkpoints row per (principal, asset, block) where the block moved
-- the principal's STX ('stx') or fungible-token balance, holding the balance after that block (and for 'stx' the
-- highest nonce executed as of it); a balance at height h is the principal's newest canonical row at or below h. What
-- counts is what the reference's historical reads sum (getStxBalanceAtBlock, getFungibleTokenBalances,
-- getAddressNonceAtBlock) over the canonical anchored chain:
--   stx: stx_asset events in and out, the fee of every tx to its payer (the sponsor's when sponsored), the miner
--        rewards the block pays; nonce: the tx's nonce to its sender (unsponsored) or to its sponsor (sponsored);
--   FT:  fungible_token_asset events in and out; a block with events that net to 0 still has its row (the reference
--        lists every token the account ever moved, balance 0 included).
--
-- What blocks moved, per principal and asset (the blocks' own rows, whatever their canonical flag).
CREATE OR REPLACE FUNCTION balance_checkpoint_deltas(blocks text[])
RETURNS TABLE (index_block_hash text, principal text, asset_identifier text, delta numeric, nonce bigint)
LANGUAGE sql STABLE AS $$
  SELECT d.index_block_hash, d.principal, d.asset_identifier, sum(d.delta), max(d.nonce)
  FROM (
    SELECT e.index_block_hash, e.recipient AS principal, 'stx' AS asset_identifier, e.amount AS delta, NULL::bigint AS nonce
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.sender, 'stx', -e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'stx_asset' AND e.sender IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.recipient, e.asset_identifier, e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'fungible_token_asset' AND e.recipient IS NOT NULL
    UNION ALL
    SELECT e.index_block_hash, e.sender, e.asset_identifier, -e.amount, NULL
    FROM events e
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'fungible_token_asset' AND e.sender IS NOT NULL
    UNION ALL
    SELECT t.index_block_hash, CASE WHEN t.sponsored THEN t.sponsor_address ELSE t.sender_address END, 'stx', -t.fee_rate,
      t.nonce
    FROM txs t
    WHERE t.index_block_hash = ANY(blocks) AND t.index_block_hash <> '' AND t.microblock_canonical
    UNION ALL
    SELECT r.index_block_hash, r.recipient, 'stx',
      r.coinbase_amount + r.tx_fees_anchored + r.tx_fees_streamed_confirmed + r.tx_fees_streamed_produced, NULL
    FROM miner_rewards r
    WHERE r.index_block_hash = ANY(blocks)
  ) d
  WHERE d.principal IS NOT NULL
  GROUP BY d.index_block_hash, d.principal, d.asset_identifier
$$;

-- Derived hook. -1 deletes the rows of a block that stops being canonical instead of keeping them non-canonical: a
-- block made canonical and orphaned again inside one projector batch never gets rows, so keeping them for the
-- one-message path would make the two paths' tables differ. A restored block gets its rows again, computed from its
-- ancestry exactly as before (they never depend on anything else).
--
-- +1 writes the rows of all the given blocks in one statement. They all end canonical, so they are one chain, at most
-- one per height, and every canonical checkpoint already stored lies below the lowest of them (a canonical row above
-- it would belong to a block that descends from both the old and the new block at that height). A block's row for a
-- principal and asset is then that key's newest stored canonical row (the base) plus the deltas of the given blocks up
-- to and including it: running sums and maxima over the given blocks in height order.
CREATE OR REPLACE FUNCTION balance_checkpoints_apply(p_blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    DELETE FROM balance_checkpoints WHERE index_block_hash = ANY(p_blocks);
    RETURN;
  END IF;
  WITH bl AS (
    SELECT k.index_block_hash, k.block_height FROM blocks k WHERE k.index_block_hash = ANY(p_blocks)
  ), d AS (
    SELECT x.index_block_hash, bl.block_height, x.principal, x.asset_identifier, x.delta, x.nonce
    FROM balance_checkpoint_deltas(p_blocks) x JOIN bl USING (index_block_hash)
  ), base AS MATERIALIZED ( -- one lookup per key, not per row
    SELECT k.principal, k.asset_identifier, prev.balance, prev.nonce
    FROM (SELECT DISTINCT principal, asset_identifier FROM d) k
    LEFT JOIN LATERAL (
      SELECT p.balance, p.nonce FROM balance_checkpoints p
      WHERE p.principal = k.principal AND p.asset_identifier = k.asset_identifier AND p.canonical
        AND p.block_height < (SELECT min(block_height) FROM bl)
      ORDER BY p.block_height DESC
      LIMIT 1
    ) prev ON true
  )
  INSERT INTO balance_checkpoints (principal, asset_identifier, index_block_hash, block_height, balance, nonce, canonical)
  SELECT d.principal, d.asset_identifier, d.index_block_hash, d.block_height,
    COALESCE(base.balance, 0) + sum(d.delta) OVER w,
    GREATEST(base.nonce, max(d.nonce) OVER w), -- NULLs ignored
    true
  FROM d JOIN base USING (principal, asset_identifier)
  WINDOW w AS (PARTITION BY d.principal, d.asset_identifier ORDER BY d.block_height ROWS UNBOUNDED PRECEDING)
  ON CONFLICT DO NOTHING;
END
$$;

-- /extended/v1/address/{principal}/stx_inbound: `total` comes from stx_inbound_counts, the canonical anchored rows of
-- each arm per recipient, kept per block like the other summed tables (additive, batched, zero rows written by
-- derived_touch) and corrected at read time (src/store/principal-txs.ts, inboundTransfers), instead of materializing
-- the principal's whole inbound history on every page. Arms (as the reference's query): 1 bulk-send: an STX event
-- followed in its tx by a send-many-memo print; 2 stx-transfer-memo: an STX event whose asset has a memo;
-- 3 stx-transfer: a token-transfer tx.
--
-- The send-many contracts whose memo prints make arm 1.
CREATE OR REPLACE FUNCTION send_many_contracts() RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.send-many-memo', 'ST3F1X4QGV2SM8XD96X45M6RTQXKA1PZJZZCQAB4B.send-many-memo']
$$;

-- The arms' rows of the given blocks (whatever their canonical flag: an orphaned block's rows are counted out after
-- its flag is cleared), as (recipient, arm).
CREATE OR REPLACE FUNCTION stx_inbound_rows(blocks text[]) RETURNS TABLE (recipient text, arm smallint) LANGUAGE sql STABLE AS $$
  SELECT e.recipient, 1::smallint FROM events e
  JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash AND l.microblock_hash = e.microblock_hash
    AND l.event_index = e.event_index + 1 AND l.event_type = 'smart_contract_log' AND l.contract_id = ANY(send_many_contracts())
    AND l.microblock_canonical
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL
  UNION ALL
  SELECT e.recipient, 2::smallint FROM events e
  WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
    AND e.event_type = 'stx_asset' AND e.recipient IS NOT NULL AND (e.api -> 'asset' ->> 'memo') IS NOT NULL
  UNION ALL
  SELECT t.token_transfer_recipient, 3::smallint FROM txs t
  WHERE t.index_block_hash = ANY(blocks) AND t.index_block_hash <> '' AND t.microblock_canonical
    AND t.tx_type = 'token_transfer' AND t.token_transfer_recipient IS NOT NULL
$$;

-- Derived hook: adds (+1) or removes (-1) the given blocks' rows of each arm per recipient.
CREATE OR REPLACE FUNCTION stx_inbound_counts_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO stx_inbound_counts AS c (recipient, arm, n)
  SELECT r.recipient, r.arm, sign * count(*) FROM stx_inbound_rows(blocks) r GROUP BY r.recipient, r.arm
  ON CONFLICT (recipient, arm) DO UPDATE SET n = c.n + EXCLUDED.n;
END
$$;
