#include "tools/portcullis/src/http_fixture.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/url/url.h"

namespace portcullis::cli {
namespace {

// The next line of `text` from `*pos` without its CRLF or LF; advances `*pos` past the line end.
// `*ended` says whether a line ending was found (false for the file's last, unterminated line).
absl::string_view NextLine(absl::string_view text, std::size_t* pos, bool* ended) {
  const std::size_t start = *pos;
  const std::size_t newline = text.find('\n', start);
  std::size_t end = newline == absl::string_view::npos ? text.size() : newline;
  *ended = newline != absl::string_view::npos;
  *pos = *ended ? newline + 1 : text.size();
  if (end > start && text[end - 1] == '\r') {
    --end;
  }
  return text.substr(start, end - start);
}

absl::Status ParseStatusLine(absl::string_view line, HttpFixture& fixture) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("line 1: not an HTTP status line (want \"HTTP/1.1 200 OK\"): \"",
                     absl::CHexEscape(line.substr(0, 80)), "\""));
  };
  if (!absl::StartsWith(line, "HTTP/")) {
    return bad();
  }
  const std::size_t space = line.find(' ');
  if (space == absl::string_view::npos) {
    return bad();
  }
  absl::string_view rest = line.substr(space + 1);
  const absl::string_view code = rest.substr(0, 3);
  int value = 0;
  if (code.size() != 3 || !absl::ascii_isdigit(static_cast<unsigned char>(code[0])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(code[1])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(code[2])) ||
      !absl::SimpleAtoi(code, &value) || value < 100 || value > 599 ||
      (rest.size() > 3 && rest[3] != ' ')) {
    return bad();
  }
  fixture.status_code = value;
  fixture.reason = std::string(absl::StripAsciiWhitespace(rest.substr(3)));
  return absl::OkStatus();
}

}  // namespace

std::optional<std::string> HttpFixture::Header(absl::string_view name) const {
  for (const auto& [header_name, value] : headers) {
    if (absl::EqualsIgnoreCase(header_name, name)) {
      return value;
    }
  }
  return std::nullopt;
}

absl::StatusOr<HttpFixture> ParseHttpFixture(absl::string_view text) {
  HttpFixture fixture;
  std::size_t pos = 0;
  bool ended = false;
  if (text.empty()) {
    return absl::InvalidArgumentError("empty fixture: no status line");
  }
  if (absl::Status status = ParseStatusLine(NextLine(text, &pos, &ended), fixture); !status.ok()) {
    return status;
  }
  int line_number = 1;
  while (ended && pos < text.size()) {
    ++line_number;
    const absl::string_view line = NextLine(text, &pos, &ended);
    if (line.empty()) {
      fixture.body = std::string(text.substr(pos));
      return fixture;
    }
    const std::size_t colon = line.find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, ": not a header line (no \"name:\")"));
    }
    fixture.headers.emplace_back(
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon))),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return fixture;  // headers only, no blank line: no body
}

absl::StatusOr<HttpFixture> ReadHttpFixture(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", error.message()));
  }
  if (size > kMaxHttpFixtureBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": ", size, " bytes, over the limit of ", kMaxHttpFixtureBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  absl::StatusOr<HttpFixture> fixture = ParseHttpFixture(text);
  if (!fixture.ok()) {
    return absl::Status(fixture.status().code(),
                        absl::StrCat(path, ": ", fixture.status().message()));
  }
  return fixture;
}

absl::StatusOr<std::string> HttpFixtureUrl(const std::string& path) {
  const std::filesystem::path file(path);
  const std::string name = file.filename().string();
  const std::string host = file.parent_path().filename().string();
  if (name.empty() || host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": want HOST/NAME (a fixture in a folder named by host)"));
  }
  const std::string candidate = absl::StrCat("http://", host, "/", name);
  const absl::StatusOr<url::Url> parsed = url::ParseUrl(candidate);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": \"", candidate, "\" is not a valid URL: ", parsed.status().message()));
  }
  return parsed->href();
}

}  // namespace portcullis::cli
