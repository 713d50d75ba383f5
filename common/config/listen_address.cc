#include "common/config/listen_address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace portcullis::config {

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text, bool allow_port_zero) {
  const auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not host:port (", why, ")"));
  };
  HostPort result;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalid("IPv6 hosts are written [addr]:port");
    }
    result.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) {
      return invalid("missing port");
    }
    result.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (result.host.find(':') != std::string::npos) {
      return invalid("IPv6 hosts are written [addr]:port");
    }
  }
  if (result.host.empty()) {
    return invalid("empty host");
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port > 65535 ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos) {
    return invalid("port must be a number from 0 to 65535");
  }
  if (port == 0 && !allow_port_zero) {
    return invalid("port 0 is not allowed here");
  }
  result.port = static_cast<uint16_t>(port);
  return result;
}

bool AbslParseFlag(absl::string_view text, HostPort* host_port, std::string* error) {
  absl::StatusOr<HostPort> parsed = ParseHostPort(text, /*allow_port_zero=*/true);
  if (!parsed.ok()) {
    *error = std::string(parsed.status().message());
    return false;
  }
  *host_port = *std::move(parsed);
  return true;
}

std::string AbslUnparseFlag(const HostPort& host_port) { return host_port.ToString(); }

absl::StatusOr<absl::Duration> ParsePositiveDuration(absl::string_view name,
                                                     absl::string_view text) {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration) || duration <= absl::ZeroDuration() ||
      duration == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": '", text, "' is not a positive duration such as 5s or 250ms"));
  }
  return duration;
}

}  // namespace portcullis::config
