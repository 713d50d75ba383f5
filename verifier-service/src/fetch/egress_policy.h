#pragma once

// EgressPolicy: may the verifier fetch this URL, and connect to these addresses? The one place
// that answers "why was this URL refused?" — see ../shared/SSRF-POLICY.md, which this implements.
//
// The fetch path asks it three times:
//   1. before DNS:        ParseAndCheckUrl(text) (or CheckUrl(url) for an already parsed URL)
//                         — scheme, credentials, port, special-use names, IP-literal hosts; from
//                         text only: spellings parsers disagree on, numeric hosts included;
//   2. after DNS:         CheckAddresses(url, answers) — refused when ANY answer is forbidden;
//   3. at connect time:   CheckAddress(address) — the address the socket is really opened to.
// Every refusal is kPermissionDenied with a message naming what was refused and why (the block
// and its CIDR, the embedded IPv4, the port, the name), and says which kind of refusal it is
// (RefusalOf: the URL itself, or an address); malformed URLs stay kInvalidArgument and
// non-http(s) schemes kUnimplemented, as url::ParseUrl returns them.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/net/address_policy.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"
#include "common/url/url.h"

namespace portcullis::verifier::fetch {

// Ports every policy allows: the schemes' defaults.
inline constexpr uint16_t kDefaultAllowedPorts[] = {80, 443};

struct EgressPolicyConfig {
  // Allowed in addition to 80 and 443 (e.g. 8080 for a demo origin). 0 is refused by Create.
  std::vector<uint16_t> extra_allowed_ports;
  // Refused in addition to the built-in blocks, e.g. 168.63.129.16/32 on Azure.
  std::vector<net::Cidr> extra_deny;
  // Allowed despite the built-in blocks: for tests and demos only, empty in production. The
  // service logs a loud warning at startup when it is set (allow_list_active()).
  std::vector<net::Cidr> allow;
};

class EgressPolicy {
 public:
  // The production default: ports 80 and 443, built-in blocks only.
  EgressPolicy();

  // kInvalidArgument for port 0.
  static absl::StatusOr<EgressPolicy> Create(EgressPolicyConfig config);

  // Reads a user-supplied URL or a redirect Location (`base` = the current URL) and applies
  // CheckUrl. Before parsing, refuses spellings that parsers disagree on (CheckUrlSpelling);
  // after parsing, before CheckUrl, an IPv4 host not written as plain dotted decimal
  // (CheckNumericHostSpelling). This is the one entry for every URL a stranger wrote: webmention
  // sources and their redirect targets (through SafeFetcher), the CheckUrl and SafeFetch RPCs.
  // A refusal says what it refused (RefusalOf): the URL, or the address of its IP-literal host —
  // whichever check refused it first, so "http://8.8.8.8:22/" is a refused URL (its port).
  absl::StatusOr<url::Url> ParseAndCheckUrl(absl::string_view input,
                                            const url::Url* base = nullptr) const;

  // Before DNS: http or https only; no credentials; an allowed port; a domain host that is not a
  // special-use or single-label name; an IP-literal host checked as CheckAddress would. A parsed
  // URL no longer shows how its host was written (the WHATWG parser serializes 0x7f.1 as
  // 127.0.0.1): text from outside goes through ParseAndCheckUrl, never ParseUrl + CheckUrl.
  absl::Status CheckUrl(const url::Url& url) const;

  // After DNS: CheckUrl, then every address in `addresses`. Refused if ANY is refused (a mixed
  // public/private answer is a rebinding tool). An empty `addresses` is kInvalidArgument: there
  // is nothing to allow.
  absl::Status CheckAddresses(const url::Url& url,
                              absl::Span<const net::IpAddress> addresses) const;

  // At connect time: the address a socket is about to be opened to.
  absl::Status CheckAddress(const net::IpAddress& address) const;

  // True when the allow list is set: log a loud warning at startup.
  bool allow_list_active() const { return addresses_.has_allow_list(); }
  const net::AddressPolicy& address_policy() const { return addresses_; }
  // Sorted, without duplicates.
  const std::vector<uint16_t>& allowed_ports() const { return allowed_ports_; }

 private:
  EgressPolicy(std::vector<uint16_t> allowed_ports, net::AddressPolicy addresses);

