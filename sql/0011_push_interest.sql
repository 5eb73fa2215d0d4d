-- Which push rooms anyone follows (src/push/interest.ts). The publisher builds and stores messages only for these
-- rooms (PUSH_ROOMS=subscribed): an api process (`owner`, random per process start) lists a room while it has a
-- subscriber in it (refreshed periodically) and for the resume window after its last subscriber left, so a client
-- that reconnects with its cursor within that window gets everything it missed. In the database, not in memory, so
-- it holds across restarts and across processes (an ingest-only process learns what the api processes' clients
-- follow). Rows long expired are deleted by the publishers.
CREATE TABLE IF NOT EXISTS push_interest (
  room  text        NOT NULL,
  owner text        NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (room, owner)
);
