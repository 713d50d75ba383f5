#include "tools/portcullis/src/mf2_commands.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "common/url/url.h"
#include "tools/portcullis/src/cli.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string Brief(const json::value& value) {
  std::string text = json::serialize(value);
  if (text.size() > 200) {
    text = absl::StrCat(text.substr(0, 200), "...");
  }
  return text;
}

void Differences(const json::value& actual, const json::value& expected, const std::string& path,
                 std::vector<std::string>& out) {
  if (actual.kind() != expected.kind() &&
      !(actual.is_number() && expected.is_number() && actual == expected)) {
    out.push_back(absl::StrCat(path, ": expected ", Brief(expected), ", got ", Brief(actual)));
    return;
  }
  if (expected.is_object()) {
    const json::object& a = actual.as_object();
    const json::object& e = expected.as_object();
    for (const auto& [key, value] : e) {
      const std::string child = absl::StrCat(path, ".", std::string(key));
      if (const json::value* found = a.if_contains(key)) {
        Differences(*found, value, child, out);
      } else {
        out.push_back(absl::StrCat(child, ": missing, expected ", Brief(value)));
      }
    }
    for (const auto& [key, value] : a) {
      if (!e.contains(key)) {
        out.push_back(absl::StrCat(path, ".", std::string(key), ": unexpected ", Brief(value)));
      }
    }
    return;
  }
  if (expected.is_array()) {
    const json::array& a = actual.as_array();
    const json::array& e = expected.as_array();
    for (size_t i = 0; i < std::min(a.size(), e.size()); ++i) {
      Differences(a[i], e[i], absl::StrCat(path, "[", i, "]"), out);
    }
    for (size_t i = a.size(); i < e.size(); ++i) {
      out.push_back(absl::StrCat(path, "[", i, "]: missing, expected ", Brief(e[i])));
    }
    for (size_t i = e.size(); i < a.size(); ++i) {
      out.push_back(absl::StrCat(path, "[", i, "]: unexpected ", Brief(a[i])));
    }
    return;
  }
  if (actual != expected) {
    out.push_back(absl::StrCat(path, ": expected ", Brief(expected), ", got ", Brief(actual)));
  }
}

void PrettyPrint(std::ostream& out, const json::value& value, const std::string& indent) {
  switch (value.kind()) {
    case json::kind::object: {
      const json::object& object = value.as_object();
      if (object.empty()) {
        out << "{}";
        return;
      }
      out << "{\n";
      size_t i = 0;
      for (const auto& [key, member] : object) {
        out << indent << "  " << json::serialize(json::value(key)) << ": ";
        PrettyPrint(out, member, indent + "  ");
        out << (++i < object.size() ? ",\n" : "\n");
      }
      out << indent << "}";
      return;
    }
    case json::kind::array: {
      const json::array& array = value.as_array();
      if (array.empty()) {
        out << "[]";
        return;
      }
      out << "[\n";
      for (size_t i = 0; i < array.size(); ++i) {
        out << indent << "  ";
        PrettyPrint(out, array[i], indent + "  ");
        out << (i + 1 < array.size() ? ",\n" : "\n");
      }
      out << indent << "]";
      return;
    }
    default:
      out << json::serialize(value);
  }
}

}  // namespace

std::vector<std::string> JsonDifferences(const json::value& actual, const json::value& expected) {
  std::vector<std::string> out;
  Differences(actual, expected, "$", out);
  return out;
}

int PrintMf2(const std::string& path, const std::string& base_url, std::ostream& out,
             std::ostream& err) {
  const std::optional<std::string> html = ReadFile(path);
  if (!html.has_value()) {
    err << "error: cannot read " << path << "\n";
    return kExitFailed;
  }
  absl::StatusOr<json::object> parsed = verifier::html::ParseMf2(*html, base_url);
  if (!parsed.ok()) {
    err << "error: " << parsed.status().message() << "\n";
    return kExitFailed;
  }
  PrettyPrint(out, *parsed, "");
  out << "\n";
  return kExitOk;
}

