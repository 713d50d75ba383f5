#pragma once

// `portcullis conformance ssrf FILE`: the SSRF vectors (the format of
// ../shared/testdata/ssrf/vectors.json) through the real fetch path — URL parser, egress policy,
// SafeFetcher's resolution, pinning and redirects — with DNS stubbed from each vector and an HTTP
// backend that records every address a connection was attempted to
// (verifier-service/src/fetch/ssrf_conformance.h says how each kind runs and when it passes).

#include <map>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/portcullis/src/url_conformance.h"

namespace portcullis::cli {

struct SsrfConformanceSummary {
  int passed = 0;
  int failed = 0;
  // Per kind: {passed, failed}.
  std::map<std::string, std::pair<int, int>> by_kind;
};

// Runs every vector of `json_text`. Writes one block per failing vector (id, kind, input, what
// went wrong, the recorded lookups and connections, why), one "KIND: N passed, M failed" line per
// kind and the final "N passed, M failed" to `out`. kInvalidArgument on a malformed file, before
// running anything.
absl::StatusOr<SsrfConformanceSummary> RunSsrfConformance(absl::string_view json_text,
                                                          std::ostream& out);

// Reads `path` and runs it: 0 when no vector failed, 1 on failures or unreadable or malformed
// data; a missing file as MissingData says (kExitSkipped = 77 when skipped).
int RunSsrfConformanceFile(const std::string& path, MissingData missing, bool ci, std::ostream& out,
                           std::ostream& err);

}  // namespace portcullis::cli
