-- The drop ledger (issue 17): dropped deliveries kept, per publisher that asks for it, so that an
-- operator can re-evaluate them on a corrected configuration (a key added late, a rotation gap).

-- How long a publisher's dropped deliveries are kept in the ledger, in seconds; 0: not kept.
ALTER TABLE publishers
  ADD COLUMN keep_drops_seconds bigint NOT NULL DEFAULT 0 CHECK (keep_drops_seconds >= 0);

-- One dropped delivery as received: what re-evaluation needs to decide it again (the columns of
-- dead_letters), its drop reason, when it was received (a signature is judged against that time)
-- and when it leaves the ledger (received_at + the publisher's keep_drops; the sweeper also
-- deletes rows older than --drop_retention). Written in the transaction that records the drop.
-- `size_bytes` is what the row counts against the publisher's cap (drop_ledger_usage).
CREATE TABLE dropped_deliveries (
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
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  received_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
-- `drops list` and `drops reevaluate` page through one publisher's drops, oldest first.
CREATE INDEX dropped_deliveries_publisher_idx ON dropped_deliveries (publisher, received_at, id);
-- Accepting an item makes its ledger rows moot (re-evaluation deletes them).
CREATE INDEX dropped_deliveries_item_idx ON dropped_deliveries (publisher, content_hash);
-- The sweeper: rows past --drop_retention, and rows past their own expiry.
CREATE INDEX dropped_deliveries_received_idx ON dropped_deliveries (received_at);
CREATE INDEX dropped_deliveries_expires_idx ON dropped_deliveries (expires_at);

-- The bytes each publisher's ledger holds (the sum of its rows' size_bytes), so that the cap is
-- checked with one row instead of a sum over the ledger. A drop is kept only when it fits: the
-- upsert that adds its bytes re-checks the cap on the latest row under that row's lock, so
-- concurrent writers never take the total over it. Deletes give the bytes back (trigger below).
CREATE TABLE drop_ledger_usage (
  publisher text PRIMARY KEY,
  bytes bigint NOT NULL CHECK (bytes >= 0)
);

-- Every delete from the ledger (sweeper, re-evaluation, by hand) gives its bytes back. The usage
-- rows are locked in publisher order, as the ingest writers take them, so two deleters and a
-- writer never wait for each other in a cycle.
CREATE FUNCTION dropped_deliveries_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM drop_ledger_usage u
    WHERE u.publisher IN (SELECT DISTINCT g.publisher FROM gone g)
    ORDER BY u.publisher FOR UPDATE;
  UPDATE drop_ledger_usage u SET bytes = greatest(u.bytes - g.total, 0)
    FROM (SELECT publisher, sum(size_bytes) AS total FROM gone GROUP BY publisher) g
    WHERE u.publisher = g.publisher;
  RETURN NULL;
END
$$;
CREATE TRIGGER dropped_deliveries_release AFTER DELETE ON dropped_deliveries
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION dropped_deliveries_release();
