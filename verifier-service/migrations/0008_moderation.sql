-- Moderation and instant takedown (issue 16). A mention has a review state beside its
-- verification state, changed by UPDATEs of the mention row itself (never rows elsewhere); a site
-- has a moderation policy; approval rules approve by author URL or source URL prefix. What the
-- public sees is decided at read time (store/public_mentions_sql.h): VERIFIED, not rejected or
-- hidden, not blocked now, and allowed by the site's policy. Every new column has a default, so
-- existing rows and sites behave exactly as before (policy `off`, review UNREVIEWED).

-- off: every VERIFIED mention is shown (as before). first-time-authors: shown once an earlier
-- mention by the same author URL on the site was approved. all: shown only when approved (by a
-- person, or matched by an approval rule).
ALTER TABLE sites
  ADD COLUMN moderation text NOT NULL DEFAULT 'off'
    CHECK (moderation IN ('off', 'first-time-authors', 'all'));

ALTER TABLE mentions
  ADD COLUMN review text NOT NULL DEFAULT 'UNREVIEWED'
    CHECK (review IN ('UNREVIEWED', 'APPROVED', 'REJECTED', 'HIDDEN')),
  -- The reviewer's note, or why the review state changed by itself.
  ADD COLUMN review_note text,
  -- Machine-readable: `content_changed` when re-verification found new content and moderation
  -- `all` sent an approved or rejected mention back to UNREVIEWED; NULL otherwise.
  ADD COLUMN review_reason text,
  ADD COLUMN reviewed_at timestamptz,
  -- The token name of the last reviewer.
  ADD COLUMN reviewed_by text,
  -- What `unhide` restores: the review state before `hide`.
  ADD COLUMN review_before_hide text
    CHECK (review_before_hide IN ('UNREVIEWED', 'APPROVED', 'REJECTED')),
  -- SHA-256 of what the last successful verification found (type, author, name, content): a
  -- re-verification with the same hash changes nothing a reviewer looked at.
  ADD COLUMN content_hash bytea,
  -- url::Normalize(source), what source-prefix blocks and rules match (set by intake from now
  -- on; older rows fall back to `source`).
  ADD COLUMN source_normalized text;

-- The review queue of a site, newest change first.
CREATE INDEX mentions_site_review_idx
  ON mentions (target_domain, review, updated_at DESC, id) WHERE state = 'VERIFIED';
-- first-time-authors: "has this author an approved mention on this site?"
CREATE INDEX mentions_approved_author_idx
  ON mentions (target_domain, author_url, created_at) WHERE review = 'APPROVED';

-- Auto-approval rules of a site. AUTHOR_URL: the mention's author URL equals `value`.
-- SOURCE_PREFIX: the normalized source starts with `value`. Evaluated at read time, so removing a
-- rule takes back exactly what it approved and nothing a person approved by hand.
CREATE TABLE approval_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('AUTHOR_URL', 'SOURCE_PREFIX')),
  value text NOT NULL CHECK (value <> '' AND octet_length(value) <= 2048),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (site_id, kind, value)
);

-- The domain blocklist keys of a serialized host, as store::DomainBlockKeys computes them: the
-- host and each parent domain obtained by removing whole leading labels; an IP literal yields
-- only itself.
CREATE FUNCTION portcullis_domain_block_keys(host text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT CASE
    WHEN host IS NULL OR host = '' THEN '{}'::text[]
    WHEN host LIKE '[%' OR host ~ '^[0-9.]+$' THEN ARRAY[host]
    ELSE ARRAY(SELECT array_to_string(labels[i:], '.')
               FROM (SELECT string_to_array(host, '.') AS labels) l,
                    generate_series(1, cardinality(labels)) AS i
               WHERE labels[i] <> '')
  END
$fn$;

-- The new `review` scope: reviewing a site's mentions (ReviewMention, ListReviewQueue, rules).
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_scopes_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_scopes_check CHECK (cardinality(scopes) > 0
  AND scopes <@ ARRAY['submit', 'read', 'admin', 'fetch', 'review']);
