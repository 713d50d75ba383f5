-- Feed ingest (issue 6): publishers and their trust lists, idempotency records, the outbox of
-- accepted items, and the dead-letter queue of quarantined deliveries.

-- A source of feed items, named as in X-Provenance-Source. Never deleted: disabled instead, so
-- decisions and items keep naming an existing publisher.
CREATE TABLE publishers (
  name text PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 128),
  -- A verified publisher's malformed provenance metadata is quarantined instead of dropped.
  verified boolean NOT NULL DEFAULT false,
  -- Items without a valid signature are dropped (`signature_required`).
  require_signature boolean NOT NULL DEFAULT false,
  -- How long decisions are kept for idempotency, in seconds; 0: the server default (72 h).
  retention_seconds bigint NOT NULL DEFAULT 0 CHECK (retention_seconds >= 0),
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A publisher's trust list; several active keys = rotation. `key_material` is what verification
-- needs: the 32-byte Ed25519 public key, or the HMAC secret itself. HMAC is symmetric, so the
-- secret must be usable as is; it is stored in plain bytes here and never returned by any RPC.
-- Encryption at rest (a key-encryption key outside the database) is issue 9.
CREATE TABLE publisher_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  publisher text NOT NULL REFERENCES publishers (name),
  algorithm text NOT NULL CHECK (algorithm IN ('ed25519', 'hmac-sha256')),
  key_material bytea NOT NULL,
  -- First 8 hex characters of SHA-256 of key_material, to tell keys apart.
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
-- The same key is active at most once per publisher (adding it again is a no-op).
CREATE UNIQUE INDEX publisher_keys_active_idx ON publisher_keys (publisher, algorithm, key_material)
  WHERE revoked_at IS NULL;

-- Idempotency records: one per (publisher, canonical content hash) while not expired. A row whose
-- expires_at has passed is no longer a duplicate (it is replaced by the next delivery) and is
-- deleted by the sweeper.
CREATE TABLE ingest_decisions (
  publisher text NOT NULL,
  content_hash text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
  item_id text NOT NULL,
  decision text NOT NULL CHECK (decision IN ('accepted', 'dropped', 'quarantined')),
  -- Empty for accepted; the drop or quarantine reason otherwise.
  reason text NOT NULL DEFAULT '',
  signature_valid boolean NOT NULL,
  -- Set for quarantined: the dead letter holding the delivery.
  dead_letter_id uuid,
  decided_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (publisher, content_hash)
);
CREATE INDEX ingest_decisions_expires_idx ON ingest_decisions (expires_at);

-- The outbox: accepted items in acceptance order; consumers page by `cursor`.
CREATE TABLE ingest_items (
  cursor bigserial PRIMARY KEY,
  publisher text NOT NULL,
  item_id text NOT NULL,
  content_hash text NOT NULL,
  canonical_body bytea NOT NULL,
  signature_valid boolean NOT NULL,
  accepted_at timestamptz NOT NULL DEFAULT now()
);

-- Quarantined deliveries, kept whole (headers, raw body, parsed fields) so they can be replayed.
CREATE TABLE dead_letters (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  publisher text NOT NULL,
  item_id text NOT NULL,
  content_hash text NOT NULL,
  reason text NOT NULL,
  signature_header text NOT NULL,
  message_id text NOT NULL,
  timestamp_header text NOT NULL,
  raw_body bytea NOT NULL,
  canonical_body bytea NOT NULL,
  is_synthetic boolean,
  digital_source_type text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_created_idx ON dead_letters (created_at, id);
CREATE INDEX dead_letters_publisher_idx ON dead_letters (publisher, created_at, id);
-- Accepting an item makes its quarantined copies moot (see PgIngestStore::Record).
CREATE INDEX dead_letters_item_idx ON dead_letters (publisher, content_hash);
