#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace portcullis::verifier::store {

// Where a page of mentions ended: the last mention's last change and id. The next page starts
// after it in (updated_at descending, id ascending) order.
struct MentionCursor {
  absl::Time updated_at;
  std::string mention_id;  // Lowercase UUID.
};

// The opaque page token naming `cursor` (URL-safe base64, no padding issues for query strings).
std::string EncodeMentionPageToken(const MentionCursor& cursor);

// The cursor a token names. INVALID_ARGUMENT for anything EncodeMentionPageToken did not make
// (bad base64, wrong prefix, a time or id that does not parse); the message is safe to return.
absl::StatusOr<MentionCursor> DecodeMentionPageToken(absl::string_view token);

}  // namespace portcullis::verifier::store
