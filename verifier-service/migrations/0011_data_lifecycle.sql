-- Data lifecycle (issue 17): what the retention sweeper needs to find old rows by index, and
-- the erasure tombstones.

-- The sweeper deletes FAILED mentions whose failure (updated_at) is older than
-- --failed_mention_retention, a batch at a time, oldest first; this index keeps each batch to
-- the rows it deletes instead of a scan of every mention.
CREATE INDEX mentions_failed_updated_idx ON mentions (updated_at) WHERE state = 'FAILED';

-- Accepted items older than --accepted_item_retention (the outbox, after consumers had it).
CREATE INDEX ingest_items_accepted_idx ON ingest_items (accepted_at);

-- Erasure tombstones: salted SHA-256 hashes, never the erased key itself. SOURCE: of an erased
-- mention's source hash (mentions.source_hash, the SHA-256 of the normalized source URL);
-- HOST: of an erased source host's text. A submission whose source or source host matches a
-- tombstone of its site (or of every site: site_domain '') is recorded FAILED `erased` without a
-- fetch and without content. `request_hash` is the salted hash of the erasure request that made
-- the row (its kind and key, or the mention id), so that `erase --undo` of that request removes
-- exactly its rows; `site_domain` is the site the erasure was for ('' for an unbound token).
CREATE TABLE erasures (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('SOURCE', 'HOST')),
  key_hash bytea NOT NULL CHECK (octet_length(key_hash) = 32),
  site_domain text NOT NULL DEFAULT '',
  request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (key_hash, kind, site_domain, request_hash)
);
CREATE INDEX erasures_request_idx ON erasures (request_hash);

-- The salt of every tombstone hash, made once per database, so that the tombstones cannot be
-- checked against a list of guessed URLs without it (it protects an export of `erasures`, not a
-- copy of the whole database).
CREATE TABLE erasure_salt (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  salt bytea NOT NULL CHECK (octet_length(salt) = 32)
);
INSERT INTO erasure_salt (salt)
VALUES (sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text
                          || clock_timestamp()::text, 'UTF8')));
