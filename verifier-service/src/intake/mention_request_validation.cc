#include "verifier-service/src/intake/mention_request_validation.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace portcullis::verifier::intake {
namespace {

// Why one URL is refused; which code the sender sees depends on whether it is the source or
// the target (kInvalid becomes invalid_source / invalid_target).
enum class UrlProblem { kInvalid, kUnsupportedScheme, kCredentials, kTooLong };

struct UrlCheck {
  bool ok = false;
  UrlProblem problem = UrlProblem::kInvalid;
  std::string why;         // For the description.
  std::string normalized;  // When ok.
};

UrlCheck Fail(UrlProblem problem, std::string why) {
  UrlCheck check;
  check.problem = problem;
  check.why = std::move(why);
  return check;
}

bool IsSchemeChar(char c) { return absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.'; }

// Characters that may not appear in a host (WHATWG forbidden host code points, plus '%', which
// a real parser would percent-decode).
bool IsForbiddenHostChar(char c) {
  switch (c) {
    case '#':
    case '%':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|':
      return true;
    default:
      return false;
  }
}

UrlCheck CheckUrl(absl::string_view url) {
  if (url.empty()) {
    return Fail(UrlProblem::kInvalid, "is empty");
  }
  if (url.size() > kMaxUrlBytes) {
    return Fail(UrlProblem::kTooLong, absl::StrCat("is longer than ", kMaxUrlBytes, " bytes"));
  }
  for (char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return Fail(UrlProblem::kInvalid, "contains whitespace or control characters");
    }
  }
  // Scheme.
  const size_t colon = url.find(':');
  if (colon == absl::string_view::npos || colon == 0 || !absl::ascii_isalpha(url[0])) {
    return Fail(UrlProblem::kInvalid, "is not an absolute URL");
  }
  for (char c : url.substr(0, colon)) {
    if (!IsSchemeChar(c)) {
      return Fail(UrlProblem::kInvalid, "is not an absolute URL");
    }
  }
  const std::string scheme = absl::AsciiStrToLower(url.substr(0, colon));
  if (scheme != "http" && scheme != "https") {
    return Fail(UrlProblem::kUnsupportedScheme, "must use http or https");
  }
  absl::string_view rest = url.substr(colon + 1);
  if (rest.substr(0, 2) != "//") {
    return Fail(UrlProblem::kInvalid, "must have a //host part");
  }
  rest.remove_prefix(2);
  // Authority: up to the first '/', '?' or '#'.
  const size_t authority_end = rest.find_first_of("/?#");
  const absl::string_view authority = rest.substr(0, authority_end);
  absl::string_view after_authority =
      authority_end == absl::string_view::npos ? absl::string_view() : rest.substr(authority_end);
  if (authority.find('@') != absl::string_view::npos) {
    return Fail(UrlProblem::kCredentials, "must not contain credentials");
  }
  absl::string_view host;
  absl::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return Fail(UrlProblem::kInvalid, "has an unterminated IPv6 address");
    }
    host = authority.substr(0, close + 1);
    for (char c : host.substr(1, host.size() - 2)) {
      if (!absl::ascii_isxdigit(c) && c != ':' && c != '.') {
        return Fail(UrlProblem::kInvalid, "has an invalid IPv6 address");
      }
    }
    if (host.size() == 2) {
      return Fail(UrlProblem::kInvalid, "has an empty host");
    }
    const absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Fail(UrlProblem::kInvalid, "has an invalid host");
      }
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const size_t port_colon = authority.rfind(':');
    host = authority.substr(0, port_colon);
    if (port_colon != absl::string_view::npos) {
      has_port = true;
      port_text = authority.substr(port_colon + 1);
    }
    for (char c : host) {
      if (IsForbiddenHostChar(c)) {
        return Fail(UrlProblem::kInvalid, "has an invalid host");
      }
    }
  }
  if (host.empty()) {
    return Fail(UrlProblem::kInvalid, "has an empty host");
  }
  const uint32_t default_port = scheme == "http" ? 80 : 443;
  uint32_t port = default_port;
  if (has_port && !port_text.empty()) {
    if (port_text.size() > 5 || !absl::SimpleAtoi(port_text, &port) || port > 65535) {
      return Fail(UrlProblem::kInvalid, "has an invalid port");
    }
    for (char c : port_text) {
      if (!absl::ascii_isdigit(c)) {
        return Fail(UrlProblem::kInvalid, "has an invalid port");
      }
    }
  }
  // Normalize: lowercase scheme and host, default port dropped, fragment dropped, "/" for an
  // empty path.
  const size_t fragment = after_authority.find('#');
  if (fragment != absl::string_view::npos) {
    after_authority = after_authority.substr(0, fragment);
  }
  UrlCheck check;
  check.ok = true;
  check.normalized = absl::StrCat(scheme, "://", absl::AsciiStrToLower(host));
  if (port != default_port) {
    absl::StrAppend(&check.normalized, ":", port);
  }
  if (after_authority.empty() || after_authority.front() != '/') {
    check.normalized.push_back('/');
  }
  absl::StrAppend(&check.normalized, after_authority);
  return check;
}

Rejection RejectionFor(const UrlCheck& check, absl::string_view field) {
  switch (check.problem) {
    case UrlProblem::kUnsupportedScheme:
      return {std::string(kUnsupportedScheme), absl::StrCat(field, " ", check.why)};
    case UrlProblem::kCredentials:
      return {std::string(kCredentialsInUrl), absl::StrCat(field, " ", check.why)};
    case UrlProblem::kTooLong:
      return {std::string(kUrlTooLong), absl::StrCat(field, " ", check.why)};
    case UrlProblem::kInvalid:
      break;
  }
  return {std::string(field == "source" ? kInvalidSource : kInvalidTarget),
          absl::StrCat(field, " ", check.why, "; it must be an absolute http or https URL")};
}

}  // namespace

SubmitMentionValidation Validate(const portcullis::verifier::v1::SubmitMentionRequest& request) {
  const UrlCheck source = CheckUrl(request.source());
  if (!source.ok) {
    return RejectionFor(source, "source");
  }
  const UrlCheck target = CheckUrl(request.target());
  if (!target.ok) {
    return RejectionFor(target, "target");
  }
  if (source.normalized == target.normalized) {
    return Rejection{std::string(kSameSourceAndTarget), "source and target are the same URL"};
  }
  return NormalizedMention{source.normalized, target.normalized};
}

}  // namespace portcullis::verifier::intake
