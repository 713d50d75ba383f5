-- Outbound deliveries (issue 20): subscriptions (where a site's or a publisher's events go) and
-- the outbox of deliveries, one row per event x subscription. Events are written by triggers in
-- the transaction of the change that causes them, whichever code path makes it (batched writers,
-- workers, admin RPCs, erasure, review, the sweeper): a rolled-back change leaves no event, a
-- committed one always has its events.

-- A destination. `signing_key` is what signing needs: the HMAC secret bytes (v1) or the 32-byte
-- Ed25519 seed (v1a); never returned by any RPC (as publisher_keys.key_material).
CREATE TABLE subscriptions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Exactly one scope: a served site's domain (mention.* events) or a publisher (ingest.*).
  site text,
  publisher text,
  url text NOT NULL CHECK (octet_length(url) BETWEEN 1 AND 2048),
  events text[] NOT NULL CHECK (cardinality(events) > 0 AND events <@ ARRAY['mention.verified',
    'mention.updated', 'mention.removed', 'mention.failed', 'ingest.accepted',
    'ingest.quarantined']),
  signature_version text NOT NULL CHECK (signature_version IN ('v1', 'v1a')),
  signing_key bytea NOT NULL,
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
  disabled_reason text,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((site IS NULL) <> (publisher IS NULL))
);
CREATE INDEX subscriptions_site_idx ON subscriptions (site) WHERE state = 'active';
CREATE INDEX subscriptions_publisher_idx ON subscriptions (publisher) WHERE state = 'active';

-- One event to one subscription. `body` is fixed when the event happens (every attempt and replay
-- sends the same bytes under the same `webhook_id`); `seq` orders a subscription's deliveries.
-- pending: to be sent at next_attempt_at (claimed under a lease, FOR UPDATE SKIP LOCKED, as
-- verification jobs are); delivered: a 2xx; failed: the retry schedule ran out, or the
-- subscription was disabled.
CREATE TABLE deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  webhook_id text NOT NULL DEFAULT 'msg_' || replace(gen_random_uuid()::text, '-', ''),
  event_type text NOT NULL,
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  -- Attempts since the delivery was created or last replayed.
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_expires_at timestamptz,
  last_status_code integer,
  last_error text,
  last_latency_ms bigint,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at, seq) WHERE state = 'pending';
CREATE INDEX deliveries_subscription_idx ON deliveries (subscription_id, seq);

-- Queues `event` with `data` for every active subscription of `site_domain` or `publisher_name`
-- that wants it. The body is {"type", "timestamp", "data"}, fixed here.
CREATE FUNCTION deliveries_enqueue(event text, site_domain text, publisher_name text, data jsonb)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO deliveries (subscription_id, event_type, body)
  SELECT s.id, event,
    jsonb_build_object('type', event,
      'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', data)::text
  FROM subscriptions s
  WHERE s.state = 'active' AND event = ANY (s.events)
    AND ((site_domain IS NOT NULL AND s.site = site_domain)
      OR (publisher_name IS NOT NULL AND s.publisher = publisher_name))
  ORDER BY s.created_at, s.id
$fn$;

-- A mention as an event's `data`: the fields of its jf2 entry (as GET /mentions serves it) plus
-- its id, state and reason.
CREATE FUNCTION mention_event_data(m mentions) RETURNS jsonb LANGUAGE sql STABLE AS $fn$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'type', 'entry',
    'mention_id', m.id::text,
    'wm-id', m.wm_id,
    'site', m.target_domain,
    'state', m.state,
    'reason', m.reason,
    'author', CASE WHEN coalesce(m.author_name, m.author_url, m.author_photo) IS NULL THEN NULL
      ELSE jsonb_build_object('type', 'card', 'name', m.author_name, 'url', m.author_url,
                              'photo', m.author_photo) END,
    'url', coalesce(m.url, m.source),
    'published', m.published,
    'name', m.entry_name,
    'content', CASE WHEN coalesce(m.content_text, m.content_html) IS NULL THEN NULL
      ELSE jsonb_build_object('text', m.content_text, 'html', m.content_html) END,
    'wm-property', CASE m.type WHEN 'reply' THEN 'in-reply-to' WHEN 'like' THEN 'like-of'
      WHEN 'repost' THEN 'repost-of' WHEN 'bookmark' THEN 'bookmark-of' WHEN 'rsvp' THEN 'rsvp'
      ELSE 'mention-of' END,
    'rsvp', m.rsvp,
    'wm-target', m.target,
    'wm-source', m.source,
    'wm-received', to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))
$fn$;

