#pragma once

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::store {

// True when `text` has the form of the ids the stores assign (mentions, keys, dead letters,
// tokens): a UUID in its 8-4-4-4-12 hex form (any case). Checked before a query, so that a
// malformed id is answered without a round trip (and never reaches a `::uuid` cast).
inline bool IsUuid(absl::string_view text) {
  if (text.size() != 36) {
    return false;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? text[i] != '-' : !absl::ascii_isxdigit(text[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace portcullis::verifier::store
