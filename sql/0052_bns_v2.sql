-- BNS-V2 (beyond the reference, which never indexed it): the community contract's name operations, from its
-- print events, on the derived hook as bns_names (sql/0050_bns.sql): a row present is a canonical one.
--
-- Prints (contracts/BNS-V2.clar): {topic: "new-name" | "transfer-name" | "renew-name" | "burn-name" | "new-airdrop",
-- owner, name: {name, namespace}, id, properties: (optional name-properties) | registered-at}. The owner shown is the
-- latest canonical NFT event of the name's id (so marketplace sales and plain SIP-09 transfers count), else the print's.
CREATE TABLE IF NOT EXISTS bns_v2_contracts (
  contract_id text PRIMARY KEY
);
INSERT INTO bns_v2_contracts (contract_id) VALUES ('SP2QEZ06AGJ3RKJPBV14SY1V5BBFNAW33D96YPGZF.BNS-V2') ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS bns_v2_names (
  name             text    NOT NULL,
  namespace_id     text    NOT NULL,
  contract_id      text    NOT NULL,
  nft_id           numeric NOT NULL,
  op               text    NOT NULL,
  owner            text,
  registered_at    bigint,
  renewal_height   bigint,
  block_height     bigint  NOT NULL,
  tx_id            text    NOT NULL,
  tx_index         integer NOT NULL,
  event_index      integer NOT NULL,
  index_block_hash text    NOT NULL
);
CREATE INDEX IF NOT EXISTS bns_v2_names_name ON bns_v2_names (name, block_height DESC, tx_index DESC, event_index DESC);
CREATE INDEX IF NOT EXISTS bns_v2_names_namespace ON bns_v2_names (namespace_id, name);
CREATE INDEX IF NOT EXISTS bns_v2_names_owner ON bns_v2_names (owner);
CREATE INDEX IF NOT EXISTS bns_v2_names_block ON bns_v2_names (index_block_hash);

CREATE OR REPLACE FUNCTION bns_v2_apply(blocks text[], sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF sign < 0 THEN
    DELETE FROM bns_v2_names WHERE index_block_hash = ANY(blocks);
    RETURN;
  END IF;
  INSERT INTO bns_v2_names (name, namespace_id, contract_id, nft_id, op, owner, registered_at, renewal_height,
    block_height, tx_id, tx_index, event_index, index_block_hash)
  SELECT bns_utf8(v->'name'->>'name') || '.' || bns_utf8(v->'name'->>'namespace'), bns_utf8(v->'name'->>'namespace'),
    contract_id, (v->>'id')::numeric, v->>'topic', NULLIF(v->>'owner', ''),
    COALESCE((v->'properties'->'some'->'registered-at'->>'some')::bigint, (v->>'registered-at')::bigint),
    (v->'properties'->'some'->>'renewal-height')::bigint,
    block_height, tx_id, tx_index, event_index, index_block_hash
  FROM (
    SELECT bns_cv(e.value_hex) AS v, e.contract_id, e.block_height, e.tx_id, e.tx_index, e.event_index, e.index_block_hash
    FROM events e
    JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
    WHERE e.index_block_hash = ANY(blocks) AND e.index_block_hash <> '' AND e.microblock_canonical
      AND e.event_type = 'smart_contract_log' AND e.topic = 'print'
      AND e.contract_id IN (SELECT contract_id FROM bns_v2_contracts)
      AND t.status = 'success'
  ) p
  WHERE jsonb_typeof(v) = 'object'
    AND v->>'topic' IN ('new-name', 'transfer-name', 'renew-name', 'burn-name', 'new-airdrop')
    AND bns_utf8(v->'name'->>'name') IS NOT NULL AND bns_utf8(v->'name'->>'namespace') IS NOT NULL
    AND jsonb_typeof(v->'id') = 'number';
END
$$;

INSERT INTO derived_appliers (name, fn) VALUES ('bns_v2', 'bns_v2_apply') ON CONFLICT DO NOTHING;

-- Backfill: the canonical blocks carrying prints of the contract.
SELECT bns_v2_apply(ARRAY(
  SELECT DISTINCT e.index_block_hash FROM events e JOIN blocks b USING (index_block_hash)
  WHERE b.canonical AND e.contract_id IN (SELECT contract_id FROM bns_v2_contracts)
    AND e.event_type = 'smart_contract_log' AND e.topic = 'print'), 1);
