-- stacks-pulse schema, version 1.
-- Hashes are lowercase 0x-hex text; amounts are numeric; heights and times are integers.
-- Every derived row can be rebuilt from event_log (the raw observer requests, in arrival order).

CREATE TABLE IF NOT EXISTS event_log (
  id           bigserial PRIMARY KEY,
  received_at  timestamptz NOT NULL DEFAULT now(),
  path         text        NOT NULL,
  body_sha256  text        NOT NULL,
  body         text        NOT NULL,
  UNIQUE (path, body_sha256)
);

CREATE TABLE IF NOT EXISTS dead_letters (
  id           bigserial PRIMARY KEY,
  received_at  timestamptz NOT NULL DEFAULT now(),
  path         text        NOT NULL,
  reason       text        NOT NULL,
  body         text        NOT NULL
);

CREATE TABLE IF NOT EXISTS chain_state (
  id                   integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  pox_v1_unlock_height bigint,
  pox_v2_unlock_height bigint,
  pox_v3_unlock_height bigint
);

CREATE TABLE IF NOT EXISTS burn_blocks (
  burn_block_hash        text    PRIMARY KEY,
  burn_block_height      bigint  NOT NULL,
  parent_burn_block_hash text    NOT NULL,
  consensus_hash         text    NOT NULL,
  burn_amount            numeric NOT NULL,
  reward_recipients      json    NOT NULL,
  reward_slot_holders    json    NOT NULL,
  canonical              boolean NOT NULL DEFAULT true,
  seq                    bigint  NOT NULL
);
CREATE INDEX IF NOT EXISTS burn_blocks_height ON burn_blocks (burn_block_height);

CREATE TABLE IF NOT EXISTS blocks (
  index_block_hash           text    PRIMARY KEY,
  block_hash                 text    NOT NULL,
  block_height               bigint  NOT NULL,
  block_time                 bigint  NOT NULL,
  burn_block_time            bigint  NOT NULL,
  burn_block_hash            text    NOT NULL,
  burn_block_height          bigint  NOT NULL,
  parent_index_block_hash    text    NOT NULL,
  parent_block_hash          text    NOT NULL,
  parent_microblock_hash     text    NOT NULL,
  parent_microblock_sequence integer NOT NULL,
  parent_burn_block_time     bigint  NOT NULL,
  parent_burn_block_hash     text    NOT NULL,
  parent_burn_block_height   bigint  NOT NULL,
  miner_txid                 text    NOT NULL,
  consensus_hash             text    NOT NULL,
  tenure_height              bigint,
  cycle_number               bigint,
  signer_bitvec              text,
  signer_signature_hash      text,
  tx_count                   integer NOT NULL,
  execution_cost_read_count   bigint NOT NULL,
  execution_cost_read_length  bigint NOT NULL,
  execution_cost_runtime      bigint NOT NULL,
  execution_cost_write_count  bigint NOT NULL,
  execution_cost_write_length bigint NOT NULL,
  canonical                  boolean NOT NULL,
  seq                        bigint  NOT NULL
);
CREATE INDEX IF NOT EXISTS blocks_height ON blocks (block_height DESC) WHERE canonical;
CREATE INDEX IF NOT EXISTS blocks_height_all ON blocks (block_height);
CREATE INDEX IF NOT EXISTS blocks_hash ON blocks (block_hash);
CREATE INDEX IF NOT EXISTS blocks_burn_height ON blocks (burn_block_height);
CREATE INDEX IF NOT EXISTS blocks_parent ON blocks (parent_index_block_hash);

-- A microblock. index_block_hash/block_hash name the anchor block that confirmed it ('' while unconfirmed).
CREATE TABLE IF NOT EXISTS microblocks (
  microblock_hash          text    NOT NULL,
  index_block_hash         text    NOT NULL DEFAULT '',
  microblock_sequence      integer NOT NULL,
  microblock_parent_hash   text    NOT NULL,
  parent_index_block_hash  text    NOT NULL,
  block_height             bigint  NOT NULL,
  block_hash               text    NOT NULL DEFAULT '',
  parent_burn_block_height bigint  NOT NULL,
  parent_burn_block_hash   text    NOT NULL,
  parent_burn_block_time   bigint  NOT NULL,
  block_time               bigint  NOT NULL,
  tx_count                 integer NOT NULL DEFAULT 0,
  microblock_canonical     boolean NOT NULL,
  canonical                boolean NOT NULL,
  seq                      bigint  NOT NULL,
  PRIMARY KEY (microblock_hash, index_block_hash)
);
CREATE INDEX IF NOT EXISTS microblocks_parent ON microblocks (parent_index_block_hash);
CREATE INDEX IF NOT EXISTS microblocks_anchor ON microblocks (index_block_hash);

