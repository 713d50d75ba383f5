-- Webmentions: one row per (source, target) pair after normalization. The hashes are SHA-256 of
-- the normalized URLs and are the de-duplication key; `source` and `target` keep what the sender
-- submitted the first time.
CREATE TABLE mentions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source text NOT NULL,
  target text NOT NULL,
  source_hash bytea NOT NULL CHECK (octet_length(source_hash) = 32),
  target_hash bytea NOT NULL CHECK (octet_length(target_hash) = 32),
  state text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'VERIFIED', 'FAILED')),
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_hash, target_hash)
);
