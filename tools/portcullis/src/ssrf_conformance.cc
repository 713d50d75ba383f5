#include "tools/portcullis/src/ssrf_conformance.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_join.h"
#include "tools/portcullis/src/cli.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"

namespace portcullis::cli {
namespace {

using ::portcullis::verifier::fetch::DescribeEvents;
using ::portcullis::verifier::fetch::FetchOutcomeName;
using ::portcullis::verifier::fetch::ParseSsrfVectors;
using ::portcullis::verifier::fetch::RunSsrfVector;
using ::portcullis::verifier::fetch::SsrfVector;
using ::portcullis::verifier::fetch::SsrfVectorRun;

}  // namespace

absl::StatusOr<SsrfConformanceSummary> RunSsrfConformance(absl::string_view json_text,
                                                          std::ostream& out) {
  absl::StatusOr<std::vector<SsrfVector>> vectors = ParseSsrfVectors(json_text);
  if (!vectors.ok()) {
    return vectors.status();
  }
  SsrfConformanceSummary summary;
  std::vector<std::string> kinds;
  for (const SsrfVector& vector : *vectors) {
    if (summary.by_kind.find(vector.kind) == summary.by_kind.end()) {
      kinds.push_back(vector.kind);
    }
    auto& [passed, failed] = summary.by_kind[vector.kind];
    const SsrfVectorRun run = RunSsrfVector(vector);
    if (run.passed) {
      ++passed;
      ++summary.passed;
      continue;
    }
    ++failed;
    ++summary.failed;
    out << "FAIL " << vector.id << " (" << vector.kind << ", expect "
        << (vector.expect_block ? "block" : "allow") << ") input " << vector.input_json << "\n"
        << "  outcome: " << FetchOutcomeName(run.result.outcome)
        << (run.result.detail.empty() ? "" : ": ") << run.result.detail << "\n"
        << "  problems: " << absl::StrJoin(run.problems, "; ") << "\n"
        << "  path: " << DescribeEvents(run.events) << "\n"
        << "  why: " << vector.why << "\n";
  }
  for (const std::string& kind : kinds) {
    const auto& [passed, failed] = summary.by_kind[kind];
    out << kind << ": " << passed << " passed, " << failed << " failed\n";
  }
  out << summary.passed << " passed, " << summary.failed << " failed\n";
  return summary;
}

int RunSsrfConformanceFile(const std::string& path, MissingData missing, bool ci, std::ostream& out,
                           std::ostream& err) {
  if (const std::optional<int> exit_code = ExitUnlessPresent(path, "SSRF vectors", missing, ci, err)) {
    return *exit_code;
  }
  const std::optional<std::string> text = ReadWholeFile(path, err);
  if (!text) {
    return kExitFailed;
  }
  const absl::StatusOr<SsrfConformanceSummary> summary = RunSsrfConformance(*text, out);
  if (!summary.ok()) {
    err << "error: " << path << ": " << summary.status().message() << "\n";
    return kExitFailed;
  }
  return summary->failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace portcullis::cli