int RunMf2Conformance(const std::string& dir, const std::string& base_url, MissingData missing,
                      bool ci, std::ostream& out, std::ostream& err, Mf2Mode mode) {
  if (const std::optional<int> exit_code =
          ExitUnlessPresent(dir, "mf2 test suite", missing, ci, err)) {
    return *exit_code;
  }
  std::error_code error;
  if (!url::ParseUrl(base_url).ok()) {
    err << "error: --base-url is not an absolute http(s) URL: " << base_url << "\n";
    return kExitFailed;
  }
  std::vector<fs::path> cases;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".html") {
      fs::path expected = entry.path();
      expected.replace_extension(".json");
      if (fs::exists(expected)) {
        cases.push_back(entry.path());
      }
    }
  }
  std::sort(cases.begin(), cases.end());
  Mf2ConformanceSummary summary;
  for (const fs::path& html_path : cases) {
    fs::path json_path = html_path;
    json_path.replace_extension(".json");
    const std::string name = fs::relative(html_path, dir, error).replace_extension().string();
    const std::optional<std::string> html = ReadFile(html_path);
    const std::optional<std::string> expected_text = ReadFile(json_path);
    std::vector<std::string> differences;
    if (!html.has_value() || !expected_text.has_value()) {
      differences.push_back("cannot read the case");
    } else {
      json::value expected;
      try {
        expected = json::parse(*expected_text);
      } catch (const std::exception& e) {
        differences.push_back(absl::StrCat("expected JSON does not parse: ", e.what()));
      }
      if (differences.empty()) {
        absl::StatusOr<json::object> actual = verifier::html::ParseMf2(*html, base_url);
        if (!actual.ok()) {
          differences.push_back(std::string(actual.status().message()));
        } else {
          differences = JsonDifferences(*actual, expected);
        }
      }
    }
    if (differences.empty()) {
      ++summary.passed;
      continue;
    }
    ++summary.failed;
    out << "FAIL " << name << "\n";
    for (const std::string& difference : differences) {
      out << "  " << difference << "\n";
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed\n";
  if (cases.empty()) {
    err << "error: no NAME.html + NAME.json pairs under " << dir << "\n";
    return kExitFailed;
  }
  if (mode == Mf2Mode::kReport) {
    out << "(report only: every case ran; failures here never fail the build)\n";
    return kExitOk;
  }
  return summary.failed == 0 ? kExitOk : kExitFailed;
}

int RunMf2Command(const std::vector<std::string>& args, const std::string& base_url_flag,
                  std::ostream& out, std::ostream& err) {
  const std::string base_url = base_url_flag.empty() ? kDefaultMf2BaseUrl : base_url_flag;
  if (!args.empty() && args[0] == "mf2") {
    if (args.size() != 2) {
      err << "error: usage: portcullis mf2 [--base-url URL] FILE\n";
      return kExitUsage;
    }
    return PrintMf2(args[1], base_url, out, err);
  }
  // conformance mf2[-report] DIR | conformance mf2[-report]-if-present DIR
  if (args.size() != 3) {
    err << "error: usage: portcullis conformance mf2[-report] [--base-url URL] DIR\n";
    return kExitUsage;
  }
  const char* ci = std::getenv("CI");
  const bool if_present = args[1] == "mf2-if-present" || args[1] == "mf2-report-if-present";
  const bool report = args[1] == "mf2-report" || args[1] == "mf2-report-if-present";
  return RunMf2Conformance(args[2], base_url,
                           if_present ? MissingData::kSkipUnlessCi : MissingData::kFail,
                           ci != nullptr && std::string(ci) == "true", out, err,
                           report ? Mf2Mode::kReport : Mf2Mode::kGate);
}

}  // namespace portcullis::cli
