-- Real-time push: the log of every published room message, in publication order. `seq` is the resume cursor a
-- client hands back on reconnect; payloads are stored as `json` (not jsonb) so a replay is byte-for-byte the live
-- message. Written by the single publisher (the ingest process) right after the ingest COMMIT, one transaction per
-- observer message; `event_id` (event_log.id) + `ord` make a re-publication of the same message a no-op.
CREATE TABLE IF NOT EXISTS push_messages (
  seq         bigserial   PRIMARY KEY,
  event_id    bigint      NOT NULL,
  ord         integer     NOT NULL,
  room        text        NOT NULL,
  event       text        NOT NULL,
  args        json        NOT NULL,
  meta        json,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, ord)
);
CREATE INDEX IF NOT EXISTS push_messages_room ON push_messages (room, seq);
