#include "verifier-service/src/store/mention_page_token.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

// A version prefix, so the format can change without misreading older tokens.
constexpr absl::string_view kPrefix = "m1:";
// A token is a few dozen bytes; anything much longer is not ours.
constexpr size_t kMaxTokenBytes = 200;

absl::Status BadToken() {
  return absl::InvalidArgumentError("page_token is not a token this service returned.");
}

}  // namespace

std::string EncodeMentionPageToken(const MentionCursor& cursor) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kPrefix, absl::ToUnixMicros(cursor.updated_at), ":", cursor.mention_id));
}

absl::StatusOr<MentionCursor> DecodeMentionPageToken(absl::string_view token) {
  if (token.empty() || token.size() > kMaxTokenBytes) {
    return BadToken();
  }
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(token, &decoded)) {
    return BadToken();
  }
  absl::string_view rest = decoded;
  if (!absl::ConsumePrefix(&rest, kPrefix)) {
    return BadToken();
  }
  const size_t colon = rest.find(':');
  if (colon == absl::string_view::npos) {
    return BadToken();
  }
  int64_t micros = 0;
  if (!absl::SimpleAtoi(rest.substr(0, colon), &micros) || micros < 0) {
    return BadToken();
  }
  const absl::string_view id = rest.substr(colon + 1);
  if (!IsUuid(id)) {
    return BadToken();
  }
  return MentionCursor{absl::FromUnixMicros(micros), absl::AsciiStrToLower(id)};
}

}  // namespace portcullis::verifier::store
