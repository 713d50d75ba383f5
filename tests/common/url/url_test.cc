#include "common/url/url.h"

#include <array>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::url {
namespace {

// Parses `input` (against `base` when given) and returns href, or "FAIL:<code>" on error.
std::string Href(const std::string& input, const std::string& base = "") {
  absl::StatusOr<Url> base_url;
  if (!base.empty()) {
    base_url = ParseUrl(base);
    if (!base_url.ok()) {
      return "BAD BASE";
    }
  }
  const absl::StatusOr<Url> url = ParseUrl(input, base.empty() ? nullptr : &*base_url);
  if (!url.ok()) {
    return std::string("FAIL:") + absl::StatusCodeToString(url.status().code());
  }
  return url->href();
}

struct Case {
  std::string input;
  std::string expected_href;
};

class IpHostTest : public testing::TestWithParam<std::string> {};

// Every IPv4 spelling that SSRF-POLICY.md names must read as loopback, as an integer.
TEST_P(IpHostTest, LoopbackSpellingsParseTo127001) {
  const absl::StatusOr<Url> url = ParseUrl(GetParam());
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host(), "127.0.0.1");
  EXPECT_EQ(url->host_kind(), Url::HostKind::kIpv4);
  EXPECT_EQ(url->ipv4(), 0x7f000001u);
  EXPECT_FALSE(url->ipv6().has_value());
}

INSTANTIATE_TEST_SUITE_P(SsrfPolicySpellings, IpHostTest,
                         testing::Values("http://2130706433/", "http://0177.0.0.1/",
                                         "http://0x7f.1/", "http://127.1/", "http://127.0.0.1/",
                                         "http://0x7F000001/", "http://017700000001/",
                                         "http://127.0.0.1./", "http://127.0.1/",
                                         "http://%31%32%37.1/", "http://１２７.0.0.1/",
                                         "https://0x7f.0x0.0x0.0x1:8443/"));

TEST(UrlTest, NumericLastLabelMustBeIpv4) {
  for (const std::string input :
       {"http://1.2.3.09/", "http://foo.09/", "http://1.2.3.4.5/", "http://256.256.256.256/",
        "http://4294967296/", "http://1.2.3.256/", "http://1.2.65536/", "http://0x100000000/",
        "http://foo.0x/", "http://foo.1/", "http://a.b.c.0x7f/", "http://999999999999999999999/",
        "http://1.2.3.4.5./"}) {
    EXPECT_EQ(Href(input), "FAIL:INVALID_ARGUMENT") << input;
  }
  // Not numeric: a domain.
  EXPECT_EQ(Href("http://foo.0xg/"), "http://foo.0xg/");
  EXPECT_EQ(Href("http://1.2.3.4x/"), "http://1.2.3.4x/");
  EXPECT_EQ(Href("http://255.255.255.255/"), "http://255.255.255.255/");
  EXPECT_EQ(Href("http://0/"), "http://0.0.0.0/");
  EXPECT_EQ(Href("http://1.2.3.4./"), "http://1.2.3.4/");
}

