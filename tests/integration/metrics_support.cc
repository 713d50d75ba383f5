#include "tests/integration/metrics_support.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/support/temp_path.h"

namespace portcullis::integration {

double SumSamples(absl::string_view scrape, absl::string_view metric,
                  std::initializer_list<absl::string_view> label_matchers) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (!absl::ConsumePrefix(&line, metric) || line.empty() || (line[0] != '{' && line[0] != ' ')) {
      continue;
    }
    const size_t space = line.rfind(' ');
    const absl::string_view labels = line.substr(0, space);
    bool match = true;
    for (absl::string_view matcher : label_matchers) {
      match = match && labels.find(matcher) != absl::string_view::npos;
    }
    double value = 0;
    if (match && absl::SimpleAtod(line.substr(space + 1), &value)) {
      sum += value;
    }
  }
  return sum;
}

std::string PromtoolCheck(const std::string& scrape, bool* skipped) {
  *skipped = false;
  const char* promtool = std::getenv("PORTCULLIS_PROMTOOL");
  if (promtool == nullptr || *promtool == '\0') {
    *skipped = true;
    return "";
  }
  const std::string path = portcullis::testing::PrivateTempPath("verifier-metrics.txt");
  std::ofstream(path) << scrape;
  const std::string command =
      absl::StrCat(promtool, " check metrics < ", path, " > ", path, ".out 2>&1");
  const int exit_status = std::system(command.c_str());
  std::ifstream report(absl::StrCat(path, ".out"));
  const std::string text((std::istreambuf_iterator<char>(report)), {});
  // promtool exits 1 for format errors and 3 for lint problems only; both count.
  return exit_status == 0 ? "" : absl::StrCat("promtool exit ", exit_status, ": ", text);
}

}  // namespace portcullis::integration
