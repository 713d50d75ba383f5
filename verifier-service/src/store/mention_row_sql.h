#pragma once

// One mention row as every store that reads whole mentions selects and reads it
// (PgMentionStore, PgPublicMentionStore): the column list, its reader and the state names.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "pqxx/row"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/public_mentions_sql.h"

namespace portcullis::verifier::store {

// Every column of a StoredMention, in the order ReadMentionRow reads them, from `mentions m`
// joined to its job `j` and its site `s` (public_mentions_sql.h; when one is queued or running it counts the current cycle's attempts;
// a re-run job that has not been claimed yet has none, so the last cycle's count shows). Append
// a WHERE clause.
inline constexpr char kSelectMention[] =
    "SELECT m.id::text, m.source, m.target, m.state, coalesce(m.reason, ''), "
    "(extract(epoch FROM m.created_at) * 1000000)::bigint, "
    "(extract(epoch FROM m.updated_at) * 1000000)::bigint, "
    "coalesce(m.type, ''), coalesce(m.rsvp, ''), coalesce(m.author_name, ''), "
    "coalesce(m.author_url, ''), coalesce(m.author_photo, ''), coalesce(m.author_note, ''), "
    "coalesce(m.entry_name, ''), coalesce(m.published, ''), coalesce(m.url, ''), "
    "coalesce(m.content_text, ''), coalesce(m.content_html, ''), m.content_truncated, "
    "(extract(epoch FROM m.verified_at) * 1000000)::bigint, m.links_to_target_host, "
    "CASE WHEN j.attempts > 0 THEN j.attempts ELSE m.attempts END, "
    "m.review, coalesce(m.review_note, ''), coalesce(m.review_reason, ''), "
    "(extract(epoch FROM m.reviewed_at) * 1000000)::bigint, " PORTCULLIS_MENTION_SHOWN ", "
    "m.wm_id, "
    "CASE WHEN s.avatar_proxy THEN coalesce(m.author_photo_hash, '') ELSE '' END "
    "FROM mentions m LEFT JOIN verification_jobs j ON j.mention_id = m.id "
    PORTCULLIS_MENTION_SITE_JOIN;

// One row of kSelectMention; the state text is left to the caller (it may be unknown).
StoredMention ReadMentionRow(const pqxx::row& row, std::string* state);

// The `state` column's values.
std::optional<MentionState> ParseState(absl::string_view text);
const char* StateName(MentionState state);
// INTERNAL: a row with a state this build does not know.
absl::Status UnknownState(absl::string_view text);

}  // namespace portcullis::verifier::store