  std::vector<uint16_t> allowed_ports_;
  net::AddressPolicy addresses_;
};

// What an EgressPolicy refusal refused; the callers answer forbidden_url or forbidden_address.
enum class EgressRefusal {
  // Not a refusal of the policy: OK, a malformed URL (kInvalidArgument), another scheme
  // (kUnimplemented), or a status the policy did not make.
  kNone,
  // The URL itself, whatever address it means: scheme, credentials, port, a special-use or
  // single-label name, a spelling parsers disagree on (CheckUrlSpelling, ambiguous numeric hosts).
  kUrl,
  // An address: the URL's IP-literal host, a DNS answer (CheckAddresses) or the address a socket
  // is opened to (CheckAddress) is in a refused block.
  kAddress,
};

// The kind of refusal `status` is, as the policy recorded it when it refused (a payload on the
// status): kAddress for CheckAddress's refusals and those of the checks built on it, kUrl for the
// refusals of ParseAndCheckUrl's and CheckUrl's other checks, kNone for anything else (a
// kPermissionDenied the policy did not make included).
EgressRefusal RefusalOf(const absl::Status& status);

// The refused address of a kAddress refusal (for CheckAddresses, the first refused answer);
// nullopt for any other status.
std::optional<net::IpAddress> RefusedAddress(const absl::Status& status);

// True when the URL's host is an IPv4 or IPv6 literal: connect to it directly, never ask the
// resolver (c-ares 1.18 sends literals to DNS and reads 0177.0.0.1 as 177.0.0.1). The address is
// net::IpAddress::FromUrl(url).
bool IsIpLiteralHost(const url::Url& url);

// Refuses, by name, hosts that must never be resolved (checked by CheckUrl; exposed for tests and
// for the resolver's own guard). `host` is a serialized URL domain (lowercase ASCII). One trailing
// dot is ignored ("localhost." is localhost); an empty label is refused. Refused names:
//   localhost, *.localhost  RFC 6761 §6.3: loopback; c-ares answers them itself
//   local, *.local          RFC 6762: multicast DNS, this link
//   internal, *.internal    ICANN private-use TLD (metadata.google.internal)
//   home.arpa, *.home.arpa  RFC 8375: residential networks
//   invalid, *.invalid      RFC 6761 §6.4: never resolves
//   onion, *.onion          RFC 7686: Tor only
//   any single-label name   resolved through search domains or /etc/hosts ("metadata", a
//                           Kubernetes service name), never a public web host
// test/*.test and example.* are NOT refused: they resolve like any other name (the shared vectors
// use *.test as ordinary public hosts behind a stubbed resolver).
absl::Status CheckHostName(absl::string_view host);

// Refuses URL text whose authority an RFC 3986 parser (libcurl, proxies, the site's own server)
// would read differently from the WHATWG parser we use, so that no second parser can ever be
// pointed somewhere else than the one we checked:
//   - a backslash before the end of the authority ("http://example.com\@127.0.0.1/": WHATWG host
//     example.com, RFC 3986 host 127.0.0.1), or among the slashes that introduce it;
//   - an http(s) URL whose authority is not introduced by exactly "//" ("http:///path" — WHATWG
//     host "path", RFC 3986 empty host; "http:example.com"; "http:/example.com").
// Applied to the text after the WHATWG pre-processing (leading/trailing C0 and space trimmed,
// tab and newline removed). Relative references ("/next", "//host/") are checked the same way.
absl::Status CheckUrlSpelling(absl::string_view input);

// Refuses (kPermissionDenied, IsAmbiguousNumericHost) an IPv4 host that is not written as plain
// four-part dotted decimal without leading zeros: `parsed` is ParseUrl(input, base) and the host
// as written in `input` (after the pre-processing, before the parser's percent-decoding, IDNA
// mapping and number parsing) must be exactly the serialized address. Refused whatever address
// the spelling means, public or not, because parsers read these spellings differently:
//   octal       010.0.0.1    8.0.0.1 to WHATWG and curl, 10.0.0.1 to c-ares and Go's old parser
//   hex         0x7f.1       127.0.0.1 to WHATWG; c-ares 1.18 sends it to DNS as a name
//   short       127.1        fewer than four parts: 127.0.0.1 to WHATWG and inet_aton only
//   one number  2130706433   a 32-bit decimal: 127.0.0.1 to WHATWG, a name to c-ares
//   and any percent-encoded, full-width or trailing-dot spelling of an address.
// An input without an authority of its own (a relative Location "/next", "?q") keeps its base's
// host, checked at the base's own hop, and is allowed here. Domain and IPv6 hosts are allowed.
// Applied by ParseAndCheckUrl before CheckUrl, so the description names the ambiguity rather
// than the address's block.
absl::Status CheckNumericHostSpelling(absl::string_view input, const url::Url& parsed);

// True when `status` is CheckNumericHostSpelling's refusal: a forbidden URL (an ambiguous
// spelling), never a forbidden address, even when the address it means is in a refused block.
bool IsAmbiguousNumericHost(const absl::Status& status);

}  // namespace portcullis::verifier::fetch
