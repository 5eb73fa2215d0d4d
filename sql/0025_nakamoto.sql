-- Nakamoto views: the signer signatures of a block, tenure and burn-block lookups.
--
-- blocks.signer_signatures: the node's `/new_block` `signer_signature` list (0x lower-case hex, in the node's order;
-- NULL when the message has none, i.e. before Nakamoto). Both ingest paths insert a block with
-- json_populate_record(blocks, <block JSON>), so the new key of the block row (src/observer/to-update.ts) is written by
-- the general transaction and by ingest_block_fast without touching either. A block's canonical flag covers reorgs.
ALTER TABLE blocks ADD COLUMN IF NOT EXISTS signer_signatures text[];

-- Backfill from the stored node messages: the message of each stored block (the key filter is textual, cheap, and
-- exact: `"signer_signature_hash"` does not contain `"signer_signature"` with its closing quote); the first message
-- of a block wins, as on ingest (a block re-sent in another encoding is not stored again).
UPDATE blocks b
SET signer_signatures = s.sigs
FROM (
  SELECT DISTINCT ON (ibh) ibh, sigs
  FROM (
    SELECT e.id,
      '0x' || lower(regexp_replace(j->>'index_block_hash', '^0[xX]', '')) AS ibh,
      ARRAY(
        SELECT '0x' || lower(regexp_replace(x, '^0[xX]', ''))
        FROM json_array_elements_text(j->'signer_signature') WITH ORDINALITY AS t(x, n)
        ORDER BY n
      ) AS sigs
    -- a body may escape NUL (\u0000, e.g. inside a Clarity string) which PostgreSQL's JSON operators refuse to
    -- decode: it is made \u0001 first (this only touches string contents, never the keys read here)
    FROM event_log e, LATERAL (SELECT replace(e.body, '\u0000', '\u0001')::json AS j) m
    WHERE e.path = '/new_block' AND e.body LIKE '%"signer_signature"%'
      AND json_typeof(j->'signer_signature') = 'array'
  ) r
  ORDER BY ibh, id
) s
WHERE b.index_block_hash = s.ibh AND b.signer_signatures IS NULL;

-- /extended/v2/block-tenures/{tenure_height}/blocks pages a tenure's blocks newest first and counts them.
CREATE INDEX IF NOT EXISTS blocks_tenure_height ON blocks (tenure_height, block_height DESC) WHERE tenure_height IS NOT NULL;
-- /extended/v2/burn-blocks/{hash}[/blocks] and /extended/v1/block/by_burn_block_hash/{hash}.
CREATE INDEX IF NOT EXISTS blocks_burn_hash ON blocks (burn_block_hash);
-- /extended/v2/burn-blocks pages distinct burn heights of canonical blocks, newest first.
CREATE INDEX IF NOT EXISTS blocks_canonical_burn_height ON blocks (burn_block_height DESC, block_height DESC) WHERE canonical;
-- /extended/v2/blocks/average-times reads the canonical blocks of the last 30 days by their effective time (block_time,
-- or the burn block time where a node sent 0): src/store/tenures.ts averageBlockTimes uses this exact expression.
CREATE INDEX IF NOT EXISTS blocks_effective_time ON blocks ((CASE WHEN block_time = 0 THEN burn_block_time ELSE block_time END))
  WHERE canonical;
