-- Growth: indexes that keep per-principal pages flat as the chain grows.
-- /extended/v1/tx/events?address=: the newest events of a principal per column, canonical only, in height order
-- (src/api/routes/events.ts reads the first offset+limit of each to bound the page's height range).
CREATE INDEX IF NOT EXISTS events_sender_height ON events (sender, block_height DESC)
  WHERE sender IS NOT NULL AND canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS events_recipient_height ON events (recipient, block_height DESC)
  WHERE recipient IS NOT NULL AND canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS events_locked_height ON events (locked_address, block_height DESC)
  WHERE locked_address IS NOT NULL AND canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS events_contract_height ON events (contract_id, block_height DESC)
  WHERE contract_id IS NOT NULL AND canonical AND microblock_canonical;
