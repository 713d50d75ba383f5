#pragma once

// `portcullis conformance url FILE` and `portcullis url parse URL [BASE]`: common/url against the
// WHATWG web-platform-tests data, and a way to see how one URL parses.

#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/portcullis/src/conformance_data.h"

namespace portcullis::cli {

// What a conformance run found. passed + failed + skipped + known_differences is the number of
// test objects.
struct UrlConformanceSummary {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  // Why cases were skipped ("input scheme 'file'", "relative to a base with scheme 'sc'",
  // "failure case refused only for its scheme 'sc'"), each with its count; the counts add up to
  // `skipped`.
  std::map<std::string, int> skipped_by_reason;
  // Of `skipped`: `failure: true` cases whose URL has a scheme we do not handle. They are refused
  // for the scheme alone, which says nothing about whether we would find the error a full parser
  // finds, so they are skipped, never passed. No case with an http(s) input, base or answer is
  // ever skipped: refusing one is a failure.
  int skipped_failure_by_scheme = 0;
  // Cases that fail for a listed, explained reason (a newer Unicode version in the data than in
  // ICU 72). Each is printed with its reason; none is counted in `failed`.
  int known_differences = 0;
};

// Runs every case of `json_text`, which is either the WHATWG urltestdata.json format (objects with
// `input`, `base` and `failure` or the expected components) or the toascii.json format (objects
// with `input` and `output`, null meaning failure), told apart by the shape of the first case.
// Writes one line per failing case, the skip breakdown and the final line
// "N passed, M failed, K skipped" to `out` (followed by " (J of them failure cases refused only
// for their scheme)" when there are such). Fails (InvalidArgument) on malformed JSON or a case
// of neither shape, before running anything.
absl::StatusOr<UrlConformanceSummary> RunUrlConformance(absl::string_view json_text,
                                                        std::ostream& out);

// Reads `path` and runs it. Returns 0 when no case failed, 1 on failures or unreadable or
// malformed data, kExitSkipped as described for MissingData.
int RunUrlConformanceFile(const std::string& path, MissingData missing, bool ci, std::ostream& out,
                          std::ostream& err);

// Parses `input` (against `base` when given) and prints href, origin and the components as one
// JSON object. Returns 0, or 1 with one "error: ..." line on `err` when it does not parse.
int PrintParsedUrl(const std::string& input, const std::optional<std::string>& base,
                   std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
