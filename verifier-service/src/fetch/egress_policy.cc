#include "verifier-service/src/fetch/egress_policy.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status/status_macros.h"

namespace portcullis::verifier::fetch {
namespace {

struct SpecialName {
  absl::string_view name;
  absl::string_view reason;
};

// Names refused with everything under them; see CheckHostName in the header.
constexpr SpecialName kSpecialNames[] = {
    {"localhost", "loopback (RFC 6761)"},
    {"local", "multicast DNS, this link (RFC 6762)"},
    {"internal", "private-use top-level domain (cloud metadata.google.internal)"},
    {"home.arpa", "residential networks (RFC 8375)"},
    {"invalid", "never resolves (RFC 6761)"},
    {"onion", "Tor only (RFC 7686)"},
};

// The payload that marks CheckNumericHostSpelling's refusals (IsAmbiguousNumericHost).
constexpr absl::string_view kAmbiguousNumericHostPayload =
    "type.portcullis.dev/verifier.fetch.AmbiguousNumericHost";

// The payloads that say what a refusal refused (RefusalOf): the URL (empty), or an address (its
// text, RefusedAddress).
constexpr absl::string_view kRefusedUrlPayload = "type.portcullis.dev/verifier.fetch.RefusedUrl";
constexpr absl::string_view kRefusedAddressPayload =
    "type.portcullis.dev/verifier.fetch.RefusedAddress";

// `status` marked as a refusal of the URL itself, when it is a refusal not marked already.
absl::Status AsUrlRefusal(absl::Status status) {
  if (absl::IsPermissionDenied(status) && RefusalOf(status) == EgressRefusal::kNone) {
    status.SetPayload(kRefusedUrlPayload, absl::Cord());
  }
  return status;
}

// `status` marked as the refusal of `address`.
absl::Status AsAddressRefusal(absl::Status status, const net::IpAddress& address) {
  if (absl::IsPermissionDenied(status)) {
    status.SetPayload(kRefusedAddressPayload, absl::Cord(address.ToString()));
  }
  return status;
}

// The host as written in pre-processed URL text whose authority follows "//" (CheckUrlSpelling
// has refused the other http(s) forms), or nullopt when the text has no authority of its own.
// The WHATWG authority: up to the first "/", "?", "#" (or "\\"); userinfo up to its last "@";
// the host up to a ":" outside brackets.
std::optional<absl::string_view> WrittenHost(absl::string_view text) {
  const std::string scheme = url::SchemeOf(text);
  absl::string_view rest = text;
  if (!scheme.empty()) {
    rest.remove_prefix(scheme.size() + 1);
  }
  if (!absl::StartsWith(rest, "//")) {
    return std::nullopt;
  }
  rest.remove_prefix(2);
  absl::string_view host = rest.substr(0, rest.find_first_of("/?#\\"));
  if (const size_t at = host.rfind('@'); at != absl::string_view::npos) {
    host.remove_prefix(at + 1);
  }
  if (!absl::StartsWith(host, "[")) {
    host = host.substr(0, host.find(':'));
  }
  return host;
}

// What makes a written IPv4 host ambiguous, for the refusal's description.
std::string NumericAmbiguity(absl::string_view written) {
  if (written.find_first_not_of("0123456789abcdefxABCDEFX.") != absl::string_view::npos) {
    return "percent-encoded or non-ASCII characters";
  }
  absl::string_view name = written;
  std::vector<std::string> why;
  if (absl::EndsWith(name, ".")) {
    name.remove_suffix(1);
    why.push_back("a trailing dot");
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
  bool hex = false;
  bool leading_zero = false;
  for (const absl::string_view part : parts) {
    if (absl::StartsWithIgnoreCase(part, "0x")) {
      hex = true;
    } else if (part.size() > 1 && part[0] == '0') {
      leading_zero = true;
    }
  }
  if (hex) {
    why.push_back("a hexadecimal part");
  }
  if (leading_zero) {
    why.push_back("a leading zero (octal to some parsers, decimal to others)");
  }
  if (parts.size() == 1) {
    why.push_back("a single number instead of four dotted parts");
  } else if (parts.size() < 4) {
    why.push_back(absl::StrCat(parts.size(), " parts instead of four"));
  }
  return why.empty() ? "not plain dotted decimal" : absl::StrJoin(why, ", ");
}

absl::Status Differential(absl::string_view why) {
  return absl::PermissionDeniedError(
      absl::StrCat("URL refused: ", why,
                   " (parsers disagree on the host of such a URL, so none of them is trusted)"));
}

}  // namespace

absl::Status CheckUrlSpelling(absl::string_view input) {
  const std::string text = url::PreprocessInput(input);
  const std::string scheme = url::SchemeOf(text);
  if (!scheme.empty() && scheme != "http" && scheme != "https") {
    return absl::OkStatus();  // url::ParseUrl refuses other schemes.
  }
  absl::string_view rest = text;
  if (!scheme.empty()) {
    rest.remove_prefix(std::min(rest.size(), rest.find(':') + 1));
  }
  const size_t slashes = std::min(rest.size(), rest.find_first_not_of("/\\"));
  const absl::string_view run = rest.substr(0, slashes);
  if (run.find('\\') != absl::string_view::npos) {
    return Differential("a backslash among the slashes before the host");
  }
  if (!scheme.empty() && run.size() != 2) {
    return Differential(absl::StrCat("the host must follow \"", scheme, "://\" exactly"));
  }
  if (run.size() > 2) {
    return Differential("more than two slashes before the host");
  }
  if (run.size() == 2) {
    const absl::string_view after = rest.substr(2);
    const absl::string_view authority = after.substr(0, after.find_first_of("/?#"));
    if (authority.find('\\') != absl::string_view::npos) {
      return Differential("a backslash in the authority");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHostName(absl::string_view host) {
  absl::string_view name = host;
  if (absl::EndsWith(name, ".")) {
    name.remove_suffix(1);
  }
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("host \"", host, "\" is empty"));
  }
  for (const absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("host ", host, " has an empty label"));
    }
  }
  for (const SpecialName& special : kSpecialNames) {
    if (name == special.name || absl::EndsWith(name, absl::StrCat(".", special.name))) {
      return absl::PermissionDeniedError(absl::StrCat(
          "host ", host, " is a special-use name under \"", special.name, "\": ", special.reason));
    }
  }
  if (name.find('.') == absl::string_view::npos) {
    return absl::PermissionDeniedError(absl::StrCat(
        "host ", host,
        " is a single-label name: resolved through search domains or /etc/hosts, never a public "
        "web host"));
  }
  return absl::OkStatus();
}

absl::Status CheckNumericHostSpelling(absl::string_view input, const url::Url& parsed) {
  if (parsed.host_kind() != url::Url::HostKind::kIpv4) {
    return absl::OkStatus();
  }
  const std::string text = url::PreprocessInput(input);
  const std::optional<absl::string_view> written = WrittenHost(text);
  if (!written.has_value() || *written == parsed.host()) {
    return absl::OkStatus();
  }
  absl::Status refused = absl::PermissionDeniedError(absl::StrCat(
      "host \"", *written, "\" is an ambiguous numeric host (", NumericAmbiguity(*written),
      "): the WHATWG parser reads it as ", parsed.host(),
      ", other parsers (c-ares, inet_aton, older Go) as another address or a name; only plain "
      "four-part dotted decimal without leading zeros is accepted"));
  refused.SetPayload(kAmbiguousNumericHostPayload, absl::Cord(*written));
  return refused;
}

bool IsAmbiguousNumericHost(const absl::Status& status) {
  return status.GetPayload(kAmbiguousNumericHostPayload).has_value();
}

EgressRefusal RefusalOf(const absl::Status& status) {
  if (!absl::IsPermissionDenied(status)) {
    return EgressRefusal::kNone;
  }
  if (status.GetPayload(kRefusedAddressPayload).has_value()) {
    return EgressRefusal::kAddress;
  }
  if (status.GetPayload(kRefusedUrlPayload).has_value()) {
    return EgressRefusal::kUrl;
  }
  return EgressRefusal::kNone;
}

std::optional<net::IpAddress> RefusedAddress(const absl::Status& status) {
  if (!absl::IsPermissionDenied(status)) {
    return std::nullopt;
  }
  const auto text = status.GetPayload(kRefusedAddressPayload);
  if (!text.has_value()) {
    return std::nullopt;
  }
  absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(std::string(*text));
  if (!address.ok()) {
    return std::nullopt;
  }
  return *std::move(address);
}

bool IsIpLiteralHost(const url::Url& url) { return url.host_kind() != url::Url::HostKind::kDomain; }

EgressPolicy::EgressPolicy()
    : allowed_ports_(std::begin(kDefaultAllowedPorts), std::end(kDefaultAllowedPorts)) {}

EgressPolicy::EgressPolicy(std::vector<uint16_t> allowed_ports, net::AddressPolicy addresses)
    : allowed_ports_(std::move(allowed_ports)), addresses_(std::move(addresses)) {}

absl::StatusOr<EgressPolicy> EgressPolicy::Create(EgressPolicyConfig config) {
  std::vector<uint16_t> ports(std::begin(kDefaultAllowedPorts), std::end(kDefaultAllowedPorts));
  for (const uint16_t port : config.extra_allowed_ports) {
    if (port == 0) {
      return absl::InvalidArgumentError("egress policy: allowed port 0 is not a port");
    }
    ports.push_back(port);
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return EgressPolicy(std::move(ports),
                      net::AddressPolicy(std::move(config.extra_deny), std::move(config.allow)));
}

absl::StatusOr<url::Url> EgressPolicy::ParseAndCheckUrl(absl::string_view input,
                                                        const url::Url* base) const {
  RETURN_IF_ERROR(AsUrlRefusal(CheckUrlSpelling(input)));
  ASSIGN_OR_RETURN(url::Url url, url::ParseUrl(input, base));
  RETURN_IF_ERROR(AsUrlRefusal(CheckNumericHostSpelling(input, url)));
  RETURN_IF_ERROR(CheckUrl(url));
  return url;
}

absl::Status EgressPolicy::CheckUrl(const url::Url& url) const {
  if (url.scheme() != "http" && url.scheme() != "https") {
    return AsUrlRefusal(absl::PermissionDeniedError(
        absl::StrCat("scheme ", url.scheme(), " is refused: only http and https are fetched")));
  }
  if (url.has_credentials()) {
    return AsUrlRefusal(absl::PermissionDeniedError(
        "URL carries credentials (user:password@): refused, a fetch never sends them"));
  }
  // Before the address: an IP literal refused for its port is a refused URL, not address.
  const uint16_t port = url.effective_port();
  if (!std::binary_search(allowed_ports_.begin(), allowed_ports_.end(), port)) {
    return AsUrlRefusal(absl::PermissionDeniedError(absl::StrCat(
        "port ", port, " is refused (allowed: ", absl::StrJoin(allowed_ports_, ", "), ")")));
  }
  if (IsIpLiteralHost(url)) {
    const std::optional<net::IpAddress> literal = net::IpAddress::FromUrl(url);
    if (!literal.has_value()) {
      return absl::InternalError(absl::StrCat("IP-literal host ", url.host(), " has no address"));
    }
    return CheckAddress(*literal);
  }
  return AsUrlRefusal(CheckHostName(url.host()));
}

absl::Status EgressPolicy::CheckAddresses(const url::Url& url,
                                          absl::Span<const net::IpAddress> addresses) const {
  RETURN_IF_ERROR(CheckUrl(url));
  if (addresses.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no addresses to check for host ", url.host()));
  }
  for (const net::IpAddress& address : addresses) {
    const absl::Status status = CheckAddress(address);
    if (!status.ok()) {
      return AsAddressRefusal(
          absl::PermissionDeniedError(absl::StrCat(
              "host ", url.host(), " resolves to a refused address: ", status.message())),
          address);
    }
  }
  return absl::OkStatus();
}

absl::Status EgressPolicy::CheckAddress(const net::IpAddress& address) const {
  return AsAddressRefusal(addresses_.Check(address), address);
}

}  // namespace portcullis::verifier::fetch
