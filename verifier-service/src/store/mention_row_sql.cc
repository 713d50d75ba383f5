#include "verifier-service/src/store/mention_row_sql.h"

#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pqxx/array"
#include "pqxx/field"

namespace portcullis::verifier::store {

std::optional<MentionState> ParseState(absl::string_view text) {
  if (text == "PENDING") {
    return MentionState::kPending;
  }
  if (text == "VERIFIED") {
    return MentionState::kVerified;
  }
  if (text == "FAILED") {
    return MentionState::kFailed;
  }
  return std::nullopt;
}

absl::Status UnknownState(absl::string_view text) {
  return absl::InternalError(absl::StrCat("mention has unknown state '", text, "'"));
}

const char* StateName(MentionState state) {
  switch (state) {
    case MentionState::kPending:
      return "PENDING";
    case MentionState::kVerified:
      return "VERIFIED";
    case MentionState::kFailed:
      return "FAILED";
  }
  return "PENDING";
}

namespace {

std::vector<std::string> ReadTextArray(const pqxx::field& field) {
  std::vector<std::string> values;
  pqxx::array_parser parser = field.as_array();
  for (auto [juncture, value] = parser.get_next(); juncture != pqxx::array_parser::done;
       std::tie(juncture, value) = parser.get_next()) {
    if (juncture == pqxx::array_parser::string_value) {
      values.push_back(std::move(value));
    }
  }
  return values;
}

}  // namespace

StoredMention ReadMentionRow(const pqxx::row& row, std::string* state) {
  StoredMention mention;
  mention.mention_id = row[0].as<std::string>();
  mention.source = row[1].as<std::string>();
  mention.target = row[2].as<std::string>();
  *state = row[3].as<std::string>();
  mention.reason = row[4].as<std::string>();
  mention.created_at = absl::FromUnixMicros(row[5].as<int64_t>());
  mention.updated_at = absl::FromUnixMicros(row[6].as<int64_t>());
  MentionContent& content = mention.content;
  content.type = row[7].as<std::string>();
  content.rsvp = row[8].as<std::string>();
  content.author_name = row[9].as<std::string>();
  content.author_url = row[10].as<std::string>();
  content.author_photo = row[11].as<std::string>();
  content.author_note = row[12].as<std::string>();
  content.name = row[13].as<std::string>();
  content.published = row[14].as<std::string>();
  content.url = row[15].as<std::string>();
  content.content_text = row[16].as<std::string>();
  content.content_html = row[17].as<std::string>();
  content.content_truncated = row[18].as<bool>();
  if (!row[19].is_null()) {
    mention.verified_at = absl::FromUnixMicros(row[19].as<int64_t>());
  }
  mention.links_to_target_host = ReadTextArray(row[20]);
  mention.attempts = row[21].as<int>();
  mention.review = row[22].as<std::string>();
  mention.review_note = row[23].as<std::string>();
  mention.review_reason = row[24].as<std::string>();
  if (!row[25].is_null()) {
    mention.reviewed_at = absl::FromUnixMicros(row[25].as<int64_t>());
  }
  mention.shown = row[26].as<bool>();
  mention.wm_id = row[27].as<int64_t>();
  mention.photo_proxy_hash = row[28].as<std::string>();
  return mention;
}

}  // namespace portcullis::verifier::store
