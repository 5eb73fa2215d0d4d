-- Real-time push, crash safety: one row per stored observer message whose push messages are not yet in
-- push_messages. Written inside the ingest transaction (only when a publisher is attached to the pipeline) with the
-- ingest result the publisher needs; deleted in the transaction that appends the message's push rows. A row left
-- behind means the process died (or the publication failed) between COMMIT and publication: the publisher rebuilds
-- and publishes those messages at startup, so resume by cursor stays gap-free.
CREATE TABLE IF NOT EXISTS push_outbox (
  event_id    bigint      PRIMARY KEY,
  result      jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
