#pragma once

// A WHATWG URL Standard (https://url.spec.whatwg.org/) basic URL parser for the schemes Portcullis
// fetches: `http` and `https`. A URL is read exactly as a browser reads it, so that link matching,
// normalization and the SSRF guard all see the same host, port and path a browser would.
//
// Other schemes are recognised only far enough to refuse them: ParseUrl returns
// `kUnimplemented` ("scheme not supported") for them, distinct from `kInvalidArgument` (the input
// is not a valid URL).

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::url {

// A parsed http(s) URL. Every component is stored in its serialized (percent-encoded) form, as the
// URL Standard's serializer writes it. Built only by ParseUrl, so its fields always agree.
class Url {
 public:
  // What the host is. A Url always has a host: http(s) URLs with an empty host are invalid.
  enum class HostKind { kDomain, kIpv4, kIpv6 };

  // "http" or "https" (lowercase, without the colon).
  const std::string& scheme() const { return scheme_; }
  // Userinfo, percent-encoded; empty when absent. Callers that refuse credentials check these.
  const std::string& username() const { return username_; }
  const std::string& password() const { return password_; }
  bool has_credentials() const { return !username_.empty() || !password_.empty(); }

  // The serialized host: an ASCII lowercase domain (IDNA-processed), a dotted-decimal IPv4
  // address, or a bracketed canonical IPv6 address ("[::1]").
  const std::string& host() const { return host_; }
  HostKind host_kind() const { return host_kind_; }
  // The address when the host is an IP literal, as integers (host order; ipv4 0x7f000001 is
  // 127.0.0.1). Use these, never re-parse host().
  std::optional<uint32_t> ipv4() const { return ipv4_; }
  const std::optional<std::array<uint16_t, 8>>& ipv6() const { return ipv6_; }

  // The port when given and not the scheme's default (80 for http, 443 for https).
  std::optional<uint16_t> port() const { return port_; }
  // The port a connection goes to: port() or the scheme's default.
  uint16_t effective_port() const;

  // The serialized path; always starts with "/".
  const std::string& path() const { return path_; }
  // Without the leading "?" / "#"; nullopt when absent ("http://a/?" has an empty query).
  const std::optional<std::string>& query() const { return query_; }
  const std::optional<std::string>& fragment() const { return fragment_; }

  // The URL serializer's output.
  std::string href() const;
  // The URL's origin, serialized: scheme "://" host [":" port].
  std::string origin() const;

  friend bool operator==(const Url& a, const Url& b) { return a.href() == b.href(); }

 private:
  friend class UrlBuilder;

  std::string scheme_;
  std::string username_;
  std::string password_;
  std::string host_;
  HostKind host_kind_ = HostKind::kDomain;
  std::optional<uint32_t> ipv4_;
  std::optional<std::array<uint16_t, 8>> ipv6_;
  std::optional<uint16_t> port_;
  std::string path_ = "/";
  std::optional<std::string> query_;
  std::optional<std::string> fragment_;
};

// Parses `input` as an absolute URL, or as a reference relative to `base` when `base` is not null.
// Returns:
//   - the Url for valid http/https URLs;
//   - kUnimplemented ("scheme not supported: <scheme>") when the result would have another scheme;
//   - kInvalidArgument, naming the reason, when the input is not a valid URL (including a relative
//     reference without a base).
// Input that is not valid UTF-8 is read with each ill-formed sequence replaced by U+FFFD, as a
// browser decodes it.
absl::StatusOr<Url> ParseUrl(absl::string_view input, const Url* base = nullptr);

// The scheme `input` starts with (ASCII-lowercased, after the parser's trimming and tab/newline
// removal), or "" when it has none and would be read as a relative reference.
std::string SchemeOf(absl::string_view input);

// The URL parser's pre-processing of raw input: leading and trailing C0 controls and spaces
// trimmed, every ASCII tab and newline removed, ill-formed UTF-8 replaced by U+FFFD. What ParseUrl
// reads; callers that inspect the spelling of a URL (the SSRF guard) read the same text.
std::string PreprocessInput(absl::string_view input);

// Dotted-decimal form of an IPv4 address (0x7f000001 -> "127.0.0.1").
std::string SerializeIpv4(uint32_t address);
// Canonical RFC 5952 form of an IPv6 address, without brackets ("::1", "2001:db8::ff00:42:8329").
std::string SerializeIpv6(const std::array<uint16_t, 8>& address);

}  // namespace portcullis::url
