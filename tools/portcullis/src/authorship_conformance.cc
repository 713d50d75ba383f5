#include "tools/portcullis/src/authorship_conformance.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boost/json.hpp"
#include "common/url/url.h"
#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/http_fixture.h"
#include "verifier-service/src/html/authorship.h"
#include "verifier-service/src/html/mention_classifier.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using verifier::html::Author;

// Redirects followed between fixtures, as the fetcher follows at most 3.
constexpr int kMaxFixtureRedirects = 3;

std::string ToStd(json::string_view s) { return std::string(s.data(), s.size()); }

struct AuthorshipCase {
  std::string name;
  // The parsed page given inline ("_inline…" cases); otherwise the fixture `name` is fetched.
  std::optional<json::object> input;
  // "items[0].children[1]" → {0, 1}; empty for the primary h-entry.
  std::vector<size_t> entry_path;
  Author expected;
};

struct FetchedPage {
  std::string body;
  std::string final_url;
};

// Serves the fixtures of one folder under one base URL.
class FixturePages {
 public:
  FixturePages(std::string dir, url::Url base) : dir_(std::move(dir)), base_(std::move(base)) {}

  const url::Url& base() const { return base_; }

  absl::StatusOr<FetchedPage> Fetch(const std::string& start_url) const {
    std::string current = start_url;
    for (int hop = 0; hop <= kMaxFixtureRedirects; ++hop) {
      absl::StatusOr<url::Url> parsed = url::ParseUrl(current);
      if (!parsed.ok()) {
        return parsed.status();
      }
      std::string href = parsed->href();
      href.resize(std::min(href.size(), href.find('#')));
      const std::string base = base_.href();
      if (!absl::StartsWith(href, base)) {
        return absl::NotFoundError(absl::StrCat(href, " is not under ", base));
      }
      const std::string name = href.substr(base.size());
      if (name.empty() || name.find_first_of("/?\\") != std::string::npos || name == "..") {
        return absl::NotFoundError(absl::StrCat("no fixture for ", href));
      }
      const fs::path path = fs::path(dir_) / name;
      std::error_code error;
      if (!fs::is_regular_file(path, error)) {
        return absl::NotFoundError(absl::StrCat("no fixture for ", href));
      }
      std::optional<std::string> text = ReadWholeFile(path.string(), discard_);
      if (!text.has_value()) {
        return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
      }
      if (!absl::StartsWith(*text, "HTTP/")) {
        return FetchedPage{*std::move(text), href};
      }
      absl::StatusOr<HttpFixture> fixture = ParseHttpFixture(*text);
      if (!fixture.ok()) {
        return fixture.status();
      }
      if (fixture->status_code >= 300 && fixture->status_code < 400) {
        const std::optional<std::string> location = fixture->Header("location");
        if (!location.has_value()) {
          return absl::NotFoundError(absl::StrCat(href, ": redirect without Location"));
        }
        absl::StatusOr<url::Url> next = url::ParseUrl(*location, &*parsed);
        if (!next.ok()) {
          return next.status();
        }
        current = next->href();
        continue;
      }
      if (fixture->status_code < 200 || fixture->status_code >= 300) {
        return absl::UnavailableError(absl::StrCat(href, ": status ", fixture->status_code));
      }
      return FetchedPage{std::move(fixture->body), href};
    }
    return absl::NotFoundError(absl::StrCat(start_url, ": too many redirects"));
  }

 private:
  std::string dir_;
  url::Url base_;
  mutable std::ostringstream discard_;
};

std::optional<std::vector<size_t>> ParseEntryPath(const std::string& note) {
  static const std::regex kHead(R"(^items\[(\d+)\]((?:\.children\[\d+\])*))");
  static const std::regex kChild(R"(\.children\[(\d+)\])");
  std::smatch match;
  if (!std::regex_search(note, match, kHead)) {
    return std::nullopt;
  }
  std::vector<size_t> path = {std::stoul(match[1].str())};
  const std::string children = match[2].str();
  for (auto it = std::sregex_iterator(children.begin(), children.end(), kChild);
       it != std::sregex_iterator(); ++it) {
    path.push_back(std::stoul((*it)[1].str()));
  }
  return path;
}

