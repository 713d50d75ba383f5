#include "verifier-service/src/intake/target_rules.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "verifier-service/src/intake/mention_request_validation.h"

namespace portcullis::verifier::intake {
namespace {

bool HasWhitespaceOrControl(absl::string_view input) {
  for (const char c : input) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> ParseSiteDomain(absl::string_view input) {
  if (input.empty()) {
    return absl::InvalidArgumentError("The domain is missing.");
  }
  if (input.size() > kMaxDomainBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("The domain is longer than ", kMaxDomainBytes, " bytes."));
  }
  // Everything that would make the parser read more than a host: the host is all there is.
  if (HasWhitespaceOrControl(input) || input.find_first_of("/\\?#@%") != absl::string_view::npos ||
      (input.find(':') != absl::string_view::npos &&
       (input.front() != '[' || input.back() != ']'))) {
    return absl::InvalidArgumentError(
        "The domain must be a bare host name such as blog.example: no scheme, port, path or "
        "credentials.");
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(absl::StrCat("https://", input, "/"));
  if (!parsed.ok() || parsed->port().has_value() || parsed->path() != "/") {
    return absl::InvalidArgumentError("The domain is not a valid host name.");
  }
  return parsed->host();
}

absl::StatusOr<TargetRule> ParseTargetRule(absl::string_view input, TargetKind kind,
                                           const url::TrackingParameters& tracking) {
  if (input.empty()) {
    return absl::InvalidArgumentError("The target URL is missing.");
  }
  if (input.size() > kMaxUrlBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("The target URL is longer than ", kMaxUrlBytes, " bytes."));
  }
  if (HasWhitespaceOrControl(input)) {
    return absl::InvalidArgumentError("The target URL contains whitespace or a control character.");
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(input);
  if (absl::IsUnimplemented(parsed.status())) {
    return absl::InvalidArgumentError("The target URL is not an http or https URL.");
  }
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("The target URL is not a valid absolute URL.");
  }
  if (parsed->has_credentials()) {
    return absl::InvalidArgumentError("The target URL contains a username or password.");
  }
  TargetRule rule;
  rule.kind = kind;
  rule.domain = parsed->host();
  if (kind == TargetKind::kExact) {
    rule.url = url::Normalize(*parsed, tracking);
    return rule;
  }
  if (parsed->query().has_value() || parsed->fragment().has_value()) {
    return absl::InvalidArgumentError("A prefix target has no query and no fragment.");
  }
  if (!absl::EndsWith(parsed->path(), "/")) {
    return absl::InvalidArgumentError(
        "A prefix target's path ends with \"/\" (https://blog.example/posts/ covers every page "
        "under /posts/).");
  }
  rule.url = parsed->href();
  return rule;
}

}  // namespace portcullis::verifier::intake
