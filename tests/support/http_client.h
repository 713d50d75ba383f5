#pragma once

#include <map>
#include <string>

#include "absl/time/time.h"

namespace portcullis::testing {

// The answer to one HTTP request; status 0 when no answer came (connection refused, timeout).
struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // Names lowercased.
  std::string body;
  std::string error;  // Why there is no answer.

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? "" : it->second;
  }
};

// One HTTP/1.1 request to 127.0.0.1:`port` on its own connection.
// `headers` are added to the request as given.
HttpResult SendHttp(int port, const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& content_type = "",
                    absl::Duration timeout = absl::Seconds(10),
                    const std::map<std::string, std::string>& headers = {});

// `application/x-www-form-urlencoded` encoding of one value.
std::string FormEncode(const std::string& value);

}  // namespace portcullis::testing
