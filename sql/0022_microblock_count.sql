-- The total of /extended/v1/microblock as the reference keeps it (its chain_tip.microblock_count): the number of
-- microblocks received in accepted /new_microblocks messages (a stream on the canonical tip, without a gap), counted
-- when received and never decremented (microblocks that only reach us inside a block are not counted; a microblock
-- fork does not uncount). Written by the microblock ingest (src/store/ingest.ts ingestMicroblocks).
CREATE TABLE IF NOT EXISTS microblock_stream_count (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  n  bigint  NOT NULL
);

-- A database ingested before this migration: the streamed microblocks that were stored.
INSERT INTO microblock_stream_count (id, n)
SELECT true, count(*) FROM (
  SELECT DISTINCT e.id, lower(t ->> 'microblock_hash') AS h
  FROM event_log e, json_array_elements(e.body::json -> 'transactions') t
  WHERE e.path = '/new_microblocks' AND t ->> 'microblock_hash' IS NOT NULL
) m
WHERE EXISTS (SELECT 1 FROM microblocks mb WHERE mb.microblock_hash = m.h)
ON CONFLICT (id) DO NOTHING;
