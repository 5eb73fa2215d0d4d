-- The recent-transaction list (/extended/v1/tx) without sorting the table: one partial index over canonical txs per
-- sort order (height, burn time, fee; each ending in the reference's tie-breakers microblock_sequence, tx_index), and
-- one per filter leading with the filtered column then the default order. The called function's name is read from
-- the stored tx JSON by an expression index (no new column: both ingest paths stay as they are).
CREATE INDEX IF NOT EXISTS txs_list_height ON txs (block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_list_burn_time ON txs (burn_block_time DESC, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_list_fee ON txs (fee_rate DESC, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_list_type ON txs (tx_type, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_list_sender ON txs (sender_address, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_list_recipient ON txs (token_transfer_recipient, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical AND token_transfer_recipient IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_list_contract_call ON txs (contract_call_contract_id, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical AND contract_call_contract_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_list_function ON txs ((api -> 'contract_call' ->> 'function_name'), block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical AND contract_call_contract_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_list_nonce ON txs (nonce, block_height DESC, microblock_sequence DESC, tx_index DESC)
  WHERE canonical AND microblock_canonical;
