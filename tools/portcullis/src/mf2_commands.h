#pragma once

// `portcullis mf2 [--base-url URL] FILE` and `portcullis conformance mf2 [--base-url URL] DIR`:
// the microformats2 parser (verifier-service/src/html/mf2_parser.h) on one file, and over the
// microformats test suite (NAME.html + NAME.json pairs).

#include <ostream>
#include <string>
#include <vector>

#include "boost/json/value.hpp"
#include "tools/portcullis/src/url_conformance.h"

namespace portcullis::cli {

// The base URL of the microformats-v2 suite (the -unit suite uses http://example.test).
inline constexpr char kDefaultMf2BaseUrl[] = "http://example.com/";

// The differences between `actual` and `expected`: one "PATH: ..." line each, PATH in
// JSONPath-like form ($.items[0].properties.name[0]). Objects compare without regard to key
// order, arrays element by element in order. Empty when equal.
std::vector<std::string> JsonDifferences(const boost::json::value& actual,
                                         const boost::json::value& expected);

// Parses FILE against `base_url` and prints the result as indented JSON. 0, or 1 with one
// "error: ..." line.
int PrintMf2(const std::string& path, const std::string& base_url, std::ostream& out,
             std::ostream& err);

struct Mf2ConformanceSummary {
  int passed = 0;
  int failed = 0;
};

// What a conformance run's exit code says.
enum class Mf2Mode {
  kGate,    // 0 only when every case passed
  kReport,  // 0 when every case ran, however many failed (a suite no parser passes whole)
};

// Runs every NAME.html that has a NAME.json beside it under `dir` (recursively, in path order):
// prints "FAIL name" and the differences for each failing case, then "N passed, M failed".
// Returns 0 when none failed (kReport: once every case ran), 1 on failures (kGate only) or when
// no case was found; a missing `dir` as MissingData says (kExitSkipped = 77 when skipped). A
// crash is the process's own exit status: nothing here turns it into 0.
int RunMf2Conformance(const std::string& dir, const std::string& base_url, MissingData missing,
                      bool ci, std::ostream& out, std::ostream& err,
                      Mf2Mode mode = Mf2Mode::kGate);

// `mf2 FILE` and `conformance mf2[-report][-if-present] DIR` (args as given to Run); `base_url` from
// --base-url, empty for kDefaultMf2BaseUrl. Returns the exit code.
int RunMf2Command(const std::vector<std::string>& args, const std::string& base_url,
                  std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
