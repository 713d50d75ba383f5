#include "verifier-service/src/intake/mention_request_validation.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/url/url.h"

namespace portcullis::verifier::intake {
namespace {

// Checks one URL; `role` is "source" or "target" and picks the invalid_* code.
std::variant<Rejection, url::Url> CheckUrl(absl::string_view input, absl::string_view role) {
  const auto reject = [role](absl::string_view reason, absl::string_view why) {
    return Rejection{std::string(reason), absl::StrCat("The ", role, " URL ", why, ".")};
  };
  const std::string invalid = absl::StrCat("invalid_", role);
  if (input.empty()) {
    return reject(invalid, "is missing");
  }
  if (input.size() > kMaxUrlBytes) {
    return reject(kUrlTooLong, absl::StrCat("is longer than ", kMaxUrlBytes, " bytes"));
  }
  for (const char c : input) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return reject(invalid, "contains whitespace or a control character");
    }
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(input);
  if (absl::IsUnimplemented(parsed.status())) {
    return reject(kUnsupportedScheme, "is not an http or https URL");
  }
  if (!parsed.ok()) {
    return reject(invalid, "is not a valid absolute URL");
  }
  if (parsed->has_credentials()) {
    return reject(kCredentialsInUrl, "contains a username or password");
  }
  return *std::move(parsed);
}

}  // namespace

SubmitMentionValidation Validate(const portcullis::verifier::v1::SubmitMentionRequest& request,
                                 const url::TrackingParameters& tracking) {
  std::variant<Rejection, url::Url> source = CheckUrl(request.source(), "source");
  if (auto* rejection = std::get_if<Rejection>(&source)) {
    return std::move(*rejection);
  }
  std::variant<Rejection, url::Url> target = CheckUrl(request.target(), "target");
  if (auto* rejection = std::get_if<Rejection>(&target)) {
    return std::move(*rejection);
  }
  url::MentionKey key =
      url::MentionKeyOf(std::get<url::Url>(source), std::get<url::Url>(target), tracking);
  if (key.normalized_source == key.normalized_target) {
    return Rejection{std::string(kSameSourceAndTarget),
                     "The source and target URLs are the same page."};
  }
  return NormalizedMention{std::move(key), std::get<url::Url>(target).host()};
}

}  // namespace portcullis::verifier::intake
