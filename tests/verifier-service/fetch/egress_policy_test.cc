#include "verifier-service/src/fetch/egress_policy.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::Cidr;
using ::portcullis::net::IpAddress;

IpAddress Ip(absl::string_view text) {
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status();
  return address.ok() ? *address : IpAddress::Ipv4(0);
}

url::Url Url(absl::string_view text) {
  absl::StatusOr<url::Url> parsed = url::ParseUrl(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : *url::ParseUrl("http://parse-failed.invalid/");
}

EgressPolicy PolicyWith(EgressPolicyConfig config) {
  absl::StatusOr<EgressPolicy> policy = EgressPolicy::Create(std::move(config));
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *policy : EgressPolicy();
}

bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

TEST(VerifierEgressPolicyTest, MappedLoopbackLiteralIsRefusedNamingTheEmbeddedIpv4) {
  const EgressPolicy policy;
  const absl::StatusOr<url::Url> url = policy.ParseAndCheckUrl("http://[::ffff:127.0.0.1]/");
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(url.status(),
                       "address ::ffff:7f00:1 is in IPv4-mapped ::ffff:0:0/96 (embeds 127.0.0.1"))
      << url.status();
}

TEST(VerifierEgressPolicyTest, ZoneIdLiteralIsRefused) {
  const EgressPolicy policy;
  // The WHATWG parser refuses "%" in an IPv6 host; a zone never reaches the address check.
  const absl::StatusOr<url::Url> url = policy.ParseAndCheckUrl("http://[fe80::1%25eth0]/");
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument) << url.status();
  // From a resolver or a socket, a zone is refused even when the block is allow-listed.
  const EgressPolicy allowing = PolicyWith({.allow = {*Cidr::Parse("fe80::/10")}});
  EXPECT_TRUE(allowing.CheckAddress(Ip("fe80::1")).ok());
  const absl::Status scoped = allowing.CheckAddress(Ip("fe80::1%eth0"));
  EXPECT_EQ(scoped.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(scoped, "zone id")) << scoped;
}

TEST(VerifierEgressPolicyTest, HexShortLoopbackIsRefusedAsALiteral) {
  const EgressPolicy policy;
  const url::Url url = Url("http://0x7f.1/");
  EXPECT_TRUE(IsIpLiteralHost(url));
  const absl::Status status = policy.CheckUrl(url);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "address 127.0.0.1 is in loopback 127.0.0.0/8: this host");
}