-- A transaction as placed in one block (or one unconfirmed microblock: index_block_hash = '').
CREATE TABLE IF NOT EXISTS txs (
  tx_id                      text    NOT NULL,
  index_block_hash           text    NOT NULL,
  microblock_hash            text    NOT NULL DEFAULT '',
  block_hash                 text    NOT NULL,
  block_height               bigint  NOT NULL,
  block_time                 bigint  NOT NULL,
  burn_block_time            bigint  NOT NULL,
  burn_block_height          bigint  NOT NULL,
  parent_burn_block_time     bigint  NOT NULL,
  parent_block_hash          text    NOT NULL,
  parent_index_block_hash    text    NOT NULL,
  tx_index                   integer NOT NULL,
  microblock_sequence        integer NOT NULL,
  microblock_parent_hash     text    NOT NULL DEFAULT '',
  raw_tx                     text    NOT NULL,
  tx_type                    text    NOT NULL,
  nonce                      bigint  NOT NULL,
  fee_rate                   numeric NOT NULL,
  sender_address             text    NOT NULL,
  sponsor_address            text,
  sponsored                  boolean NOT NULL,
  token_transfer_recipient   text,
  token_transfer_amount      numeric,
  contract_call_contract_id  text,
  smart_contract_contract_id text,
  status                     text    NOT NULL,
  raw_result                 text    NOT NULL,
  vm_error                   text,
  event_count                integer NOT NULL,
  execution_cost_read_count   bigint NOT NULL,
  execution_cost_read_length  bigint NOT NULL,
  execution_cost_runtime      bigint NOT NULL,
  execution_cost_write_count  bigint NOT NULL,
  execution_cost_write_length bigint NOT NULL,
  contract_abi               json,
  api                        json    NOT NULL,
  canonical                  boolean NOT NULL,
  microblock_canonical       boolean NOT NULL,
  seq                        bigint  NOT NULL,
  PRIMARY KEY (tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX IF NOT EXISTS txs_block ON txs (index_block_hash, tx_index);
CREATE INDEX IF NOT EXISTS txs_microblock ON txs (microblock_hash);
CREATE INDEX IF NOT EXISTS txs_sender ON txs (sender_address);
CREATE INDEX IF NOT EXISTS txs_sponsor ON txs (sponsor_address) WHERE sponsor_address IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_recipient ON txs (token_transfer_recipient) WHERE token_transfer_recipient IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_contract_call ON txs (contract_call_contract_id) WHERE contract_call_contract_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS txs_smart_contract ON txs (smart_contract_contract_id) WHERE smart_contract_contract_id IS NOT NULL;

-- Every event of every tx. event_index is the index within its tx (0-based, in node order).
CREATE TABLE IF NOT EXISTS events (
  tx_id               text    NOT NULL,
  index_block_hash    text    NOT NULL,
  microblock_hash     text    NOT NULL DEFAULT '',
  event_index         integer NOT NULL,
  block_event_index   integer NOT NULL,
  tx_index            integer NOT NULL,
  block_height        bigint  NOT NULL,
  event_type          text    NOT NULL,
  asset_event_type    text,
  sender              text,
  recipient           text,
  amount              numeric,
  asset_identifier    text,
  value_hex           text,
  contract_id         text,
  topic               text,
  locked_address      text,
  unlock_height       bigint,
  api                 json    NOT NULL,
  canonical           boolean NOT NULL,
  microblock_canonical boolean NOT NULL,
  PRIMARY KEY (tx_id, index_block_hash, microblock_hash, event_index)
);
CREATE INDEX IF NOT EXISTS events_sender ON events (sender) WHERE sender IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_recipient ON events (recipient) WHERE recipient IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_locked ON events (locked_address) WHERE locked_address IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_contract ON events (contract_id, block_height DESC) WHERE contract_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_asset ON events (asset_identifier, value_hex) WHERE asset_identifier IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_block ON events (index_block_hash);

-- Rewards paid to miners when they mature.
CREATE TABLE IF NOT EXISTS miner_rewards (
  index_block_hash           text    NOT NULL,
  from_index_block_hash      text    NOT NULL,
  recipient                  text    NOT NULL,
  block_height               bigint  NOT NULL,
  coinbase_amount            numeric NOT NULL,
  tx_fees_anchored           numeric NOT NULL,
  tx_fees_streamed_confirmed numeric NOT NULL,
  tx_fees_streamed_produced  numeric NOT NULL,
  canonical                  boolean NOT NULL,
  PRIMARY KEY (index_block_hash, from_index_block_hash, recipient)
);
CREATE INDEX IF NOT EXISTS miner_rewards_recipient ON miner_rewards (recipient);

-- Mempool: every tx ever seen pending. status: pending | dropped_* | mined.
CREATE TABLE IF NOT EXISTS mempool_txs (
  tx_id                      text    PRIMARY KEY,
  raw_tx                     text    NOT NULL,
  tx_type                    text    NOT NULL,
  nonce                      bigint  NOT NULL,
  fee_rate                   numeric NOT NULL,
  sender_address             text    NOT NULL,
  sponsor_address            text,
  sponsored                  boolean NOT NULL,
  token_transfer_recipient   text,
  token_transfer_amount      numeric,
  contract_call_contract_id  text,
  smart_contract_contract_id text,
  byte_size                  integer NOT NULL,
  api                        json    NOT NULL,
  receipt_time               bigint  NOT NULL,
  receipt_block_height       bigint  NOT NULL,
  status                     text    NOT NULL,
  pruned                     boolean NOT NULL,
  replaced_by_tx_id          text,
  seq                        bigint  NOT NULL
);
CREATE INDEX IF NOT EXISTS mempool_pending ON mempool_txs (receipt_time DESC) WHERE NOT pruned;
CREATE INDEX IF NOT EXISTS mempool_sender ON mempool_txs (sender_address) WHERE NOT pruned;
CREATE INDEX IF NOT EXISTS mempool_sponsor ON mempool_txs (sponsor_address) WHERE NOT pruned;
CREATE INDEX IF NOT EXISTS mempool_recipient ON mempool_txs (token_transfer_recipient) WHERE NOT pruned;
CREATE INDEX IF NOT EXISTS mempool_contract_call ON mempool_txs (contract_call_contract_id) WHERE NOT pruned;
CREATE INDEX IF NOT EXISTS mempool_sender_nonce ON mempool_txs (sender_address, nonce);

-- Monotonic sequence shared by every ingested change (ordering and, later, push resume cursors).
CREATE SEQUENCE IF NOT EXISTS change_seq;