TEST(UrlTest, Ipv6CompressionAndEmbeddedIpv4) {
  const std::vector<Case> cases = {
      {"http://[::1]/", "http://[::1]/"},
      {"http://[0:0:0:0:0:0:0:1]/", "http://[::1]/"},
      {"http://[::]/", "http://[::]/"},
      {"http://[2001:DB8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/"},
      {"http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/"},
      {"http://[1:0:2:3:4:5:6:7]/", "http://[1:0:2:3:4:5:6:7]/"},
      {"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"},
      {"http://[::127.0.0.1]/", "http://[::7f00:1]/"},
      {"http://[64:ff9b::10.0.0.1]:8080/x", "http://[64:ff9b::a00:1]:8080/x"},
      {"http://[fd00:ec2::254]/", "http://[fd00:ec2::254]/"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Href(c.input), c.expected_href) << c.input;
  }
  const absl::StatusOr<Url> url = ParseUrl("http://[::ffff:169.254.169.254]/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host_kind(), Url::HostKind::kIpv6);
  const std::array<uint16_t, 8> expected = {0, 0, 0, 0, 0, 0xffff, 0xa9fe, 0xa9fe};
  EXPECT_EQ(url->ipv6(), expected);
  EXPECT_FALSE(url->ipv4().has_value());

  for (const std::string bad :
       {"http://[::1/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[1::2::3]/", "http://[::1.2.3]/",
        "http://[::1.2.3.4.5]/", "http://[::01.2.3.4]/", "http://[::256.0.0.1]/", "http://[:1]/",
        "http://[g::1]/", "http://[fe80::1%25eth0]/", "http://[1:2:3:4:5:6:7]/"}) {
    EXPECT_EQ(Href(bad), "FAIL:INVALID_ARGUMENT") << bad;
  }
}

TEST(UrlTest, IdnHostsBecomePunycode) {
  EXPECT_EQ(Href("http://bücher.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Href("http://B%C3%BCcher.EXAMPLE/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Href("https://faß.de/"), "https://xn--fa-hia.de/");  // nontransitional
  EXPECT_EQ(Href("http://ＥＸＡＭＰＬＥ.com/"), "http://example.com/");
  EXPECT_EQ(Href("http://xn--bcher-kva.example/"), "http://xn--bcher-kva.example/");
  // Hyphen positions and label lengths are not checked (CheckHyphens=false, VerifyDnsLength=false).
  EXPECT_EQ(Href("http://-x-.example/"), "http://-x-.example/");
  EXPECT_EQ(Href("http://ab--cd.example/"), "http://ab--cd.example/");
  // An ASCII domain is only lowercased, even with an invalid "xn--" label (whatwg/url#914); in a
  // non-ASCII domain the same label fails.
  EXPECT_EQ(Href("http://XN--ZZ-.example/"), "http://xn--zz-.example/");
  EXPECT_EQ(Href("http://xn--zz-.bücher/"), "FAIL:INVALID_ARGUMENT");
  // Disallowed code points, forbidden host code points.
  EXPECT_EQ(Href("http://a\xEF\xBF\xBD"
                 "b/"),
            "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://a<b/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://a%25b/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://a%00b/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http:///"), "FAIL:INVALID_ARGUMENT");
}

TEST(UrlTest, CredentialsAreExposed) {
  const absl::StatusOr<Url> url = ParseUrl("https://us%65r:p@ss:w@example.com/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_TRUE(url->has_credentials());
  EXPECT_EQ(url->username(), "us%65r");
  EXPECT_EQ(url->password(), "p%40ss%3Aw");
  EXPECT_EQ(url->host(), "example.com");
  EXPECT_EQ(url->href(), "https://us%65r:p%40ss%3Aw@example.com/");
  EXPECT_EQ(url->origin(), "https://example.com");

  const absl::StatusOr<Url> empty_user = ParseUrl("http://:@example.com/");
  ASSERT_TRUE(empty_user.ok());
  EXPECT_FALSE(empty_user->has_credentials());
  EXPECT_EQ(empty_user->href(), "http://example.com/");
  EXPECT_EQ(Href("http://user@/"), "FAIL:INVALID_ARGUMENT");
}

TEST(UrlTest, RelativeResolution) {
  const std::string base = "http://a.example/b/c/d;p?q";
  const std::vector<Case> cases = {
      {"g", "http://a.example/b/c/g"},
      {"./g", "http://a.example/b/c/g"},
      {"g/", "http://a.example/b/c/g/"},
      {"/g", "http://a.example/g"},
      {"//g", "http://g/"},
      {"\\\\g\\x", "http://g/x"},
      {"?y", "http://a.example/b/c/d;p?y"},
      {"#s", "http://a.example/b/c/d;p?q#s"},
      {"", "http://a.example/b/c/d;p?q"},
      {".", "http://a.example/b/c/"},
      {"..", "http://a.example/b/"},
      {"../../../../g", "http://a.example/g"},
      {"%2e%2E/g", "http://a.example/b/g"},
      {".%2e/.%2E/g", "http://a.example/g"},
      {"g;x=1/../y", "http://a.example/b/c/y"},
      {"http:g", "http://a.example/b/c/g"},
      {"https:g", "https://g/"},
      {"HTTPS://X.EXAMPLE:443/", "https://x.example/"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Href(c.input, base), c.expected_href) << c.input;
  }
  EXPECT_EQ(Href("g"), "FAIL:INVALID_ARGUMENT");  // no base
}

TEST(UrlTest, PercentEncodeSets) {
  // Path: space " # < > ? ^ ` { } and non-ASCII; query (special): space " # < > ' ; fragment: space
  // " < > `; userinfo additionally / : ; = @ [ \ ] ^ |.
  EXPECT_EQ(Href("http://h/ \"<>^`{}|é"), "http://h/%20%22%3C%3E%5E%60%7B%7D|%C3%A9");
  EXPECT_EQ(Href("http://h/?a= \"<>'`{}é"), "http://h/?a=%20%22%3C%3E%27`{}%C3%A9");
  EXPECT_EQ(Href("http://h/#a \"<>'`{}é#"), "http://h/#a%20%22%3C%3E'%60{}%C3%A9#");
  EXPECT_EQ(Href("http://a;=[]^|é:b@h/"), "http://a%3B%3D%5B%5D%5E%7C%C3%A9:b@h/");
  EXPECT_EQ(Href("http://h/%zz%41"), "http://h/%zz%41");  // existing escapes untouched
  EXPECT_EQ(Href("http://h/\x01\x7F"), "http://h/%01%7F");
  EXPECT_EQ(Href("http://h/a\xFF"), "http://h/a%EF%BF%BD");  // ill-formed UTF-8 read as U+FFFD
}

TEST(UrlTest, TrimmingTabsBackslashesDotSegmentsPorts) {
  const std::vector<Case> cases = {
      {" \t\x01http://h/a\n\r/b\t \x1F", "http://h/a/b"},
      {"HTTP:\\\\H\\a\\b", "http://h/a/b"},
      {"http:/h", "http://h/"},
      {"http:h", "http://h/"},
      {"http://h/a/./b/../c/%2e/%2E%2e/d", "http://h/a/d"},
      {"http://h/a/..", "http://h/"},
      {"http://h/a/.", "http://h/a/"},
      {"http://h/a/", "http://h/a/"},
      {"http://h:80/", "http://h/"},
      {"https://h:443/", "https://h/"},
      {"https://h:80/", "https://h:80/"},
      {"http://h:0080/", "http://h/"},
      {"http://h:65535/", "http://h:65535/"},
      {"http://h:/", "http://h/"},
      {"http://h?x", "http://h/?x"},
      {"http://h#x", "http://h/#x"},
      {"http://h/?", "http://h/?"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Href(c.input), c.expected_href) << c.input;
  }
  EXPECT_EQ(Href("http://h:65536/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://h:99999999999999999999/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://h:8a/"), "FAIL:INVALID_ARGUMENT");
  EXPECT_EQ(Href("http://h:-1/"), "FAIL:INVALID_ARGUMENT");

  const absl::StatusOr<Url> url = ParseUrl("https://h:8443/p?q#f");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port(), 8443);
  EXPECT_EQ(url->effective_port(), 8443);
  EXPECT_EQ(url->path(), "/p");
  EXPECT_EQ(url->query(), "q");
  EXPECT_EQ(url->fragment(), "f");
  EXPECT_EQ(ParseUrl("http://h/")->effective_port(), 80);
  EXPECT_FALSE(ParseUrl("http://h/")->query().has_value());
}

TEST(UrlTest, OtherSchemesAreUnimplementedNotInvalid) {
  for (const std::string input : {"ftp://h/", "file:///etc/passwd", "ws://h/", "wss://h/",
                                  "javascript:alert(1)", "gopher://h/", "data:text/html,x"}) {
    const absl::StatusOr<Url> url = ParseUrl(input);
    EXPECT_EQ(url.status().code(), absl::StatusCode::kUnimplemented) << input;
  }
  const absl::StatusOr<Url> base = ParseUrl("http://h/");
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(ParseUrl("file:x", &*base).status().code(), absl::StatusCode::kUnimplemented);
  // A colon after something that is not a scheme is a relative path, not an unknown scheme.
  EXPECT_EQ(Href("1http:x", "http://h/"), "http://h/1http:x");
}

TEST(UrlTest, SchemeOf) {
  EXPECT_EQ(SchemeOf("  HTTPS://x"), "https");
  EXPECT_EQ(SchemeOf("h\tt\ntp:"), "http");
  EXPECT_EQ(SchemeOf("sc:x"), "sc");
  EXPECT_EQ(SchemeOf("/x:y"), "");
  EXPECT_EQ(SchemeOf("a b:"), "");
  EXPECT_EQ(SchemeOf("noscheme"), "");
}

TEST(UrlTest, SerializeAddresses) {
  EXPECT_EQ(SerializeIpv4(0), "0.0.0.0");
  EXPECT_EQ(SerializeIpv4(0xffffffff), "255.255.255.255");
  EXPECT_EQ(SerializeIpv6({0, 0, 0, 0, 0, 0, 0, 0}), "::");
  EXPECT_EQ(SerializeIpv6({1, 0, 0, 0, 0, 0, 0, 0}), "1::");
  EXPECT_EQ(SerializeIpv6({1, 0, 1, 0, 0, 1, 0, 0}), "1:0:1::1:0:0");
  EXPECT_EQ(SerializeIpv6({0xABCD, 0, 0, 1, 0, 0, 0, 0}), "abcd:0:0:1::");
}

}  // namespace
}  // namespace portcullis::url