// The item at `path` (items[p0].children[p1]…), or nullptr.
const json::object* ItemAt(const json::object& mf2, const std::vector<size_t>& path) {
  const json::value* items = mf2.if_contains("items");
  const json::object* item = nullptr;
  for (const size_t index : path) {
    if (items == nullptr || !items->is_array() || index >= items->get_array().size() ||
        !items->get_array()[index].is_object()) {
      return nullptr;
    }
    item = &items->get_array()[index].get_object();
    items = item->if_contains("children");
  }
  return item;
}

absl::StatusOr<std::pair<url::Url, std::vector<AuthorshipCase>>> ReadCases(
    const std::string& fixtures_dir, absl::string_view text, absl::string_view key) {
  json::value root;
  try {
    root = json::parse(json::string_view(text.data(), text.size()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("expected JSON does not parse: ", e.what()));
  }
  const json::object* cases = nullptr;
  if (root.is_object()) {
    if (const json::value* value =
            root.as_object().if_contains(json::string_view(key.data(), key.size()))) {
      cases = value->if_object();
    }
  }
  if (cases == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("expected JSON has no object \"", key, "\""));
  }
  std::string base_text;
  if (const json::value* base = cases->if_contains("_base"); base != nullptr) {
    if (!base->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": \"_base\" is not a string"));
    }
    base_text = ToStd(base->get_string());
  } else {
    // A folder named by host, as the XRay fixtures: served at http://FOLDER/.
    base_text =
        absl::StrCat("http://", fs::path(fixtures_dir).lexically_normal().filename().string(), "/");
  }
  absl::StatusOr<url::Url> base = url::ParseUrl(base_text);
  if (!base.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", key, "\": no usable base URL (", base_text, ")"));
  }
  std::vector<AuthorshipCase> out;
  for (const auto& [case_key, value] : *cases) {
    const std::string name = ToStd(case_key);
    const bool inline_case = absl::StartsWith(name, "_inline");
    if (absl::StartsWith(name, "_") && !inline_case) {
      continue;  // _base, _upstream, comments
    }
    const json::object* object = value.if_object();
    if (object == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("case ", name, ": not an object"));
    }
    AuthorshipCase c;
    c.name = name;
    if (inline_case) {
      const json::value* input = object->if_contains("_input");
      if (input == nullptr || !input->is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat("case ", name, ": no \"_input\" microformats object"));
      }
      c.input = input->get_object();
    }
    if (const json::value* entry = object->if_contains("_entry");
        entry != nullptr && entry->is_string()) {
      std::optional<std::vector<size_t>> path = ParseEntryPath(ToStd(entry->get_string()));
      if (!path.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("case ", name, ": \"_entry\" does not start with items[N]…"));
      }
      c.entry_path = *std::move(path);
    }
    for (const auto& [field, target] :
         {std::pair{"name", &c.expected.name}, std::pair{"url", &c.expected.url},
          std::pair{"photo", &c.expected.photo}, std::pair{"note", &c.expected.note}}) {
      if (const json::value* v = object->if_contains(field); v != nullptr) {
        if (!v->is_string()) {
          return absl::InvalidArgumentError(
              absl::StrCat("case ", name, ": \"", field, "\" is not a string"));
        }
        *target = ToStd(v->get_string());
      }
    }
    out.push_back(std::move(c));
  }
  return std::make_pair(*std::move(base), std::move(out));
}

// Runs one case: the author found, or the reason none could be looked for.
absl::StatusOr<Author> FindCaseAuthor(const AuthorshipCase& c, const FixturePages& pages,
                                      std::vector<std::string>& notes) {
  json::object mf2;
  url::Url page_url = pages.base();
  if (c.input.has_value()) {
    mf2 = *c.input;
  } else {
    absl::StatusOr<FetchedPage> page = pages.Fetch(pages.base().href() + c.name);
    if (!page.ok()) {
      return page.status();
    }
    absl::StatusOr<json::object> parsed = verifier::html::ParseMf2(page->body, page->final_url);
    if (!parsed.ok()) {
      return parsed.status();
    }
    mf2 = *std::move(parsed);
    page_url = *url::ParseUrl(page->final_url);
  }
  const json::object* entry = c.entry_path.empty() ? verifier::html::FindPrimaryEntry(mf2, page_url)
                                                   : ItemAt(mf2, c.entry_path);
  if (entry == nullptr) {
    notes.push_back("no h-entry");
    return Author();
  }
  verifier::html::AuthorLookup lookup = verifier::html::FindAuthor(mf2, *entry, page_url);
  if (lookup.author.has_value()) {
    return *lookup.author;
  }
  if (lookup.author_page.empty()) {
    notes.push_back("no author property, no rel=author");
    return Author();
  }
  notes.push_back(absl::StrCat("author page ", lookup.author_page));
  absl::StatusOr<FetchedPage> author_page = pages.Fetch(lookup.author_page);
  if (!author_page.ok()) {
    notes.push_back(
        absl::StrCat("not fetched (", author_page.status().message(), "): fallback used"));
    return lookup.fallback;
  }
  absl::StatusOr<json::object> author_mf2 =
      verifier::html::ParseMf2(author_page->body, author_page->final_url);
  if (!author_mf2.ok()) {
    return author_mf2.status();
  }
  std::optional<Author> author =
      verifier::html::AuthorFromPage(*author_mf2, lookup.author_page, author_page->final_url);
  if (!author.has_value()) {
    notes.push_back("no h-card chosen on the author page: fallback used");
    return lookup.fallback;
  }
  return *author;
}

