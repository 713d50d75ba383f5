#pragma once

// Which mentions the public sees (issue 16), as SQL: the one definition every public read uses
// (ListMentions for read-only tokens, hence the gateway's jf2 feed and its ETags, and
// Mention.shown everywhere; the webmention.io read API of issue 18: /api/mentions.jf2,
// /api/count.json, and /api/changes, where an entry that fails it is reported deleted). Decided at read time, so a review change, a new block or a removed
// one, a policy change and an approval rule take effect on the next read, and are undone as
// simply.
//
// Aliases the fragments need: `m` a mentions row, `s` its site (PORTCULLIS_MENTION_SITE_JOIN:
// NULL for a site no longer served, whose policy is then `off`).

// Joins the site of mention `m` as `s`.
#define PORTCULLIS_MENTION_SITE_JOIN "LEFT JOIN sites s ON s.domain = m.target_domain "

// The normalized source of `m` (older rows kept only the source as submitted).
#define PORTCULLIS_MENTION_NORMALIZED_SOURCE "coalesce(m.source_normalized, m.source)"

// The serialized host of `m`'s source (older rows: taken from the source as submitted).
#define PORTCULLIS_MENTION_SOURCE_HOST \
  "coalesce(m.source_host, lower(substring(m.source FROM '://(\\[[^]]*\\]|[^/?#:]*)')))"

// Approval rule `r` matches mention `m`.
#define PORTCULLIS_APPROVAL_RULE_MATCHES                                      \
  "((r.kind = 'AUTHOR_URL' AND r.value = m.author_url) "                      \
  " OR (r.kind = 'SOURCE_PREFIX' AND starts_with(" PORTCULLIS_MENTION_NORMALIZED_SOURCE \
  ", r.value)))"

// A block entry (global, or of `m`'s site) matches `m`'s source now: the source blocklist of
// migrations/0007 applied to stored mentions, as MentionStore::Submit applies it to submissions.
// Domain entries are looked up by the source host's keys (one index probe each, the keys computed
// once per mention); prefix entries are few and compared one by one. Without any block entry
// at all (an uncorrelated InitPlan, read once per statement) none of that runs per mention.
#define PORTCULLIS_MENTION_BLOCKED                                                           \
  "((SELECT EXISTS (SELECT 1 FROM source_blocks)) AND "                                      \
  "(EXISTS (SELECT 1 FROM unnest(portcullis_domain_block_keys(" PORTCULLIS_MENTION_SOURCE_HOST \
  ")) AS k(value) JOIN source_blocks b ON b.kind = 'DOMAIN' AND b.value = k.value "          \
  "   WHERE b.site_id IS NULL OR b.site_id = s.id) "                                         \
  " OR EXISTS (SELECT 1 FROM source_blocks b WHERE b.kind = 'PREFIX' "                       \
  "   AND (b.site_id IS NULL OR b.site_id = s.id) "                                          \
  "   AND starts_with(" PORTCULLIS_MENTION_NORMALIZED_SOURCE ", b.value))))"

// The site's policy lets `m` be shown: `off`; or approved by a person; or matched by one of the
// site's approval rules; or, under `first-time-authors`, an earlier mention by the same author
// URL on the site was approved by a person.
#define PORTCULLIS_MENTION_POLICY_ALLOWS                                                      \
  "(coalesce(s.moderation, 'off') = 'off' OR m.review = 'APPROVED' "                          \
  " OR EXISTS (SELECT 1 FROM approval_rules r WHERE r.site_id = s.id AND "                    \
  PORTCULLIS_APPROVAL_RULE_MATCHES ") "                                                       \
  " OR (s.moderation = 'first-time-authors' AND m.author_url IS NOT NULL "                    \
  "     AND EXISTS (SELECT 1 FROM mentions p WHERE p.target_domain = m.target_domain "        \
  "       AND p.author_url = m.author_url AND p.review = 'APPROVED' "                         \
  "       AND p.created_at < m.created_at)))"

// The public sees `m`: VERIFIED, neither rejected nor hidden by a person, its source not blocked
// now, and allowed by its site's policy.
#define PORTCULLIS_MENTION_SHOWN                                                       \
  "(m.state = 'VERIFIED' AND m.review IN ('UNREVIEWED', 'APPROVED') AND NOT "          \
  PORTCULLIS_MENTION_BLOCKED " AND " PORTCULLIS_MENTION_POLICY_ALLOWS ")"
