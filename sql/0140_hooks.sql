-- Predicates and webhooks (src/hooks, docs/hooks.md).
--
-- hooks: one registered predicate (a Chainhook specification) per row, owned by the API key that created it.
-- hook_chain: the journal of the chain's changes, written by the projector IN ITS TRANSACTION: one row per block that
--   became canonical ('apply') or left the canonical chain ('rollback'), in the order the hooks must see them (a
--   reorg's rollbacks before the new branch's applies). It is the durable outbox the evaluator reads: a crash after a
--   projection COMMIT loses nothing.
-- hook_deliveries: per hook, one payload per matching block (apply or rollback), in chain order (id), sent at least once.
-- hook_attempts: each HTTP attempt of a delivery (time, status, error), for GET /extended/v1/hooks/{uuid}/deliveries.

CREATE TABLE IF NOT EXISTS hooks (
  id              bigserial   PRIMARY KEY,
  uuid            text        NOT NULL UNIQUE,
  owner           text        NOT NULL,
  name            text        NOT NULL,
  version         integer     NOT NULL DEFAULT 1,
  network         text        NOT NULL,
  -- the network's part of the specification as accepted (if_this, then_that without secrets, options)
  predicate       jsonb       NOT NULL,
  url             text        NOT NULL,
  authorization_header text,
  secret          text        NOT NULL,
  -- 'active' | 'paused' | 'expired'
  status          text        NOT NULL DEFAULT 'active',
  -- blocks matched (apply deliveries made)
  occurrences     bigint      NOT NULL DEFAULT 0,
  -- the hook follows hook_chain rows after this seq; history up to it was evaluated from the tables (backfill)
  from_seq        bigint,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS hooks_owner ON hooks (owner, id);

CREATE TABLE IF NOT EXISTS hook_chain (
  seq              bigserial PRIMARY KEY,
  action           text      NOT NULL, -- 'apply' | 'rollback'
  index_block_hash text      NOT NULL,
  block_height     bigint    NOT NULL
);

-- where the evaluator is in hook_chain
CREATE TABLE IF NOT EXISTS hook_cursor (
  id        boolean PRIMARY KEY DEFAULT true CHECK (id),
  seq       bigint  NOT NULL
);
INSERT INTO hook_cursor (id, seq) VALUES (true, 0) ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS hook_deliveries (
  id               bigserial   PRIMARY KEY,
  hook_id          bigint      NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
  action           text        NOT NULL, -- 'apply' | 'rollback'
  index_block_hash text        NOT NULL,
  block_height     bigint      NOT NULL,
  -- the block as sent (block_identifier, transactions that matched, metadata)
  block            jsonb       NOT NULL,
  -- 'pending' | 'delivered'
  status           text        NOT NULL DEFAULT 'pending',
  attempts         integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  delivered_at     timestamptz
);
CREATE INDEX IF NOT EXISTS hook_deliveries_pending ON hook_deliveries (hook_id, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS hook_deliveries_hook ON hook_deliveries (hook_id, id DESC);
CREATE INDEX IF NOT EXISTS hook_deliveries_block ON hook_deliveries (index_block_hash, hook_id);

CREATE TABLE IF NOT EXISTS hook_attempts (
  delivery_id  bigint      NOT NULL REFERENCES hook_deliveries (id) ON DELETE CASCADE,
  attempt      integer     NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  status_code  integer,
  error        text,
  ms           integer     NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
