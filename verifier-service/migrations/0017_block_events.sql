-- A block, or its removal, changes what the public sees without touching a mention row (the
-- block is applied at read time: PORTCULLIS_MENTION_BLOCKED), so the mention triggers of
-- 0013_deliveries.sql never see it. These queue, in the transaction of the block change,
-- `mention.removed` (reason "blocked") for each VERIFIED, not hidden mention of a subscribed site
-- that the new entry blocks and no other entry blocked already, and `mention.verified` for each
-- one a removed entry was the last to block.

-- Whether block entry `b` matches mention `m` of the site whose id is `mention_site` (as
-- PORTCULLIS_MENTION_BLOCKED decides it for one entry).
CREATE FUNCTION source_block_matches(b source_blocks, m mentions, mention_site uuid)
RETURNS boolean LANGUAGE sql STABLE AS $fn$
  SELECT (b.site_id IS NULL OR b.site_id = mention_site) AND CASE b.kind
    WHEN 'DOMAIN' THEN b.value = ANY (portcullis_domain_block_keys(coalesce(m.source_host,
      lower(substring(m.source FROM '://(\[[^]]*\]|[^/?#:]*)')))))
    ELSE starts_with(coalesce(m.source_normalized, m.source), b.value)
  END
$fn$;

CREATE FUNCTION source_blocks_emit_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  b source_blocks;
  event text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    b := NEW;
    event := 'mention.removed';
  ELSE
    b := OLD;
    event := 'mention.verified';
  END IF;
  PERFORM deliveries_enqueue(event, m.target_domain, NULL, CASE WHEN TG_OP = 'INSERT'
      THEN mention_event_data(m) || jsonb_build_object('reason', 'blocked')
      ELSE mention_event_data(m) END)
  FROM mentions m JOIN sites s ON s.domain = m.target_domain
  WHERE m.target_domain IN (SELECT x.site FROM subscriptions x
                            WHERE x.state = 'active' AND event = ANY (x.events))
    AND (b.site_id IS NULL OR s.id = b.site_id)
    AND m.state = 'VERIFIED' AND m.review <> 'HIDDEN'
    AND source_block_matches(b, m, s.id)
    AND NOT EXISTS (SELECT 1 FROM source_blocks o
                    WHERE o.id <> b.id AND source_block_matches(o, m, s.id))
  ORDER BY m.wm_id;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER source_blocks_emit_insert_events AFTER INSERT ON source_blocks
  FOR EACH ROW EXECUTE FUNCTION source_blocks_emit_events();
CREATE TRIGGER source_blocks_emit_delete_events AFTER DELETE ON source_blocks
  FOR EACH ROW EXECUTE FUNCTION source_blocks_emit_events();
