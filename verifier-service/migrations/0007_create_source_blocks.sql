-- Blocked mention sources (issue 9, abuse controls). A submission whose source matches an entry
-- of its target's site, or a global entry (site_id NULL), is stored FAILED `blocked` without any
-- fetch and without a verification job; the sender still gets the usual acceptance.
-- DOMAIN: `value` is a serialized host (lowercase ASCII, IDNA applied) and blocks that host and
-- its subdomains, on a label boundary (the store looks up the host and each parent domain).
-- PREFIX: `value` is a normalized http(s) URL; blocks normalized sources starting with it.
CREATE TABLE source_blocks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  site_id uuid REFERENCES sites (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('DOMAIN', 'PREFIX')),
  value text NOT NULL CHECK (value <> '' AND octet_length(value) <= 2048),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- One entry per (scope, kind, value); global entries have no site_id, hence two indexes.
CREATE UNIQUE INDEX source_blocks_site_unique_idx ON source_blocks (site_id, kind, value)
  WHERE site_id IS NOT NULL;
CREATE UNIQUE INDEX source_blocks_global_unique_idx ON source_blocks (kind, value)
  WHERE site_id IS NULL;
CREATE INDEX source_blocks_lookup_idx ON source_blocks (kind, value);

-- The serialized host of the normalized source, for the per-source-host PENDING limit (set by
-- Submit from now on; NULL on older rows, which the limit therefore does not count).
ALTER TABLE mentions ADD COLUMN source_host text;
CREATE INDEX mentions_pending_source_host_idx ON mentions (source_host) WHERE state = 'PENDING';
