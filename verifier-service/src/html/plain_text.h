#pragma once

// Plain text as stored with a mention: whitespace collapsed, capped at a UTF-8 boundary.
//
// Pure: no I/O. Shared by the mention classifier (entry name, content) and authorship (author name,
// note), so every stored string is shortened the same way.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace portcullis::verifier::html {

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence (a lead byte with its continuation bytes is kept or dropped whole).
absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes);

// Every run of ASCII whitespace and other C0 control characters (and DEL) replaced by one space,
// leading and trailing ones dropped. Stored text holds no NUL and no control characters.
std::string CollapseWhitespace(absl::string_view text);

// A capped string: `text` at most `max_bytes` long, and whether anything was cut.
struct CappedText {
  std::string text;
  bool truncated = false;
};

// CollapseWhitespace(text), then Utf8Prefix(…, max_bytes) (trailing space of the cut dropped).
CappedText CapPlainText(absl::string_view text, size_t max_bytes);

}  // namespace portcullis::verifier::html