std::string Quoted(const std::string& text) { return json::serialize(json::value(text)); }

}  // namespace

absl::StatusOr<AuthorshipConformanceSummary> RunAuthorshipConformance(
    const std::string& fixtures_dir, absl::string_view expected_json, absl::string_view key,
    std::ostream& out) {
  auto read = ReadCases(fixtures_dir, expected_json, key);
  if (!read.ok()) {
    return read.status();
  }
  auto& [base, cases] = *read;
  const FixturePages pages(fixtures_dir, base);
  AuthorshipConformanceSummary summary;
  for (const AuthorshipCase& c : cases) {
    std::vector<std::string> notes;
    std::vector<std::string> differences;
    absl::StatusOr<Author> actual = FindCaseAuthor(c, pages, notes);
    if (!actual.ok()) {
      differences.push_back(std::string(actual.status().message()));
    } else {
      for (const auto& [field, want, got] : {std::tuple{"name", c.expected.name, actual->name},
                                             std::tuple{"url", c.expected.url, actual->url},
                                             std::tuple{"photo", c.expected.photo, actual->photo},
                                             std::tuple{"note", c.expected.note, actual->note}}) {
        if (want != got) {
          differences.push_back(
              absl::StrCat(field, ": expected ", Quoted(want), ", got ", Quoted(got)));
        }
      }
    }
    if (differences.empty()) {
      ++summary.passed;
      continue;
    }
    ++summary.failed;
    out << "FAIL " << c.name << "\n";
    for (const std::string& line : differences) {
      out << "  " << line << "\n";
    }
    for (const std::string& note : notes) {
      out << "  (" << note << ")\n";
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed\n";
  return summary;
}

int RunAuthorshipConformanceFiles(const std::string& fixtures_dir, const std::string& expected_path,
                                  const std::string& key, MissingData missing, bool ci,
                                  std::ostream& out, std::ostream& err) {
  if (const std::optional<int> exit_code =
          ExitUnlessPresent(fixtures_dir, "authorship fixtures", missing, ci, err)) {
    return *exit_code;
  }
  if (const std::optional<int> exit_code =
          ExitUnlessPresent(expected_path, "authorship expected results", missing, ci, err)) {
    return *exit_code;
  }
  const std::optional<std::string> text = ReadWholeFile(expected_path, err);
  if (!text.has_value()) {
    return kExitFailed;
  }
  absl::StatusOr<AuthorshipConformanceSummary> summary =
      RunAuthorshipConformance(fixtures_dir, *text, key, out);
  if (!summary.ok()) {
    err << "error: " << summary.status().message() << "\n";
    return kExitFailed;
  }
  if (summary->passed + summary->failed == 0) {
    err << "error: no authorship cases under \"" << key << "\" in " << expected_path << "\n";
    return kExitFailed;
  }
  return summary->failed == 0 ? kExitOk : kExitFailed;
}

int RunAuthorshipCommand(const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err) {
  if (args.size() != 5) {
    err << "error: usage: portcullis conformance " << (args.size() > 1 ? args[1] : "authorship")
        << " FIXTURES EXPECTED KEY\n";
    return kExitUsage;
  }
  const char* ci = std::getenv("CI");
  return RunAuthorshipConformanceFiles(
      args[2], args[3], args[4],
      args[1] == "authorship" ? MissingData::kFail : MissingData::kSkipUnlessCi,
      ci != nullptr && std::string(ci) == "true", out, err);
}

}  // namespace portcullis::cli
