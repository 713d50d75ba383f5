#pragma once

// Raw-HTTP fixture files, as the shared XRay test data stores its source pages: a status line
// ("HTTP/1.1 200 OK"), header lines, a blank line, then the body byte for byte. Lines may end in
// CRLF or LF. A fixture of a folder named by host (".../xray/source.example.com/NAME") is served at
// "http://source.example.com/NAME".

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::cli {

// One stored HTTP response.
struct HttpFixture {
  int status_code = 0;  // 100..599
  std::string reason;   // "OK", "Moved Permanently"; may be empty
  // In file order; names lowercased, values with surrounding blanks trimmed. A name may repeat.
  std::vector<std::pair<std::string, std::string>> headers;
  // Everything after the blank line, unchanged (line endings kept); empty when the file ends
  // after the headers (with or without the blank line).
  std::string body;

  // The value of the first header named `name` (compared case-insensitively), if any.
  std::optional<std::string> Header(absl::string_view name) const;
};

// Largest fixture file read (the biggest upstream fixture is ~60 KiB).
inline constexpr std::size_t kMaxHttpFixtureBytes = 16 * 1024 * 1024;

// Parses the text of a fixture. InvalidArgument naming the line when the status line is not
// "HTTP/<version> <3-digit code>[ <reason>]" or a header line has no colon.
absl::StatusOr<HttpFixture> ParseHttpFixture(absl::string_view text);

// Reads and parses the file at `path`. NotFound when it cannot be opened, ResourceExhausted when
// it is over kMaxHttpFixtureBytes, otherwise as ParseHttpFixture (the message names the path).
absl::StatusOr<HttpFixture> ReadHttpFixture(const std::string& path);

// The URL a fixture is served at: "http://" + the name of the folder holding it + "/" + its file
// name, e.g. ".../xray/source.example.com/basictest" -> "http://source.example.com/basictest".
// InvalidArgument when the path has no parent folder or the result is not a valid http URL.
absl::StatusOr<std::string> HttpFixtureUrl(const std::string& path);

}  // namespace portcullis::cli