TEST(VerifierEgressPolicyTest, PortsDefaultTo80And443AndConfiguredOnesAreAdded) {
  const EgressPolicy defaults;
  EXPECT_EQ(defaults.allowed_ports(), (std::vector<uint16_t>{80, 443}));
  EXPECT_TRUE(defaults.CheckUrl(Url("http://example.com/")).ok());
  EXPECT_TRUE(defaults.CheckUrl(Url("https://example.com/")).ok());
  EXPECT_TRUE(defaults.CheckUrl(Url("http://example.com:443/")).ok());
  EXPECT_TRUE(defaults.CheckUrl(Url("https://example.com:80/")).ok());
  for (const char* text : {"http://example.com:22/", "https://example.com:8080/"}) {
    const absl::Status status = defaults.CheckUrl(Url(text));
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << text;
    EXPECT_TRUE(Contains(status, "(allowed: 80, 443)")) << status;
  }
  const EgressPolicy configured = PolicyWith({.extra_allowed_ports = {8080, 22, 8080}});
  EXPECT_EQ(configured.allowed_ports(), (std::vector<uint16_t>{22, 80, 443, 8080}));
  EXPECT_TRUE(configured.CheckUrl(Url("http://example.com:22/")).ok());
  EXPECT_TRUE(configured.CheckUrl(Url("https://example.com:8080/")).ok());
  EXPECT_FALSE(configured.CheckUrl(Url("http://example.com:6379/")).ok());
  EXPECT_EQ(EgressPolicy::Create({.extra_allowed_ports = {0}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifierEgressPolicyTest, CredentialsAreRefused) {
  const EgressPolicy policy;
  for (const char* text : {"http://user:pass@example.com/", "http://user@example.com/",
                           "https://:secret@example.com/"}) {
    const absl::Status status = policy.CheckUrl(Url(text));
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << text;
    EXPECT_TRUE(Contains(status, "credentials")) << status;
  }
}

TEST(VerifierEgressPolicyTest, SpecialUseNamesAreRefusedByName) {
  for (const char* host :
       {"localhost", "localhost.", "foo.localhost", "a.b.localhost.", "printer.local",
        "metadata.google.internal", "router.home.arpa", "x.invalid", "invalid",
        "facebookcorewwwi.onion", "metadata", "intranet."}) {
    const absl::Status status = CheckHostName(host);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << host << ": " << status;
  }
  EXPECT_TRUE(Contains(CheckHostName("foo.localhost"), "special-use name under \"localhost\""));
  EXPECT_TRUE(Contains(CheckHostName("metadata"), "single-label"));
  for (const char* host : {"a..b", "..", ".", "", "a.b.."}) {
    EXPECT_EQ(CheckHostName(host).code(), absl::StatusCode::kInvalidArgument) << '"' << host << '"';
  }
  // Ordinary names, including the RFC 6761 test and example names the vectors resolve.
  for (const char* host :
       {"example.com", "example.com.", "a.test", "xn--jv8h.example.com", "notlocalhost.com",
        "localhost.example.com", "local.example.org", "internal.test"}) {
    EXPECT_TRUE(CheckHostName(host).ok()) << host << ": " << CheckHostName(host);
  }
}

TEST(VerifierEgressPolicyTest, SpellingsParsersDisagreeOnAreRefused) {
  for (const char* text :
       {"http://example.com\\@127.0.0.1/", "http:///path", "http:/example.com/", "http:example.com",
        "http:\\\\example.com/", "http:/\\example.com/", "//a\\@b/", "/\\evil.example/",
        "\\\\evil.example/", "///evil.example/", " http:///x ", "ht\ttp:///x"}) {
    const absl::Status status = CheckUrlSpelling(text);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << text;
  }
  for (const char* text :
       {"http://example.com/a\\b", "http://example.com/?q=\\", "http://example.com/#\\",
        "HTTPS://EXAMPLE.COM/", "/next", "next", "//cdn.example/x", "?q=1", "#top",
        "javascript:alert(1)", "  http://example.com/  "}) {
    EXPECT_TRUE(CheckUrlSpelling(text).ok()) << text << ": " << CheckUrlSpelling(text);
  }
}

// Issue 22: a numeric host other parsers read differently is refused before DNS, whatever
// address it means (8.0.0.1 and 8.8.8.8 are public), naming the ambiguity rather than a block.
TEST(VerifierEgressPolicyTest, AmbiguousNumericHostsAreRefusedNamingTheAmbiguity) {
  const EgressPolicy policy;
  struct Case {
    const char* input;
    const char* why;
  };
  for (const Case& c : std::vector<Case>{
           {"http://010.0.0.1/", "a leading zero (octal to some parsers"},
           {"http://0177.0.0.1/", "a leading zero"},
           {"http://0x7f.1/", "a hexadecimal part, 2 parts instead of four"},
           {"http://0X08.8.8.8/", "a hexadecimal part"},
           {"http://8.8.8.010/", "a leading zero"},
           {"http://8.8.2056/", "3 parts instead of four"},
           {"http://134744072/", "a single number instead of four dotted parts"},
           {"http://0x08080808:80/path", "a hexadecimal part, a single number"},
           {"http://user@010.0.0.1/", "a leading zero"},
           {"http://8.8.8.8./", "a trailing dot"},
           {"http://8.8.8.%38/", "percent-encoded or non-ASCII characters"},
           {"http://\xef\xbc\x98.8.8.8/", "percent-encoded or non-ASCII characters"},
           {"  http://0x7f.1/  ", "a hexadecimal part"},
       }) {
    const absl::StatusOr<url::Url> url = policy.ParseAndCheckUrl(c.input);
    ASSERT_FALSE(url.ok()) << c.input;
    EXPECT_EQ(url.status().code(), absl::StatusCode::kPermissionDenied) << c.input;
    EXPECT_TRUE(IsAmbiguousNumericHost(url.status())) << c.input << ": " << url.status();
    EXPECT_TRUE(Contains(url.status(), "is an ambiguous numeric host")) << url.status();
    EXPECT_TRUE(Contains(url.status(), c.why)) << c.input << ": " << url.status();
  }
  const absl::StatusOr<url::Url> octal = policy.ParseAndCheckUrl("http://010.0.0.1/");
  EXPECT_EQ(octal.status().message(),
            "host \"010.0.0.1\" is an ambiguous numeric host (a leading zero (octal to some "
            "parsers, decimal to others)): the WHATWG parser reads it as 8.0.0.1, other parsers "
            "(c-ares, inet_aton, older Go) as another address or a name; only plain four-part "
            "dotted decimal without leading zeros is accepted");
  // A refused block is not what is reported: the spelling is refused first.
  const absl::StatusOr<url::Url> loopback = policy.ParseAndCheckUrl("http://0177.0.0.1/");
  EXPECT_FALSE(Contains(loopback.status(), "loopback")) << loopback.status();
  // "08" is no octal number: the WHATWG parser refuses the URL itself (bad_url).
  EXPECT_EQ(policy.ParseAndCheckUrl("http://8.8.8.08/").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Not an ambiguity: other refusals carry no mark.
  EXPECT_FALSE(IsAmbiguousNumericHost(policy.ParseAndCheckUrl("http://127.0.0.1/").status()));
  EXPECT_FALSE(IsAmbiguousNumericHost(policy.ParseAndCheckUrl("http://localhost/").status()));
}

TEST(VerifierEgressPolicyTest, PlainDottedDecimalDomainsAndIpv6AreNotAmbiguous) {
  const EgressPolicy policy;
  for (const char* text :
       {"http://8.8.8.8/", "http://93.184.215.14:443/x", "https://1.1.1.1/", "http://u@8.8.4.4/",
        "http://0.example/", "http://010.example/", "http://0x7f.example/",
        "http://[2606:4700:4700::1111]/", "HTTP://8.8.8.8/"}) {
    const absl::StatusOr<url::Url> url = policy.ParseAndCheckUrl(text);
    EXPECT_FALSE(IsAmbiguousNumericHost(url.status())) << text << ": " << url.status();
    const absl::StatusOr<url::Url> parsed = url::ParseUrl(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_TRUE(CheckNumericHostSpelling(text, *parsed).ok()) << text;
  }
  EXPECT_TRUE(policy.ParseAndCheckUrl("http://8.8.8.8/").ok());
}

// Redirect targets: a Location with its own authority is read as written; a relative one keeps
// the current URL's host, already checked at its hop.
TEST(VerifierEgressPolicyTest, AmbiguousNumericRedirectTargetsAreRefused) {
  const EgressPolicy policy;
  const url::Url current = Url("http://8.8.8.8/dir/page");
  for (const char* location : {"//0x08.8.8.8/", "http://010.0.0.1/next", "https://134744072/"}) {
    const absl::StatusOr<url::Url> next = policy.ParseAndCheckUrl(location, &current);
    ASSERT_FALSE(next.ok()) << location;
    EXPECT_TRUE(IsAmbiguousNumericHost(next.status())) << location << ": " << next.status();
  }
  for (const char* location : {"/next", "next", "?q=1", "#top", "//8.8.4.4/x"}) {
    EXPECT_TRUE(policy.ParseAndCheckUrl(location, &current).ok()) << location;
  }
}

TEST(VerifierEgressPolicyTest, RedirectLocationsAreResolvedAgainstTheCurrentUrl) {
  const EgressPolicy policy;
  const url::Url current = Url("http://a.example/dir/page");
  const absl::StatusOr<url::Url> next = policy.ParseAndCheckUrl("/next", &current);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->href(), "http://a.example/next");
  EXPECT_EQ(policy.ParseAndCheckUrl("//127.0.0.1/", &current).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(policy.ParseAndCheckUrl("ftp://a.example/", &current).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(policy.ParseAndCheckUrl("http://user:pass@b.example/", &current).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(VerifierEgressPolicyTest, AnyForbiddenAnswerRefusesTheHost) {
  const EgressPolicy policy;
  const url::Url url = Url("http://mixed.example/");
  EXPECT_FALSE(IsIpLiteralHost(url));
  const std::vector<IpAddress> good = {Ip("93.184.216.34"), Ip("2606:4700:4700::1111")};
  EXPECT_TRUE(policy.CheckAddresses(url, good).ok());
  const std::vector<IpAddress> mixed = {Ip("93.184.216.34"), Ip("127.0.0.1")};
  const absl::Status status = policy.CheckAddresses(url, mixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "host mixed.example resolves to a refused address: address 127.0.0.1 is in loopback "
            "127.0.0.0/8: this host");
  EXPECT_EQ(policy.CheckAddresses(url, {}).code(), absl::StatusCode::kInvalidArgument);
  // The URL is checked too, whatever the answers.
  EXPECT_FALSE(policy.CheckAddresses(Url("http://example.com:22/"), good).ok());
}

// The policy says what it refused: the URL (whatever check it failed) or an address.
TEST(VerifierEgressPolicyTest, EachRefusalSaysWhetherTheUrlOrTheAddressWasRefused) {
  const EgressPolicy policy;
  for (const char* text :
       {"http://8.8.8.8:22/", "http://10.0.0.1:22/", "http://user:pw@8.8.8.8/", "http://localhost/",
        "http://metadata/", "http://0x7f.1/", "http://example.com\\@8.8.8.8/"}) {
    const absl::Status status = policy.ParseAndCheckUrl(text).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << text;
    EXPECT_EQ(RefusalOf(status), EgressRefusal::kUrl) << text << ": " << status;
    EXPECT_EQ(RefusedAddress(status), std::nullopt) << text;
  }
  // An IP literal refused for its port names the port, not the address.
  EXPECT_EQ(policy.ParseAndCheckUrl("http://8.8.8.8:22/").status().message(),
            "port 22 is refused (allowed: 80, 443)");
  for (const auto& [text, address] :
       {std::pair<const char*, const char*>{"http://10.0.0.1/", "10.0.0.1"},
        {"http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"},
        {"https://169.254.169.254/", "169.254.169.254"}}) {
    const absl::Status status = policy.ParseAndCheckUrl(text).status();
    EXPECT_EQ(RefusalOf(status), EgressRefusal::kAddress) << text << ": " << status;
    EXPECT_EQ(RefusedAddress(status), Ip(address)) << text;
  }
  const absl::Status answer =
      policy.CheckAddresses(Url("http://mixed.example/"), {Ip("93.184.216.34"), Ip("10.0.0.9")});
  EXPECT_EQ(RefusalOf(answer), EgressRefusal::kAddress);
  EXPECT_EQ(RefusedAddress(answer), Ip("10.0.0.9"));
  EXPECT_EQ(RefusalOf(policy.CheckAddress(Ip("127.0.0.1"))), EgressRefusal::kAddress);
  // Not a refusal of the policy.
  EXPECT_EQ(RefusalOf(policy.ParseAndCheckUrl("http://[::1/").status()), EgressRefusal::kNone);
  EXPECT_EQ(RefusalOf(policy.ParseAndCheckUrl("ftp://example.com/").status()),
            EgressRefusal::kNone);
  EXPECT_EQ(RefusalOf(policy.ParseAndCheckUrl("http://8.8.8.8/").status()), EgressRefusal::kNone);
  EXPECT_EQ(RefusalOf(absl::PermissionDeniedError("socket refused")), EgressRefusal::kNone);
}

TEST(VerifierEgressPolicyTest, AllowAndDenyListsSitOnTop) {
  const EgressPolicy policy = PolicyWith({
      .extra_deny = {*Cidr::Parse("168.63.129.16/32")},
      .allow = {*Cidr::Parse("127.0.0.0/8"), *Cidr::Parse("::1/128")},
  });
  EXPECT_TRUE(policy.allow_list_active());
  EXPECT_FALSE(EgressPolicy().allow_list_active());
  EXPECT_TRUE(policy.CheckUrl(Url("http://127.0.0.1/")).ok());
  EXPECT_TRUE(policy.CheckUrl(Url("http://[::1]/")).ok());
  EXPECT_FALSE(policy.CheckUrl(Url("http://[::ffff:127.0.0.1]/")).ok());
  EXPECT_FALSE(policy.CheckUrl(Url("http://10.0.0.1/")).ok());
  EXPECT_FALSE(policy.CheckUrl(Url("http://localhost/")).ok()) << "names are still refused";
  const absl::Status denied = policy.CheckAddress(Ip("168.63.129.16"));
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(denied, "configured deny list")) << denied;
}

}  // namespace
}  // namespace portcullis::verifier::fetch
