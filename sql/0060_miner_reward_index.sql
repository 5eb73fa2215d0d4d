-- A block can mature two rewards for the same recipient from the same rewarded block (e.g. the miner's coinbase and its
-- share of the parent's microblock fees, listed separately in `matured_miner_rewards`). The key (index_block_hash,
-- from_index_block_hash, recipient) kept only the first and dropped the second (ON CONFLICT DO NOTHING), so balances,
-- total_miner_rewards_received and Rosetta's miner_reward operations missed it. reward_index numbers the rewards of one
-- message that share recipient and rewarded block (0, 1, …; src/observer/to-update.ts) and joins the key.
ALTER TABLE miner_rewards ADD COLUMN IF NOT EXISTS reward_index integer NOT NULL DEFAULT 0;
ALTER TABLE miner_rewards DROP CONSTRAINT IF EXISTS miner_rewards_pkey;
ALTER TABLE miner_rewards ADD PRIMARY KEY (index_block_hash, from_index_block_hash, recipient, reward_index);

-- Backfill: the rewards the old key dropped, from the stored node messages (one message per block), and their amounts
-- into stx_totals where the block is canonical.
WITH msgs AS (
  SELECT DISTINCT ON (ibh) ibh, b FROM (
    SELECT id, body::json AS b,
      CASE WHEN body::json->>'index_block_hash' LIKE '0x%' THEN lower(body::json->>'index_block_hash')
           ELSE '0x' || lower(body::json->>'index_block_hash') END AS ibh
    FROM event_log WHERE path = '/new_block' AND body LIKE '%"matured_miner_rewards"%'
  ) m
  ORDER BY ibh, id DESC
), rewards AS (
  SELECT ibh, (b->>'block_height')::bigint AS block_height, r, ord,
    '0x' || lower(regexp_replace(r->>'from_index_consensus_hash', '^0[xX]', '')) || ':' ||
    '0x' || lower(regexp_replace(r->>'from_stacks_block_hash', '^0[xX]', '')) AS from_key
  FROM msgs, json_array_elements(b->'matured_miner_rewards') WITH ORDINALITY AS x(r, ord)
), numbered AS (
  SELECT *, (row_number() OVER (PARTITION BY ibh, r->>'recipient', from_key ORDER BY ord) - 1)::integer AS occ FROM rewards
), inserted AS (
  INSERT INTO miner_rewards (index_block_hash, from_index_block_hash, recipient, block_height, coinbase_amount,
    tx_fees_anchored, tx_fees_streamed_confirmed, tx_fees_streamed_produced, canonical, reward_index)
  SELECT n.ibh, n.from_key, n.r->>'recipient', n.block_height, (n.r->>'coinbase_amount')::numeric,
    (n.r->>'tx_fees_anchored')::numeric, (n.r->>'tx_fees_streamed_confirmed')::numeric,
    (n.r->>'tx_fees_streamed_produced')::numeric, bl.canonical, n.occ
  FROM numbered n JOIN blocks bl ON bl.index_block_hash = n.ibh
  WHERE n.occ > 0
  ON CONFLICT DO NOTHING
  RETURNING recipient, canonical, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced AS amount
)
INSERT INTO stx_totals (principal, rewards)
SELECT recipient, SUM(amount) FROM inserted WHERE canonical GROUP BY recipient
ON CONFLICT (principal) DO UPDATE SET rewards = stx_totals.rewards + EXCLUDED.rewards;
