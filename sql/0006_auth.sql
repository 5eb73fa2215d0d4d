-- API keys (x-api-key). Only the SHA-256 of a key is stored; the key itself is shown once by `keys create`.
CREATE TABLE IF NOT EXISTS api_keys (
  id bigserial PRIMARY KEY,
  name text NOT NULL UNIQUE,
  -- lower-case hex SHA-256 of the key
  key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  -- requests per minute for this key; NULL: RATE_LIMIT_KEY_RPM; 0: unlimited
  rpm integer CHECK (rpm IS NULL OR rpm >= 0),
  revoked_at timestamptz
);
