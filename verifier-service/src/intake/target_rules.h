#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "common/url/url.h"

// What a site and a target rule are, as values: parsing and checking the admin input (no I/O).
// The store keeps the values these functions produce and matches submissions against them.
namespace portcullis::verifier::intake {

// Longest domain accepted, in bytes (a DNS name is at most 253).
inline constexpr size_t kMaxDomainBytes = 253;

// How a target rule matches (the `kind` column).
enum class TargetKind { kExact, kPrefix };

// A validated target rule.
struct TargetRule {
  // EXACT: url::Normalize of the URL given (no fragment, no tracking parameters). PREFIX: the
  // URL as serialized (path ending in "/", no query, no fragment).
  std::string url;
  TargetKind kind = TargetKind::kExact;
  // The site it belongs to: the URL's serialized host.
  std::string domain;

  friend bool operator==(const TargetRule&, const TargetRule&) = default;
};

// Reads a site domain as the WHATWG URL parser reads a host: "Blog.Example" → "blog.example",
// "bücher.example" → "xn--bcher-kva.example", "127.1" → "127.0.0.1", "[::1]" → "[::1]".
// InvalidArgument (one sentence, safe to show) when `input` is empty, longer than
// kMaxDomainBytes, or anything but a bare host (a scheme, port, path, credentials, whitespace).
absl::StatusOr<std::string> ParseSiteDomain(absl::string_view input);

// Reads a target rule. The URL must be an absolute http(s) URL without credentials, at most
// 2048 bytes; a PREFIX rule's path must end with "/" and it has no query and no fragment.
// InvalidArgument (one sentence, safe to show) otherwise.
absl::StatusOr<TargetRule> ParseTargetRule(absl::string_view input, TargetKind kind,
                                           const url::TrackingParameters& tracking);

// "EXACT" / "PREFIX", as stored.
absl::string_view TargetKindName(TargetKind kind);

}  // namespace portcullis::verifier::intake
