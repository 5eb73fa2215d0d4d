-- Wallet accounts: one row per principal × transaction placement of the canonical anchored chain, so an
-- address's transaction pages and their totals never scan the principal's history or UNION six indexes.
--
-- roles says how the principal takes part in the tx (bit or):
--     1 sender            2 sponsor (sponsored txs)       4 token-transfer recipient
--     8 contract called  16 contract deployed            32 sender/recipient of an STX event
--    64 sender/recipient of an FT event                 128 sender/recipient of an NFT event
--   256 (a flag) the tx is a genesis tx of a boot block (height 0) that block 1 adopted (src/store/ingest.ts): the
--       reference writes no principal_stx_txs rows for those
-- The reference's sets (v8.13.6) are unions of these:
--   principal_stx_txs (v1 /transactions)                         roles & 63 <> 0 AND roles & 256 = 0
--   v1 /transactions_with_transfers (txs + events, no sponsor)   roles & 253 <> 0
--   v2 /addresses/{a}/transactions (principal_stx_txs + events)  roles & 256 = 0 OR roles & 224 <> 0
--
-- Only rows of canonical anchored blocks are kept (index_block_hash <> '', microblock_canonical): a row exists exactly
-- while its block is canonical, so the canonical flags are the row's presence. Rows of unconfirmed microblocks
-- (index_block_hash = '') are added at read time (principal_tx_roles(ARRAY[''])). principal_tx_counts holds the three
-- totals per principal. Both are maintained by principal_txs_apply(blocks, sign) through the derived hook
-- (sql/0016_derived_hook.sql) and backfilled below.
CREATE TABLE IF NOT EXISTS principal_txs (
  principal           text     NOT NULL,
  tx_id               text     NOT NULL,
  index_block_hash    text     NOT NULL,
  microblock_hash     text     NOT NULL,
  block_height        bigint   NOT NULL,
  microblock_sequence integer  NOT NULL,
  tx_index            integer  NOT NULL,
  roles               smallint NOT NULL,
  PRIMARY KEY (principal, tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX IF NOT EXISTS principal_txs_order
  ON principal_txs (principal, block_height DESC, microblock_sequence DESC, tx_index DESC);
CREATE INDEX IF NOT EXISTS principal_txs_block ON principal_txs (index_block_hash);

CREATE TABLE IF NOT EXISTS principal_tx_counts (
  principal      text   PRIMARY KEY,
  stx_txs        bigint NOT NULL DEFAULT 0,
  transfer_txs   bigint NOT NULL DEFAULT 0,
  all_txs        bigint NOT NULL DEFAULT 0
);

-- The (principal, placement, roles) rows of the txs placed in these blocks ('' = the unconfirmed microblock stream).
CREATE OR REPLACE FUNCTION principal_tx_roles(blocks text[])
RETURNS TABLE (principal text, tx_id text, index_block_hash text, microblock_hash text, block_height bigint,
               microblock_sequence integer, tx_index integer, roles smallint)
LANGUAGE sql STABLE AS $$
  SELECT r.principal, t.tx_id, t.index_block_hash, t.microblock_hash, t.block_height, t.microblock_sequence, t.tx_index,
    (bit_or(r.role) | CASE WHEN t.block_height = 1 AND t.microblock_hash = '' AND t.seq < (
      SELECT b.seq FROM blocks b WHERE b.index_block_hash = t.index_block_hash) THEN 256 ELSE 0 END)::smallint
  FROM txs t
  CROSS JOIN LATERAL (
    VALUES (t.sender_address, 1), (CASE WHEN t.sponsored THEN t.sponsor_address END, 2),
           (t.token_transfer_recipient, 4), (t.contract_call_contract_id, 8), (t.smart_contract_contract_id, 16)
    UNION ALL
    SELECT p, CASE e.event_type WHEN 'stx_asset' THEN 32 WHEN 'fungible_token_asset' THEN 64 ELSE 128 END
    FROM events e CROSS JOIN LATERAL (VALUES (e.sender), (e.recipient)) AS ep(p)
    WHERE e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash AND e.microblock_hash = t.microblock_hash
      AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
  ) AS r(principal, role)
  WHERE t.index_block_hash = ANY(blocks) AND t.microblock_canonical AND (t.index_block_hash <> '' OR t.canonical)
    AND r.principal IS NOT NULL
  GROUP BY r.principal, t.tx_id, t.index_block_hash, t.microblock_hash, t.block_height, t.microblock_sequence, t.tx_index, t.seq
$$;

CREATE OR REPLACE FUNCTION principal_txs_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign > 0 THEN
    WITH ins AS (
      INSERT INTO principal_txs AS p
      SELECT * FROM principal_tx_roles(array_remove(blocks, ''))
      ON CONFLICT DO NOTHING
      RETURNING p.principal, p.roles
    )
    INSERT INTO principal_tx_counts AS c (principal, stx_txs, transfer_txs, all_txs)
    SELECT principal, count(*) FILTER (WHERE roles & 63 <> 0 AND roles & 256 = 0), count(*) FILTER (WHERE roles & 253 <> 0),
      count(*) FILTER (WHERE roles & 256 = 0 OR roles & 224 <> 0)
    FROM ins GROUP BY principal
    ON CONFLICT (principal) DO UPDATE SET
      stx_txs = c.stx_txs + EXCLUDED.stx_txs,
      transfer_txs = c.transfer_txs + EXCLUDED.transfer_txs,
      all_txs = c.all_txs + EXCLUDED.all_txs;
  ELSE
    WITH del AS (
      DELETE FROM principal_txs WHERE index_block_hash = ANY(array_remove(blocks, ''))
      RETURNING principal, roles
    ), d AS (
      SELECT principal, count(*) FILTER (WHERE roles & 63 <> 0 AND roles & 256 = 0) AS s,
        count(*) FILTER (WHERE roles & 253 <> 0) AS t, count(*) FILTER (WHERE roles & 256 = 0 OR roles & 224 <> 0) AS a
      FROM del GROUP BY principal
    )
    UPDATE principal_tx_counts c SET stx_txs = c.stx_txs - d.s, transfer_txs = c.transfer_txs - d.t, all_txs = c.all_txs - d.a
    FROM d WHERE c.principal = d.principal;
  END IF;
END
$$;

INSERT INTO derived_appliers (name, fn) VALUES ('principal_txs', 'principal_txs_apply') ON CONFLICT DO NOTHING;

-- A database ingested before this migration: the rows of its canonical anchored blocks.
INSERT INTO principal_txs
SELECT * FROM principal_tx_roles(ARRAY(SELECT index_block_hash FROM blocks WHERE canonical))
ON CONFLICT DO NOTHING;
INSERT INTO principal_tx_counts (principal, stx_txs, transfer_txs, all_txs)
SELECT principal, count(*) FILTER (WHERE roles & 63 <> 0 AND roles & 256 = 0), count(*) FILTER (WHERE roles & 253 <> 0),
      count(*) FILTER (WHERE roles & 256 = 0 OR roles & 224 <> 0)
FROM principal_txs GROUP BY principal
ON CONFLICT (principal) DO NOTHING;

-- Nonces: the sponsor's nonce (the reference's txs.sponsor_nonce / mempool_txs.sponsor_nonce) as a column, with the
-- indexes the nonce reads use.
ALTER TABLE txs ADD COLUMN IF NOT EXISTS sponsor_nonce bigint;
ALTER TABLE mempool_txs ADD COLUMN IF NOT EXISTS sponsor_nonce bigint;
CREATE INDEX IF NOT EXISTS txs_sender_nonce ON txs (sender_address, nonce DESC) WHERE canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS txs_sponsor_nonce ON txs (sponsor_address, sponsor_nonce DESC)
  WHERE sponsored AND canonical AND microblock_canonical;
CREATE INDEX IF NOT EXISTS mempool_sponsor_nonce ON mempool_txs (sponsor_address, sponsor_nonce) WHERE sponsored;
-- Filled from the decoded tx (api json) on every insert, so neither ingest path changes; backfilled below.
CREATE OR REPLACE FUNCTION fill_sponsor_nonce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.sponsor_nonce := (NEW.api ->> 'sponsor_nonce')::bigint;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS txs_sponsor_nonce ON txs;
CREATE TRIGGER txs_sponsor_nonce BEFORE INSERT ON txs FOR EACH ROW WHEN (NEW.sponsored) EXECUTE FUNCTION fill_sponsor_nonce();
DROP TRIGGER IF EXISTS mempool_txs_sponsor_nonce ON mempool_txs;
CREATE TRIGGER mempool_txs_sponsor_nonce BEFORE INSERT ON mempool_txs FOR EACH ROW WHEN (NEW.sponsored)
  EXECUTE FUNCTION fill_sponsor_nonce();
UPDATE txs SET sponsor_nonce = (api ->> 'sponsor_nonce')::bigint WHERE sponsored AND sponsor_nonce IS NULL;
UPDATE mempool_txs SET sponsor_nonce = (api ->> 'sponsor_nonce')::bigint WHERE sponsored AND sponsor_nonce IS NULL;
