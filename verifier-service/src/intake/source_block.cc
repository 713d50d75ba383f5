#include "verifier-service/src/intake/source_block.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/url/normalize.h"
#include "common/url/url.h"

namespace portcullis::verifier::intake {

absl::StatusOr<std::string> NormalizeBlockValue(BlockKind kind, absl::string_view value) {
  if (value.empty()) {
    return absl::InvalidArgumentError("the blocked value is empty");
  }
  if (value.size() > kMaxBlockValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the blocked value is longer than ", kMaxBlockValueBytes, " bytes"));
  }
  for (const char c : value) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c)) || c == ' ') {
      return absl::InvalidArgumentError(
          "the blocked value contains whitespace or control characters");
    }
  }
  if (kind == BlockKind::kDomain) {
    absl::string_view domain = value;
    if (absl::StartsWith(domain, "*.")) {
      domain.remove_prefix(2);
    } else if (absl::StartsWith(domain, ".")) {
      domain.remove_prefix(1);
    }
    if (domain.empty() || domain.find_first_of("/:?#@\\") != absl::string_view::npos) {
      if (!(absl::StartsWith(domain, "[") && absl::EndsWith(domain, "]"))) {
        return absl::InvalidArgumentError(
            "a blocked domain is a host name such as evil.example, not a URL");
      }
    }
    absl::StatusOr<url::Url> parsed = url::ParseUrl(absl::StrCat("https://", domain, "/"));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError("the blocked domain is not a valid host name");
    }
    std::string host = parsed->host();
    if (absl::EndsWith(host, ".")) {
      host.pop_back();  // "evil.example." names evil.example.
    }
    if (host.empty()) {
      return absl::InvalidArgumentError("the blocked domain is not a valid host name");
    }
    return host;
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(value);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("the blocked prefix is not an absolute http(s) URL");
  }
  if (parsed->has_credentials()) {
    return absl::InvalidArgumentError("the blocked prefix has a user name or password");
  }
  return url::Normalize(*parsed, url::TrackingParameters::Default());
}

}  // namespace portcullis::verifier::intake
