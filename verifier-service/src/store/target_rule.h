#pragma once

#include <string>

#include "absl/strings/string_view.h"

// A target rule as the store keeps it (the `targets` table): a plain value. intake/ parses admin
// input into it (intake::ParseTargetRule; intake::TargetRule is this type).
namespace portcullis::verifier::store {

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

// "EXACT" / "PREFIX", as stored.
absl::string_view TargetKindName(TargetKind kind);

}  // namespace portcullis::verifier::store
