#include "verifier-service/src/intake/site_request_validation.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace portcullis::verifier::intake {
namespace {

constexpr absl::string_view kSiteTokenPrefix = "site:";
constexpr absl::string_view kExactTokenPrefix = "exact:";
constexpr absl::string_view kPrefixTokenPrefix = "prefix:";

absl::StatusOr<int> PageSize(int32_t requested) {
  if (requested < 0 || requested > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size must be from 0 (default ",
                                                   kDefaultPageSize, ") to ", kMaxPageSize, "."));
  }
  return requested == 0 ? kDefaultPageSize : requested;
}

absl::Status BadToken() {
  return absl::InvalidArgumentError("page_token is not a token this service returned.");
}

absl::StatusOr<TargetKind> KindOf(v1::TargetKind kind) {
  switch (kind) {
    case v1::TARGET_KIND_EXACT:
      return TargetKind::kExact;
    case v1::TARGET_KIND_PREFIX:
      return TargetKind::kPrefix;
    default:
      return absl::InvalidArgumentError("kind must be TARGET_KIND_EXACT or TARGET_KIND_PREFIX.");
  }
}

absl::StatusOr<TargetRule> RuleOf(const std::string& url, v1::TargetKind kind,
                                  const url::TrackingParameters& tracking) {
  absl::StatusOr<TargetKind> parsed_kind = KindOf(kind);
  if (!parsed_kind.ok()) {
    return parsed_kind.status();
  }
  return ParseTargetRule(url, *parsed_kind, tracking);
}

}  // namespace

absl::StatusOr<std::string> Validate(const v1::AddSiteRequest& request) {
  return ParseSiteDomain(request.domain());
}

absl::StatusOr<std::string> Validate(const v1::RemoveSiteRequest& request) {
  return ParseSiteDomain(request.domain());
}

absl::StatusOr<SitePage> Validate(const v1::ListSitesRequest& request) {
  SitePage page;
  absl::StatusOr<int> size = PageSize(request.page_size());
  if (!size.ok()) {
    return size.status();
  }
  page.size = *size;
  if (!request.page_token().empty()) {
    std::string decoded;
    if (!absl::WebSafeBase64Unescape(request.page_token(), &decoded)) {
      return BadToken();
    }
    absl::string_view rest = decoded;
    if (!absl::ConsumePrefix(&rest, kSiteTokenPrefix) || rest.empty()) {
      return BadToken();
    }
    page.after_domain = std::string(rest);
  }
  return page;
}

absl::StatusOr<TargetRule> Validate(const v1::AddTargetRequest& request,
                                    const url::TrackingParameters& tracking) {
  return RuleOf(request.url(), request.kind(), tracking);
}

absl::StatusOr<TargetRule> Validate(const v1::RemoveTargetRequest& request,
                                    const url::TrackingParameters& tracking) {
  return RuleOf(request.url(), request.kind(), tracking);
}

absl::StatusOr<std::vector<TargetRule>> Validate(const v1::ImportTargetsRequest& request,
                                                 const url::TrackingParameters& tracking) {
  if (request.targets().empty() || request.targets_size() > kMaxImportTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("targets must hold 1 to ", kMaxImportTargets, " entries."));
  }
  std::vector<TargetRule> rules;
  rules.reserve(request.targets_size());
  for (int i = 0; i < request.targets_size(); ++i) {
    absl::StatusOr<TargetRule> rule = Validate(request.targets(i), tracking);
    if (!rule.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("target ", i, " (",
                                                     request.targets(i).url().substr(0, 200),
                                                     "): ", rule.status().message()));
    }
    rules.push_back(*std::move(rule));
  }
  return rules;
}

absl::StatusOr<TargetPage> Validate(const v1::ListTargetsRequest& request) {
  TargetPage page;
  if (!request.domain().empty()) {
    absl::StatusOr<std::string> domain = ParseSiteDomain(request.domain());
    if (!domain.ok()) {
      return domain.status();
    }
    page.domain = *std::move(domain);
  }
  absl::StatusOr<int> size = PageSize(request.page_size());
  if (!size.ok()) {
    return size.status();
  }
  page.size = *size;
  if (!request.page_token().empty()) {
    std::string decoded;
    if (!absl::WebSafeBase64Unescape(request.page_token(), &decoded)) {
      return BadToken();
    }
    TargetRule after;
    absl::string_view rest = decoded;
    if (absl::ConsumePrefix(&rest, kExactTokenPrefix)) {
      after.kind = TargetKind::kExact;
    } else if (absl::ConsumePrefix(&rest, kPrefixTokenPrefix)) {
      after.kind = TargetKind::kPrefix;
    } else {
      return BadToken();
    }
    if (rest.empty()) {
      return BadToken();
    }
    after.url = std::string(rest);
    page.after = std::move(after);
  }
  return page;
}

std::string SitePageToken(const std::string& last_domain) {
  return absl::WebSafeBase64Escape(absl::StrCat(kSiteTokenPrefix, last_domain));
}

std::string TargetPageToken(const TargetRule& last) {
  return absl::WebSafeBase64Escape(absl::StrCat(
      last.kind == TargetKind::kPrefix ? kPrefixTokenPrefix : kExactTokenPrefix, last.url));
}

}  // namespace portcullis::verifier::intake
