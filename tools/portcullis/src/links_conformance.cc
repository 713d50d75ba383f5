#include "tools/portcullis/src/links_conformance.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/json.hpp"
#include "common/url/url.h"
#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/http_fixture.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/link_matcher.h"

namespace portcullis::cli {
namespace {

namespace json = boost::json;

// Redirects followed between fixtures, as the fetcher follows at most 3.
constexpr int kMaxFixtureRedirects = 3;

struct LinkCase {
  std::string fixture;
  std::string target;
  bool found = false;
};

std::string ToStd(json::string_view s) { return std::string(s.data(), s.size()); }

absl::StatusOr<std::pair<std::string, std::vector<LinkCase>>> ReadCases(absl::string_view text) {
  json::value root;
  try {
    root = json::parse(json::string_view(text.data(), text.size()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("expected JSON does not parse: ", e.what()));
  }
  const json::object* cases = nullptr;
  if (root.is_object()) {
    if (const json::value* value = root.as_object().if_contains(kLinkCasesKey)) {
      cases = value->if_object();
    }
  }
  if (cases == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected JSON has no object \"", kLinkCasesKey, "\""));
  }
  const json::value* base = cases->if_contains("_base");
  if (base == nullptr || !base->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", kLinkCasesKey, "\" has no string \"_base\""));
  }
  std::vector<LinkCase> out;
  for (const auto& [key, value] : *cases) {
    if (absl::StartsWith(ToStd(key), "_")) {
      continue;  // _base, _upstream, comments
    }
    const std::string name = ToStd(key);
    if (!value.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat("case ", name, ": not an array"));
    }
    for (const json::value& item : value.as_array()) {
      const json::object* object = item.if_object();
      const json::value* target = object ? object->if_contains("target") : nullptr;
      const json::value* found = object ? object->if_contains("found") : nullptr;
      if (target == nullptr || !target->is_string() || found == nullptr || !found->is_bool()) {
        return absl::InvalidArgumentError(
            absl::StrCat("case ", name, ": want {\"target\": string, \"found\": bool}, got ",
                         json::serialize(item)));
      }
      out.push_back({name, ToStd(target->get_string()), found->get_bool()});
    }
  }
  return std::make_pair(ToStd(base->get_string()), std::move(out));
}

// The fixture NAME served at `url` when `url` is under `base` (base + NAME), else nullopt.
std::optional<std::string> FixtureNameOf(const url::Url& url, const url::Url& base) {
  const std::string href = url.href();
  const std::string prefix = base.href();
  if (!absl::StartsWith(href, prefix) || href.size() == prefix.size()) {
    return std::nullopt;
  }
  std::string name = href.substr(prefix.size());
  if (name.find_first_of("/?#") != std::string::npos) {
    return std::nullopt;
  }
  return name;
}

// The page a fetch of fixture `name` ends on: its final URL and fixture, after redirects.
struct FetchedPage {
  url::Url url;
  HttpFixture response;
};

absl::StatusOr<FetchedPage> FetchFixture(const std::filesystem::path& dir, const url::Url& base,
                                         const std::string& name) {
  std::string current = name;
  for (int hop = 0;; ++hop) {
    absl::StatusOr<url::Url> page_url = url::ParseUrl(current, &base);
    if (!page_url.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fixture URL ", base.href(), current, " does not parse"));
    }
    absl::StatusOr<HttpFixture> response = ReadHttpFixture((dir / current).string());
    if (!response.ok()) {
      return response.status();
    }
    const std::optional<std::string> location = response->Header("location");
    if (response->status_code < 300 || response->status_code > 399 || !location.has_value()) {
      return FetchedPage{*std::move(page_url), *std::move(response)};
    }
    if (hop == kMaxFixtureRedirects) {
      return absl::FailedPreconditionError("too many redirects");
    }
    absl::StatusOr<url::Url> next = url::ParseUrl(*location, &*page_url);
    std::optional<std::string> next_name;
    if (next.ok()) {
      next_name = FixtureNameOf(*next, base);
    }
    if (!next_name.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("redirect to ", *location, ", which is no fixture under ", base.href()));
    }
    current = *next_name;
  }
}

}  // namespace

