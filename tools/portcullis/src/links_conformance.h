#pragma once

// `portcullis conformance links FIXTURES EXPECTED`: "does the source link to the target?"
// (verifier-service/src/html/link_matcher.h) over the shared XRay cases: EXPECTED is
// ../shared/testdata/authorship/expected.json, whose key "xray_target_link" maps a fixture NAME to
// [{"target": URL, "found": bool}, ...] and "_base" to the URL the fixtures are served under;
// FIXTURES is the folder of raw-HTTP fixtures (tools/portcullis/src/http_fixture.h).

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/portcullis/src/conformance_data.h"

namespace portcullis::cli {

// The key of expected.json the link cases live under.
inline constexpr char kLinkCasesKey[] = "xray_target_link";

struct LinksConformanceSummary {
  int passed = 0;
  int failed = 0;
  // Cases whose fixture answers other than 200 and whose body links to the target: the verifier
  // reads no links from such a page, so "found": false holds for the status, and the matcher's
  // answer cannot be checked against it.
  int skipped = 0;
};

// Runs every case of `expected_json`[kLinkCasesKey]: fixture NAME is read from `fixtures_dir`,
// served at "_base" + NAME (a 3xx fixture whose Location names another fixture under "_base" is
// followed, at most 3 times), its body parsed as HTML with the final URL as document URL, and
// FindLink asked for the target. The matcher runs on every fixture's body, whatever its status: a
// non-200 fixture fails a "found": true case (the verifier reads no links from an error page) and
// passes a "found": false one only when the matcher finds no link in its body either; when it
// does find one, the case is skipped with that reason ("SKIP NAME TARGET: ..."). Writes
// "FAIL NAME TARGET: ..." per failing case (with the links to the target's host that were found)
// and then "N passed, M failed" (", K skipped" when K > 0) to `out`. A fixture that cannot be
// read fails its cases. InvalidArgument, before running anything, when the JSON is
// malformed or has no such key, "_base" or a case is not of the shape above.
absl::StatusOr<LinksConformanceSummary> RunLinksConformance(const std::string& fixtures_dir,
                                                            absl::string_view expected_json,
                                                            std::ostream& out);

// Reads EXPECTED and runs it. Returns 0 when no case failed and at least one passed or failed
// (skips alone do not count), 1 otherwise,
// kExitSkipped when data is missing as MissingData says.
int RunLinksConformanceFiles(const std::string& fixtures_dir, const std::string& expected_path,
                             MissingData missing, bool ci, std::ostream& out, std::ostream& err);

// `conformance links[-if-present] FIXTURES EXPECTED` (args as given to Run). Returns the exit code.
int RunLinksCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
