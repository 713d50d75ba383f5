#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace portcullis::config {

// A "host:port" to listen on or dial: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0".
struct HostPort {
  std::string host;  // Without brackets.
  uint16_t port = 0;

  // "host:port", with brackets around IPv6 hosts.
  std::string ToString() const;
};

// A HostPort is a flag type: "host:port" with port 0 allowed (ParseHostPort below).
bool AbslParseFlag(absl::string_view text, HostPort* host_port, std::string* error);
std::string AbslUnparseFlag(const HostPort& host_port);

// Parses "host:port". The host must be non-empty; port 0 is allowed only when `allow_port_zero`.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text, bool allow_port_zero);

// Parses a duration such as "5s", "250ms", "1m30s" that must be positive.
absl::StatusOr<absl::Duration> ParsePositiveDuration(absl::string_view name,
                                                     absl::string_view text);

}  // namespace portcullis::config
