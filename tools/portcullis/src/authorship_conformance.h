#pragma once

// `portcullis conformance authorship FIXTURES EXPECTED KEY`: the IndieWeb authorship algorithm
// (verifier-service/src/html/authorship.h) over shared cases. EXPECTED is
// ../shared/testdata/authorship/expected.json; KEY names the object of cases (`mf2util`):
//
//   "_base": URL the fixtures are served under (default for a folder named by host, as the XRay
//            data: "http://FOLDER/");
//   "NAME":  {"name": …, "url": …, "photo": …, "note": …, "_entry": …} — fixture NAME served at
//            _base + NAME, parsed with ParseMf2; the entry is "_entry" when it starts with a path
//            such as "items[0].children[1]", else FindPrimaryEntry's; an absent field expects "";
//   "_inline…": {"_input": MF2-JSON, …} — the same with the parsed page given inline (served at
//            _base).
//
// Fixtures are plain HTML files, or raw HTTP responses (tools/portcullis/src/http_fixture.h: a
// 3xx whose Location names another fixture under _base is followed, at most 3 times; other
// non-2xx statuses are fetch failures). An author page (u-author URL, rel=author) is "fetched"
// the same way from the sibling fixtures: the URL must lie under _base, the rest of its path is
// the file name; anything else is a failed fetch, and the lookup's fallback is used.

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/portcullis/src/conformance_data.h"

namespace portcullis::cli {

struct AuthorshipConformanceSummary {
  int passed = 0;
  int failed = 0;
};

// Runs every case of `expected_json`[`key`] against the fixtures in `fixtures_dir`. Writes
// "FAIL NAME" and one "  FIELD: expected …, got …" line per wrong field for each failing case,
// then "N passed, M failed", to `out`. A fixture that cannot be read or parsed fails its case.
// InvalidArgument, before running anything, when the JSON is malformed, has no such key, no usable
// base URL, or a case is not an object.
absl::StatusOr<AuthorshipConformanceSummary> RunAuthorshipConformance(
    const std::string& fixtures_dir, absl::string_view expected_json, absl::string_view key,
    std::ostream& out);

// Reads EXPECTED and runs it. Returns 0 when every case passed (and there was one), 1 otherwise,
// kExitSkipped when data is missing as MissingData says.
int RunAuthorshipConformanceFiles(const std::string& fixtures_dir, const std::string& expected_path,
                                  const std::string& key, MissingData missing, bool ci,
                                  std::ostream& out, std::ostream& err);

// `conformance authorship[-if-present] FIXTURES EXPECTED KEY` (args as given to Run). Returns the
// exit code.
int RunAuthorshipCommand(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err);

}  // namespace portcullis::cli
