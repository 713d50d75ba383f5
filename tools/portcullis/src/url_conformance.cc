#include "tools/portcullis/src/url_conformance.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/json.hpp"
#include "common/url/url.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace json = boost::json;
using url::Url;

std::string ToStd(const json::string& s) { return std::string(s.data(), s.size()); }

json::string_view ToJson(absl::string_view s) { return json::string_view(s.data(), s.size()); }

// `s` as a JSON string literal, so control characters and non-ASCII show unambiguously.
std::string Quote(absl::string_view s) { return json::serialize(json::string(ToJson(s))); }
std::string Quote(const json::string& s) { return json::serialize(s); }

// The URL Standard API's view of a URL (what web-platform-tests compare), in a fixed order.
std::vector<std::pair<std::string, std::string>> ComponentsOf(const Url& url) {
  const std::string port = url.port() ? absl::StrCat(*url.port()) : "";
  return {
      {"href", url.href()},
      {"origin", url.origin()},
      {"protocol", absl::StrCat(url.scheme(), ":")},
      {"username", url.username()},
      {"password", url.password()},
      {"host", port.empty() ? url.host() : absl::StrCat(url.host(), ":", port)},
      {"hostname", url.host()},
      {"port", port},
      {"pathname", url.path()},
      {"search", url.query() && !url.query()->empty() ? absl::StrCat("?", *url.query()) : ""},
      {"hash",
       url.fragment() && !url.fragment()->empty() ? absl::StrCat("#", *url.fragment()) : ""},
  };
}

struct Outcome {
  enum class Kind { kPass, kFail, kSkip };
  Kind kind;
  std::string detail;  // why it failed, or the skip reason
  bool failure_refused_by_scheme = false;
};

Outcome Pass() { return {Outcome::Kind::kPass, ""}; }
Outcome Fail(std::string why) { return {Outcome::Kind::kFail, std::move(why)}; }

// Known differences, each with its reason. ICU 72 implements UTS #46 for Unicode 15.0; the WHATWG
// data follows the newest IdnaMappingTable. None of these occurs in urltestdata.json (every http/
// https case there passes); they are host-to-ASCII cases of toascii.json. A listed case that fails
// is printed as KNOWN with its reason and counted apart; one that passes is simply a pass.
struct KnownDifference {
  absl::string_view input;
  absl::string_view reason;
};
constexpr KnownDifference kKnownDifferences[] = {
    {"look\u180Eout.net",
     "newer IDNA mapping tables ignore U+180E MONGOLIAN VOWEL SEPARATOR; ICU 72 (Unicode 15.0) "
     "disallows it"},
    {"\U0002F868.com",
     "newer IDNA mapping tables map CJK compatibility ideograph U+2F868 to U+36FC; ICU 72 "
     "(Unicode 15.0) disallows it"},
    {"\u2183.com",
     "newer IDNA mapping tables map U+2183 ROMAN NUMERAL REVERSED ONE HUNDRED to U+2184; ICU 72 "
     "(Unicode 15.0) disallows it"},
    {"\u1E9E.com",
     "newer IDNA mapping tables map U+1E9E LATIN CAPITAL LETTER SHARP S to U+00DF; ICU 72 "
     "(Unicode 15.0) maps it to \"ss\""},
    {"\u1E9E.foo.com", "as for \"\u1E9E.com\""},
};

const KnownDifference* FindKnownDifference(absl::string_view input) {
  for (const KnownDifference& known : kKnownDifferences) {
    if (known.input == input) {
      return &known;
    }
  }
  return nullptr;
}

bool IsSpecialHttpProtocol(const json::object& expected) {
  const json::value* protocol = expected.if_contains("protocol");
  return protocol != nullptr && protocol->is_string() &&
         (protocol->get_string() == "http:" || protocol->get_string() == "https:");
}

bool IsHttpScheme(absl::string_view scheme) { return scheme == "http" || scheme == "https"; }

// An http(s) case: its input, or the base a relative input is read against, or its answer is
// http(s). Such a case is what the parser is for: it passes or fails, it is never skipped.
bool IsHttpCase(const json::object& test, absl::string_view input) {
  const std::string input_scheme = url::SchemeOf(input);
  if (IsHttpScheme(input_scheme) || IsSpecialHttpProtocol(test)) {
    return true;
  }
  const json::value* base = test.if_contains("base");
  return input_scheme.empty() && base != nullptr && base->is_string() &&
         IsHttpScheme(url::SchemeOf(ToStd(base->get_string())));
}