absl::StatusOr<LinksConformanceSummary> RunLinksConformance(const std::string& fixtures_dir,
                                                            absl::string_view expected_json,
                                                            std::ostream& out) {
  absl::StatusOr<std::pair<std::string, std::vector<LinkCase>>> read = ReadCases(expected_json);
  if (!read.ok()) {
    return read.status();
  }
  const auto& [base_text, cases] = *read;
  const absl::StatusOr<url::Url> base = url::ParseUrl(base_text);
  if (!base.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"_base\" is not an absolute http(s) URL: ", base_text));
  }
  LinksConformanceSummary summary;
  const auto fail = [&](const LinkCase& c, const std::string& why) {
    ++summary.failed;
    out << "FAIL " << c.fixture << " " << c.target << ": " << why << "\n";
  };
  for (const LinkCase& c : cases) {
    const absl::StatusOr<url::Url> target = url::ParseUrl(c.target);
    if (!target.ok()) {
      fail(c, absl::StrCat("target does not parse: ", target.status().message()));
      continue;
    }
    const absl::StatusOr<FetchedPage> page = FetchFixture(fixtures_dir, *base, c.fixture);
    if (!page.ok()) {
      fail(c, absl::StrCat("fixture: ", page.status().message()));
      continue;
    }
    const verifier::html::HtmlDocument document =
        verifier::html::HtmlDocument::Parse(page->response.body);
    const verifier::html::LinkMatch match = verifier::html::FindLink(document, page->url, *target);
    if (page->response.status_code != 200) {
      // The verifier reads no links from an error page; only a "not found" can pass, and only
      // when the matcher, run on the body all the same, agrees.
      if (c.found) {
        fail(c, absl::StrCat("expected a link, but the fixture answers ",
                             page->response.status_code,
                             match.found ? " (its body links to the target)" : ""));
      } else if (match.found) {
        ++summary.skipped;
        out << "SKIP " << c.fixture << " " << c.target << ": the fixture answers "
            << page->response.status_code
            << ", from which the verifier reads no links, but its body links to the target ("
            << match.matched_by << "): the matcher's answer is not what this case checks\n";
      } else {
        ++summary.passed;
      }
      continue;
    }
    if (match.found == c.found) {
      ++summary.passed;
      continue;
    }
    if (c.found) {
      std::string why = "expected a link, found none";
      if (match.found_outside_post) {
        why += " (the target is linked only outside the page's post microformats)";
      }
      if (match.scan_truncated) {
        why += " (scan stopped at a limit)";
      }
      if (!match.links_to_target_host.empty()) {
        absl::StrAppend(&why, "; links to ", target->host(), ": ",
                        absl::StrJoin(match.links_to_target_host, " "));
      }
      fail(c, why);
    } else {
      fail(c, absl::StrCat("expected no link, found one (", match.matched_by, ")"));
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed";
  if (summary.skipped > 0) {
    out << ", " << summary.skipped << " skipped";
  }
  out << "\n";
  return summary;
}

int RunLinksConformanceFiles(const std::string& fixtures_dir, const std::string& expected_path,
                             MissingData missing, bool ci, std::ostream& out, std::ostream& err) {
  if (const std::optional<int> exit_code =
          ExitUnlessPresent(expected_path, "expected link results", missing, ci, err)) {
    return *exit_code;
  }
  if (const std::optional<int> exit_code =
          ExitUnlessPresent(fixtures_dir, "link fixtures", missing, ci, err)) {
    return *exit_code;
  }
  const std::optional<std::string> text = ReadWholeFile(expected_path, err);
  if (!text.has_value()) {
    return kExitFailed;
  }
  const absl::StatusOr<LinksConformanceSummary> summary =
      RunLinksConformance(fixtures_dir, *text, out);
  if (!summary.ok()) {
    err << "error: " << expected_path << ": " << summary.status().message() << "\n";
    return kExitFailed;
  }
  if (summary->passed + summary->failed == 0) {
    err << "error: no case under \"" << kLinkCasesKey << "\" in " << expected_path
        << (summary->skipped > 0 ? " was run (all were skipped)" : "") << "\n";
    return kExitFailed;
  }
  return summary->failed == 0 ? kExitOk : kExitFailed;
}

int RunLinksCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 4) {
    err << "error: wrong number of arguments for 'conformance " << args[1] << "'\n" << Usage();
    return kExitUsage;
  }
  const char* ci = std::getenv("CI");
  return RunLinksConformanceFiles(
      args[2], args[3], args[1] == "links" ? MissingData::kFail : MissingData::kSkipUnlessCi,
      ci != nullptr && std::string(ci) == "true", out, err);
}

}  // namespace portcullis::cli
