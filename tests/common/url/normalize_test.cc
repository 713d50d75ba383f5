#include "common/url/normalize.h"

#include <string>

#include "common/crypto/sha256.h"
#include "gtest/gtest.h"

namespace portcullis::url {
namespace {

std::string Normalized(const std::string& input,
                       const TrackingParameters& tracking = TrackingParameters::Default()) {
  const absl::StatusOr<Url> url = ParseUrl(input);
  if (!url.ok()) {
    return "FAIL";
  }
  return Normalize(*url, tracking);
}

TEST(NormalizeTest, EveryTrackingParameterIsStripped) {
  for (const std::string name :
       {"utm_source", "utm_medium", "utm_campaign", "utm_term",    "utm_content", "utm_id",
        "utm_",       "fbclid",     "gclid",        "dclid",       "msclkid",     "mc_cid",
        "mc_eid",     "_hsenc",     "_hsmi",        "igshid",      "yclid",       "twclid",
        "ttclid",     "wbraid",     "gbraid",       "oly_anon_id", "oly_enc_id",  "vero_id",
        "rb_clickid", "s_cid",      "mkt_tok"}) {
    EXPECT_EQ(Normalized("https://e.example/p?a=1&" + name + "=x&b=2"),
              "https://e.example/p?a=1&b=2")
        << name;
    EXPECT_EQ(Normalized("https://e.example/p?" + name), "https://e.example/p") << name;
    EXPECT_EQ(Normalized("https://e.example/p?" + name + "="), "https://e.example/p") << name;
  }
}

TEST(NormalizeTest, OtherParametersKeepOrderAndBytes) {
  EXPECT_EQ(Normalized("https://e.example/?z=1&utm_source=t&a=2&fbclid=f&m=%41&z=0"),
            "https://e.example/?z=1&a=2&m=%41&z=0");
  // Names are compared decoded, case-sensitively; lookalikes stay.
  EXPECT_EQ(Normalized("https://e.example/?utm%5Fsource=t&UTM_SOURCE=u&xfbclid=1&gclid2=2"),
            "https://e.example/?UTM_SOURCE=u&xfbclid=1&gclid2=2");
  // An empty query is dropped like one emptied by stripping.
  EXPECT_EQ(Normalized("https://e.example/p?"), "https://e.example/p");
}

TEST(NormalizeTest, ListIsConfigurable) {
  const TrackingParameters tracking{.names = {"ref"}, .name_prefixes = {"pk_"}};
  EXPECT_EQ(Normalized("https://e.example/?ref=a&pk_campaign=b&utm_source=c", tracking),
            "https://e.example/?utm_source=c");
  EXPECT_EQ(Normalized("https://e.example/?utm_source=c", TrackingParameters{}),
            "https://e.example/?utm_source=c");
}

TEST(NormalizeTest, HostsPortsPathsFragments) {
  EXPECT_EQ(Normalized("HTTP://Example.COM:80/x#f"), "http://example.com/x");
  EXPECT_EQ(Normalized("https://example.com:443"), "https://example.com/");
  EXPECT_EQ(Normalized("https://example.com:8443/#"), "https://example.com:8443/");
  EXPECT_EQ(Normalized("http://bücher.example/Ä"), "http://xn--bcher-kva.example/%C3%84");
  EXPECT_EQ(Normalized("http://0x7f.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Normalized("http://2130706433/"), "http://127.0.0.1/");
  EXPECT_EQ(Normalized("http://0177.0.0.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Normalized("http://[0:0::1]:80/"), "http://[::1]/");
  EXPECT_EQ(Normalized("http://e.example/a/"), "http://e.example/a/");
  EXPECT_EQ(Normalized("http://e.example/a"), "http://e.example/a");
  EXPECT_EQ(Normalized("http://e.example/a/./b/../"), "http://e.example/a/");
  EXPECT_EQ(Normalized("http://u:p@e.example/"), "http://u:p@e.example/");
}

TEST(NormalizeTest, MentionKey) {
  const TrackingParameters tracking = TrackingParameters::Default();
  const auto key = [&](const std::string& source, const std::string& target) {
    return MentionKeyOf(*ParseUrl(source), *ParseUrl(target), tracking);
  };
  const MentionKey a = key("HTTP://Example.COM:80/x#f", "https://t.example/post?utm_medium=x");
  const MentionKey b = key("http://example.com/x", "https://t.example/post");
  EXPECT_EQ(a.source_hash, b.source_hash);
  EXPECT_EQ(a.target_hash, b.target_hash);
  EXPECT_EQ(a.pair_hash, b.pair_hash);
  EXPECT_EQ(a.normalized_source, "http://example.com/x");
  EXPECT_EQ(a.source_hash, crypto::Sha256("http://example.com/x"));
  EXPECT_EQ(a.pair_hash, crypto::Sha256("http://example.com/x:https://t.example/post"));

  EXPECT_NE(key("http://example.com/a/", "https://t.example/").source_hash,
            key("http://example.com/a", "https://t.example/").source_hash);
  EXPECT_NE(key("http://example.com/?a=1&b=2", "https://t.example/").source_hash,
            key("http://example.com/?b=2&a=1", "https://t.example/").source_hash);
  // Swapping source and target is a different pair.
  EXPECT_NE(key("https://a.example/", "https://b.example/").pair_hash,
            key("https://b.example/", "https://a.example/").pair_hash);
}

}  // namespace
}  // namespace portcullis::url
