#include "verifier-service/src/html/plain_text.h"

namespace portcullis::verifier::html {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool IsSpaceOrControl(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte <= 0x20 || byte == 0x7F;
}

}  // namespace

absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) {
    return text;
  }
  size_t end = max_bytes;
  // Back up over continuation bytes to the start of the sequence text[end] belongs to: cutting
  // there keeps every sequence before it whole.
  while (end > 0 && IsContinuationByte(text[end])) {
    --end;
  }
  return text.substr(0, end);
}

std::string CollapseWhitespace(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (const char c : text) {
    if (IsSpaceOrControl(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) {
      out += ' ';
      pending_space = false;
    }
    out += c;
  }
  return out;
}

CappedText CapPlainText(absl::string_view text, size_t max_bytes) {
  CappedText capped;
  capped.text = CollapseWhitespace(text);
  if (capped.text.size() > max_bytes) {
    capped.truncated = true;
    capped.text.resize(Utf8Prefix(capped.text, max_bytes).size());
    while (!capped.text.empty() && capped.text.back() == ' ') {
      capped.text.pop_back();
    }
  }
  return capped;
}

}  // namespace portcullis::verifier::html