// One urltestdata.json case (already checked to have a string `input`).
Outcome RunUrlTestCase(const json::object& test) {
  const std::string input = ToStd(test.at("input").get_string());
  const json::value* base_value = test.if_contains("base");
  const bool expect_failure = test.if_contains("failure") != nullptr &&
                              test.at("failure").is_bool() && test.at("failure").get_bool();

  absl::StatusOr<Url> base = absl::NotFoundError("no base");
  const Url* base_url = nullptr;
  std::string unsupported_base_scheme;
  absl::StatusOr<Url> result = absl::UnknownError("not run");
  if (base_value != nullptr && base_value->is_string()) {
    const std::string base_text = ToStd(base_value->get_string());
    base = url::ParseUrl(base_text);
    if (base.ok()) {
      base_url = &*base;
    } else if (absl::IsUnimplemented(base.status())) {
      unsupported_base_scheme = url::SchemeOf(base_text);
    }
  }
  if (!base.ok() && !absl::IsNotFound(base.status()) && !absl::IsUnimplemented(base.status())) {
    // An invalid base makes the whole construction fail, as `new URL(input, base)` throws.
    result = base.status();
  } else {
    result = url::ParseUrl(input, base_url);
  }

  std::string skip_reason;
  if (absl::IsUnimplemented(result.status())) {
    skip_reason = absl::StrCat("input scheme '", url::SchemeOf(input), "'");
  } else if (!result.ok() && !unsupported_base_scheme.empty() && url::SchemeOf(input).empty()) {
    skip_reason = absl::StrCat("relative to a base with scheme '", unsupported_base_scheme, "'");
  }
  if (!skip_reason.empty()) {
    if (IsHttpCase(test, input)) {
      // Never skip an http(s) case: refusing one as an unsupported scheme is a bug.
      const json::value* href = test.if_contains("href");
      return Fail(absl::StrCat(
          "expected ",
          expect_failure ? std::string("a parse failure")
          : href != nullptr && href->is_string() ? Quote(href->get_string())
                                                 : std::string("a URL"),
          ", but it was refused as an unsupported scheme: ", result.status().ToString()));
    }
    if (expect_failure) {
      // Refused, as expected, but for the scheme alone: nothing about the error was checked.
      Outcome outcome = {Outcome::Kind::kSkip,
                         absl::StrCat("failure case refused only for its scheme '",
                                      url::SchemeOf(input).empty()
                                          ? unsupported_base_scheme
                                          : url::SchemeOf(input),
                                      "'")};
      outcome.failure_refused_by_scheme = true;
      return outcome;
    }
    return {Outcome::Kind::kSkip, skip_reason};
  }

  if (expect_failure) {
    if (!result.ok()) {
      return Pass();
    }
    return Fail(absl::StrCat("expected failure, got ", Quote(result->href())));
  }
  if (!result.ok()) {
    const json::value* href = test.if_contains("href");
    return Fail(absl::StrCat(
        "expected ",
        href != nullptr && href->is_string() ? Quote(href->get_string()) : std::string("a URL"),
        ", got error ", result.status().ToString()));
  }
  std::vector<std::string> differences;
  for (const auto& [name, actual] : ComponentsOf(*result)) {
    const json::value* expected = test.if_contains(name);
    if (expected == nullptr || !expected->is_string()) {
      continue;  // "origin" is absent from some cases
    }
    if (expected->get_string() != ToJson(actual)) {
      differences.push_back(
          absl::StrCat(name, ": got ", Quote(actual), ", want ", Quote(expected->get_string())));
    }
  }
  if (differences.empty()) {
    return Pass();
  }
  return Fail(absl::StrJoin(differences, "; "));
}

// One toascii.json case, checked as web-platform-tests does: "https://" input "/x" must parse with
// that host (or fail when `output` is null).
Outcome RunToAsciiCase(const json::object& test) {
  const std::string input = ToStd(test.at("input").get_string());
  const json::value& output = test.at("output");
  const absl::StatusOr<Url> result = url::ParseUrl(absl::StrCat("https://", input, "/x"));
  if (output.is_null()) {
    if (!result.ok()) {
      return Pass();
    }
    return Fail(absl::StrCat("expected failure, got host ", Quote(result->host())));
  }
  const std::string expected = ToStd(output.get_string());
  if (!result.ok()) {
    return Fail(absl::StrCat("expected host ", Quote(expected), ", got error ",
                             result.status().ToString()));
  }
  if (result->host() != expected || result->port().has_value() || result->path() != "/x" ||
      result->href() != absl::StrCat("https://", expected, "/x")) {
    return Fail(absl::StrCat("expected host ", Quote(expected), ", got ", Quote(result->href())));
  }
  return Pass();
}

enum class Format { kUrlTestData, kToAscii };

// Checks the shape of every case before anything runs, so malformed data is one clear error.
absl::StatusOr<Format> CheckShape(const json::array& cases) {
  std::optional<Format> format;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json::value& item = cases[i];
    if (item.is_string()) {
      continue;  // a comment
    }
    const json::object* test = item.if_object();
    const auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("case ", i, ": ", why));
    };
    if (test == nullptr) {
      return bad("neither a comment string nor an object");
    }
    const json::value* input = test->if_contains("input");
    if (input == nullptr || !input->is_string()) {
      return bad("no string \"input\"");
    }
    const Format shape = test->contains("output") ? Format::kToAscii : Format::kUrlTestData;
    if (format && *format != shape) {
      return bad("mixes the toascii.json and urltestdata.json formats");
    }
    format = shape;
    if (shape == Format::kToAscii) {
      const json::value& output = test->at("output");
      if (!output.is_null() && !output.is_string()) {
        return bad("\"output\" is neither a string nor null");
      }
      continue;
    }
    const json::value* base = test->if_contains("base");
    if (base != nullptr && !base->is_null() && !base->is_string()) {
      return bad("\"base\" is neither a string nor null");
    }
    const json::value* failure = test->if_contains("failure");
    if (failure != nullptr && failure->is_bool() && failure->get_bool()) {
      continue;
    }
    const json::value* href = test->if_contains("href");
    if (href == nullptr || !href->is_string()) {
      return bad("neither \"failure\": true nor a string \"href\"");
    }
  }
  if (!format) {
    return absl::InvalidArgumentError("no test cases");
  }
  return *format;
}

}  // namespace

