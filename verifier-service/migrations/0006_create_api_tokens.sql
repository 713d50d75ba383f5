-- Bearer tokens for the gRPC API. Only a token's SHA-256 is stored: a database dump grants
-- nothing. `scopes` is a subset of submit, read, admin, fetch; `site_domains` binds the token to
-- those sites (empty: every site). Revoked tokens are kept for the record.
CREATE TABLE api_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  name text NOT NULL CHECK (name <> '' AND octet_length(name) <= 128),
  scopes text[] NOT NULL CHECK (cardinality(scopes) > 0
    AND scopes <@ ARRAY['submit', 'read', 'admin', 'fetch']),
  site_domains text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_tokens_active_idx ON api_tokens (created_at) WHERE revoked_at IS NULL;
