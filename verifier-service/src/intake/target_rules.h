#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "common/url/url.h"
#include "verifier-service/src/store/target_rule.h"

// What a site and a target rule are, as values: parsing and checking the admin input (no I/O).
// The store keeps the values these functions produce and matches submissions against them.
namespace portcullis::verifier::intake {

// Longest domain accepted, in bytes (a DNS name is at most 253).
inline constexpr size_t kMaxDomainBytes = 253;

// A validated target rule and how it matches: the store's plain value (store/target_rule.h).
using TargetKind = store::TargetKind;
using TargetRule = store::TargetRule;
using store::TargetKindName;

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

}  // namespace portcullis::verifier::intake
