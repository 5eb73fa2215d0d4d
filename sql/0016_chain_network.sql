-- The network this database holds (STACKS_CHAIN_ID). One row at most: recorded at start-up when STACKS_CHAIN_ID is
-- set, otherwise adopted from the first transaction stored. Transactions of the other network are refused from then
-- on, and a process configured for the other network refuses to start.
CREATE TABLE IF NOT EXISTS chain_network (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  chain_id   bigint NOT NULL CHECK (chain_id IN (1, 2147483648)),
  source     text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
