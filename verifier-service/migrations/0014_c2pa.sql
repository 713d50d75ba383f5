-- C2PA in ingested items (issue 19).

-- Per publisher: a media element without a C2PA manifest drops its item
-- (`missing_c2pa_manifest`); and PEM certificates trusted as C2PA signing anchors for its media,
-- beside the server's --c2pa_trust_anchors ('' = none of its own).
ALTER TABLE publishers
  ADD COLUMN require_c2pa_for_media boolean NOT NULL DEFAULT false,
  ADD COLUMN c2pa_trust text NOT NULL DEFAULT '' CHECK (octet_length(c2pa_trust) <= 262144);

-- What was verified of each media element of an accepted item, in order: a JSON array of
-- {"content_type", "verdict", "status_codes": [...], "signer_subject", "claim_generator",
--  "digital_source_type", "synthetic"}; NULL for an item without media.
ALTER TABLE ingest_items ADD COLUMN media jsonb;