-- What happened to a mention, from its row before and after:
--   shown (VERIFIED and not hidden) from not shown        mention.verified
--   shown, still shown, content hash changed              mention.updated
--   shown, then not (unmention, 410, block, erase, hide,   mention.removed (data: the row
--   or the row deleted)                                    before, so it names what went)
--   PENDING (or new) to FAILED, unless blocked or erased   mention.failed
-- An unchanged re-verification changes none of these and emits nothing.
CREATE FUNCTION mentions_emit_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  old_shown boolean := false;
  new_shown boolean := false;
  site_of text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    old_shown := OLD.state = 'VERIFIED' AND OLD.review <> 'HIDDEN';
    site_of := OLD.target_domain;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_shown := NEW.state = 'VERIFIED' AND NEW.review <> 'HIDDEN';
    site_of := NEW.target_domain;
  END IF;
  -- Most sites have no subscription: one index probe, and nothing else.
  IF site_of IS NULL OR NOT EXISTS (
      SELECT 1 FROM subscriptions s WHERE s.site = site_of AND s.state = 'active') THEN
    RETURN NULL;
  END IF;
  IF new_shown AND NOT old_shown THEN
    PERFORM deliveries_enqueue('mention.verified', site_of, NULL, mention_event_data(NEW));
  ELSIF new_shown AND old_shown AND NEW.content_hash IS DISTINCT FROM OLD.content_hash THEN
    PERFORM deliveries_enqueue('mention.updated', site_of, NULL, mention_event_data(NEW));
  ELSIF old_shown AND NOT new_shown THEN
    PERFORM deliveries_enqueue('mention.removed', site_of, NULL,
      mention_event_data(OLD) || jsonb_strip_nulls(jsonb_build_object(
        'state', CASE WHEN TG_OP = 'DELETE' THEN 'DELETED' ELSE NEW.state END,
        'reason', CASE WHEN TG_OP = 'DELETE' THEN 'deleted'
                       WHEN NEW.review = 'HIDDEN' THEN 'hidden' ELSE NEW.reason END)));
  ELSIF TG_OP <> 'DELETE' AND NEW.state = 'FAILED'
      AND (TG_OP = 'INSERT' OR OLD.state = 'PENDING')
      AND coalesce(NEW.reason, '') NOT IN ('blocked', 'erased') THEN
    PERFORM deliveries_enqueue('mention.failed', site_of, NULL, mention_event_data(NEW));
  END IF;
  RETURN NULL;
END
$fn$;

-- The WHEN clauses keep the intake's batched inserts (PENDING rows) and every update that
-- changes none of state, review or content hash from calling the function at all.
CREATE TRIGGER mentions_emit_insert_events AFTER INSERT ON mentions
  FOR EACH ROW WHEN (NEW.state <> 'PENDING') EXECUTE FUNCTION mentions_emit_events();
CREATE TRIGGER mentions_emit_update_events AFTER UPDATE ON mentions
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.review IS DISTINCT FROM NEW.review
    OR OLD.content_hash IS DISTINCT FROM NEW.content_hash)
  EXECUTE FUNCTION mentions_emit_events();
CREATE TRIGGER mentions_emit_delete_events AFTER DELETE ON mentions
  FOR EACH ROW WHEN (OLD.state = 'VERIFIED') EXECUTE FUNCTION mentions_emit_events();

-- ingest.accepted: once per batch of accepted items (a statement trigger over the batch's rows),
-- returning at once when no publisher has a subscription.
CREATE FUNCTION ingest_items_emit_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.publisher IS NOT NULL
                 AND s.state = 'active') THEN
    RETURN NULL;
  END IF;
  PERFORM deliveries_enqueue('ingest.accepted', NULL, i.publisher, jsonb_build_object(
      'publisher', i.publisher, 'item_id', i.item_id, 'content_hash', i.content_hash,
      'cursor', i.cursor, 'signature_valid', i.signature_valid,
      'accepted_at', to_char(i.accepted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'item', convert_from(i.canonical_body, 'UTF8')::jsonb))
  FROM (SELECT * FROM accepted_items ORDER BY cursor) i;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ingest_items_emit_events AFTER INSERT ON ingest_items
  REFERENCING NEW TABLE AS accepted_items
  FOR EACH STATEMENT EXECUTE FUNCTION ingest_items_emit_events();

-- ingest.quarantined: a delivery put into the dead-letter queue.
CREATE FUNCTION dead_letters_emit_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.publisher IS NOT NULL
                 AND s.state = 'active') THEN
    RETURN NULL;
  END IF;
  PERFORM deliveries_enqueue('ingest.quarantined', NULL, d.publisher, jsonb_build_object(
      'publisher', d.publisher, 'item_id', d.item_id, 'content_hash', d.content_hash,
      'reason', d.reason, 'dead_letter_id', d.id::text,
      'quarantined_at', to_char(d.created_at AT TIME ZONE 'UTC',
                                'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  FROM quarantined d;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER dead_letters_emit_events AFTER INSERT ON dead_letters
  REFERENCING NEW TABLE AS quarantined
  FOR EACH STATEMENT EXECUTE FUNCTION dead_letters_emit_events();
