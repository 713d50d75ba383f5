-- What verification learned about a mention's source, stored on the mention itself (a VERIFIED
-- mention updated by re-verification is updated in place, never a second row), and the site it
-- belongs to, so that a site can list its mentions. Every new column is nullable or has a
-- default: rows stored before this migration stay valid (and PENDING/FAILED rows have no content).
ALTER TABLE mentions
  -- The target's serialized host (the site). Set by intake from now on; older rows are
  -- filled from the stored target below.
  ADD COLUMN target_domain text,
  -- The kind of mention, set once verified.
  ADD COLUMN type text CHECK (type IN ('mention', 'reply', 'like', 'repost', 'bookmark', 'rsvp')),
  ADD COLUMN rsvp text,
  ADD COLUMN author_name text,
  ADD COLUMN author_url text,
  ADD COLUMN author_photo text,
  ADD COLUMN author_note text,
  ADD COLUMN entry_name text,
  ADD COLUMN published text,
  ADD COLUMN url text,
  ADD COLUMN content_text text,
  -- Sanitized by the verifier before it is stored (allow-listed tags and attributes only).
  ADD COLUMN content_html text,
  ADD COLUMN content_truncated boolean NOT NULL DEFAULT false,
  -- When the mention was last found to link to its target.
  ADD COLUMN verified_at timestamptz,
  -- For FAILED no_link: the links to the target's host the source does contain.
  ADD COLUMN links_to_target_host text[] NOT NULL DEFAULT '{}',
  -- Claims of the last verification job (the job row is deleted when it finishes).
  ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0);

-- Intake rejects credentials and needs a host, so the authority is scheme://host[:port].
UPDATE mentions
SET target_domain = lower(substring(target FROM '^[A-Za-z][A-Za-z0-9+.-]*://(\[[^]]*\]|[^/?#:]*)'))
WHERE target_domain IS NULL;

-- Listing by site or by target (mention key), newest change first then by id, with or without
-- a state filter (the public feed reads VERIFIED only).
CREATE INDEX mentions_site_listing_idx
  ON mentions (target_domain, state, updated_at DESC, id);
CREATE INDEX mentions_target_listing_idx
  ON mentions (target_hash, state, updated_at DESC, id);
CREATE INDEX mentions_site_recent_idx ON mentions (target_domain, updated_at DESC, id);
CREATE INDEX mentions_target_recent_idx ON mentions (target_hash, updated_at DESC, id);
