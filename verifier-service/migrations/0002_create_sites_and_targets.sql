-- Sites (domains we receive webmentions for) and their targets (the resources that may be
-- mentioned). A submission's target must be on a site and match one of its targets.
CREATE TABLE sites (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- The host as the WHATWG URL parser serializes it (lowercase ASCII, IDNA applied).
  domain text NOT NULL UNIQUE CHECK (domain <> '' AND octet_length(domain) <= 255),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- EXACT: the normalized target (url::Normalize: no fragment, no tracking parameters) equals
-- `url`. PREFIX: the normalized target starts with `url`, whose path ends with '/' and which has
-- no query and no fragment. Removing a site removes its targets.
CREATE TABLE targets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('EXACT', 'PREFIX')),
  url text NOT NULL CHECK (url <> '' AND octet_length(url) <= 2048),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (url, kind)
);
CREATE INDEX targets_site_id_idx ON targets (site_id, kind);