absl::StatusOr<UrlConformanceSummary> RunUrlConformance(absl::string_view json_text,
                                                        std::ostream& out) {
  std::error_code error;
  const json::value document = json::parse(ToJson(json_text), error);
  if (error) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", error.message()));
  }
  const json::array* cases = document.if_array();
  if (cases == nullptr) {
    return absl::InvalidArgumentError("expected a JSON array of test cases");
  }
  const absl::StatusOr<Format> format = CheckShape(*cases);
  if (!format.ok()) {
    return format.status();
  }

  UrlConformanceSummary summary;
  for (const json::value& item : *cases) {
    const json::object* test = item.if_object();
    if (test == nullptr) {
      continue;
    }
    const Outcome outcome =
        *format == Format::kToAscii ? RunToAsciiCase(*test) : RunUrlTestCase(*test);
    switch (outcome.kind) {
      case Outcome::Kind::kPass:
        ++summary.passed;
        break;
      case Outcome::Kind::kSkip:
        ++summary.skipped;
        ++summary.skipped_by_reason[outcome.detail];
        if (outcome.failure_refused_by_scheme) {
          ++summary.skipped_failure_by_scheme;
        }
        break;
      case Outcome::Kind::kFail: {
        const std::string input = ToStd(test->at("input").get_string());
        const KnownDifference* known = FindKnownDifference(input);
        if (known != nullptr) {
          ++summary.known_differences;
        } else {
          ++summary.failed;
        }
        const json::value* base = test->if_contains("base");
        out << (known != nullptr ? "KNOWN " : "FAIL ") << Quote(input);
        if (base != nullptr && base->is_string()) {
          out << " base " << Quote(base->get_string());
        }
        out << ": " << outcome.detail;
        if (known != nullptr) {
          out << " [known difference: " << known->reason << "]";
        }
        out << "\n";
        break;
      }
    }
  }

  if (!summary.skipped_by_reason.empty()) {
    std::vector<std::pair<std::string, int>> reasons(summary.skipped_by_reason.begin(),
                                                     summary.skipped_by_reason.end());
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out << "skipped by reason:\n";
    for (const auto& [reason, count] : reasons) {
      out << "  " << count << " " << reason << "\n";
    }
  }
  if (summary.known_differences > 0) {
    out << summary.known_differences
        << " known differences (listed above as KNOWN with their reasons; not counted as passed, "
           "failed or skipped)\n";
  }
  out << summary.passed << " passed, " << summary.failed << " failed, " << summary.skipped
      << " skipped";
  if (summary.skipped_failure_by_scheme > 0) {
    out << " (" << summary.skipped_failure_by_scheme
        << " of them failure cases refused only for their scheme)";
  }
  out << "\n";
  return summary;
}

int RunUrlConformanceFile(const std::string& path, MissingData missing, bool ci, std::ostream& out,
                          std::ostream& err) {
  if (const std::optional<int> exit_code = ExitUnlessPresent(path, "URL conformance data", missing, ci, err)) {
    return *exit_code;
  }
  const std::optional<std::string> text = ReadWholeFile(path, err);
  if (!text) {
    return kExitFailed;
  }
  const absl::StatusOr<UrlConformanceSummary> summary = RunUrlConformance(*text, out);
  if (!summary.ok()) {
    err << "error: " << path << ": " << summary.status().message() << "\n";
    return kExitFailed;
  }
  return summary->failed == 0 ? kExitOk : kExitFailed;
}

int PrintParsedUrl(const std::string& input, const std::optional<std::string>& base,
                   std::ostream& out, std::ostream& err) {
  absl::StatusOr<Url> base_url = absl::NotFoundError("no base");
  if (base) {
    base_url = url::ParseUrl(*base);
    if (!base_url.ok()) {
      err << "error: base: " << base_url.status().ToString() << "\n";
      return kExitFailed;
    }
  }
  const absl::StatusOr<Url> parsed = url::ParseUrl(input, base ? &*base_url : nullptr);
  if (!parsed.ok()) {
    err << "error: " << parsed.status().ToString() << "\n";
    return kExitFailed;
  }
  json::object object;
  for (const auto& [name, value] : ComponentsOf(*parsed)) {
    object[name] = ToJson(value);
  }
  out << json::serialize(object) << "\n";
  return kExitOk;
}

}  // namespace portcullis::cli
