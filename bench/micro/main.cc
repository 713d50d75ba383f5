// Micro-benchmarks of the hot pure functions (issue 8, bench/micro). Every input is generated here;
// nothing is read from disk. Not a test: not registered with ctest, but built by the default build
// so that it cannot rot. Run from the release preset (see bench/README.md):
//
//   build/release/bench/micro/micro_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// The mf2 figure is a ratio: BM_Mf2Parse against BM_GumboRawParse of the same page, in one run.
#include <gumbo.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "boost/json/object.hpp"
#include "boost/json/value.hpp"
#include "common/crypto/ed25519.h"
#include "common/crypto/sha256.h"
#include "common/json/jcs.h"
#include "common/net/address_policy.h"
#include "common/net/ip_address.h"
#include "common/url/normalize.h"
#include "common/url/url.h"
#include "ingest-gateway/src/form_decoding.h"
#include "tests/support/c2pa_test_signer.h"
#include "verifier-service/src/c2pa/manifest_validator.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/html_sanitizer.h"
#include "verifier-service/src/html/link_matcher.h"
#include "verifier-service/src/html/mf2_parser.h"
#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/verification/html_source_analyzer.h"

namespace portcullis::bench {
namespace {

// Stops the run when a fixed input unexpectedly fails: a benchmark of an error path by accident
// would report a meaningless figure.
void Require(benchmark::State& state, bool ok, absl::string_view what) {
  if (!ok) {
    state.SkipWithError(std::string(what).c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// URL parse + normalize

// Realistic webmention sources and targets: plain, with tracking parameters, fragments, ports,
// percent-encoding, IDN hosts (UTS 46 processing to punycode) and the IPv4 spellings the WHATWG
// parser reads (dotted, shortened, hex, octal, a single integer).
const std::vector<std::string>& UrlMix() {
  static const auto* const kUrls = new std::vector<std::string>{
      "https://alice.example/posts/2026/11/30/hello-world",
      "https://bob.example/notes/42?utm_source=feed&utm_medium=rss&ref=home#comments",
      "http://www.Example.COM:80/a/b/../c/./d.html",
      "https://blog.example.org/2026/11/a%20post%20with%20spaces/?p=12&fbclid=abc123",
      "https://bücher.example/katalog/übersicht?sort=preis",
      "https://例え.テスト/パス/ページ",
      "https://xn--nxasmq6b.example/path",
      "http://127.0.0.1:8080/callback",
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://2130706433/",
      "http://[2001:db8::1]/feed.xml",
      "https://user:pass@secure.example:8443/private?q=1",
      "https://micro.blog/username/1234567890",
      "https://indieweb.social/@someone/112233445566778899",
      "https://example.com/?a=1&b=2&gclid=xyz&c=3#top",
  };
  return *kUrls;
}

void BM_UrlParseNormalize(benchmark::State& state) {
  const std::vector<std::string>& urls = UrlMix();
  const url::TrackingParameters tracking = url::TrackingParameters::Default();
  for (const std::string& text : urls) {
    Require(state, url::ParseUrl(text).ok(), absl::StrCat("does not parse: ", text));
  }
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<url::Url> parsed = url::ParseUrl(urls[i]);
    std::string normalized = url::Normalize(*parsed, tracking);
    benchmark::DoNotOptimize(normalized);
    i = (i + 1 == urls.size()) ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UrlParseNormalize);

// ---------------------------------------------------------------------------------------------
// Address classification

// Resolver-style answers: public and refused IPv4, global and refused IPv6, IPv4 embeddings.
std::vector<net::IpAddress> AddressMix() {
  std::vector<net::IpAddress> addresses;
  for (const char* text :
       {"93.184.216.34", "10.1.2.3", "127.0.0.1", "169.254.169.254", "192.168.1.20", "8.8.8.8",
        "100.64.0.1", "203.0.113.7", "2606:4700::6810:85e5", "::1", "fe80::1", "fd00::42",
        "::ffff:7f00:1", "64:ff9b::a00:1", "2001:db8::1", "2a00:1450:4001:82b::200e"}) {
    absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(text);
    if (address.ok()) {
      addresses.push_back(*address);
    }
  }
  return addresses;
}

void BM_AddressClassify(benchmark::State& state) {
  const std::vector<net::IpAddress> addresses = AddressMix();
  Require(state, addresses.size() == 16, "an address of the mix does not parse");
  const net::AddressPolicy policy;
  size_t i = 0;
  for (auto _ : state) {
    net::AddressVerdict verdict = policy.Classify(addresses[i]);
    benchmark::DoNotOptimize(verdict);
    i = (i + 1) & 15;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddressClassify);

// Parse (resolver text) + classify: what the fetcher does per DNS answer.
void BM_AddressParseClassify(benchmark::State& state) {
  const std::vector<std::string> texts = {"93.184.216.34", "10.1.2.3", "2606:4700::6810:85e5",
                                          "::ffff:7f00:1"};
  const net::AddressPolicy policy;
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(texts[i]);
    net::AddressVerdict verdict = policy.Classify(*address);
    benchmark::DoNotOptimize(verdict);
    i = (i + 1) & 3;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddressParseClassify);

// ---------------------------------------------------------------------------------------------
// Form decoding of a webmention body

void BM_DecodeWebmentionForm(benchmark::State& state) {
  const std::string body =
      "source=https%3A%2F%2Falice.example%2Fposts%2F2026%2F11%2F30%2Fhello-world%3Futm_source%3D"
      "feed&target=https%3A%2F%2Fbob.example%2Fnotes%2F42%23comments";
  Require(state, gateway::DecodeForm(body).ok(), "webmention body does not decode");
  for (auto _ : state) {
    absl::StatusOr<std::vector<gateway::FormField>> fields = gateway::DecodeForm(body);
    benchmark::DoNotOptimize(fields);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_DecodeWebmentionForm);

// ---------------------------------------------------------------------------------------------
// JCS canonicalization + SHA-256 of a ~1 KiB ingest item

// An ingest item of about 1 KiB with unsorted members, whitespace, non-ASCII text, escapes and
// numbers in non-canonical spellings.
std::string IngestItem() {
  return R"({
  "type": "entry",
  "id": "https://alice.example/posts/2026/11/30/hello-world",
  "url": "https://alice.example/posts/2026/11/30/hello-world",
  "published": "2026-11-30T01:23:45Z",
  "updated": "2026-11-30T02:00:00+01:00",
  "author": {"name": "Alice Exämple", "url": "https://alice.example/", "photo": "https://alice.example/me.jpg"},
  "name": "Hello, world — a first post",
  "summary": "A short summary with \"quotes\", a tab\t and a newline\n in it.",
  "content": {"text": "Déjà vu: this is the body of the post, long enough to look like a real one. It mentions https://bob.example/notes/42 and says thanks. ✓ ünïcödé 日本語 テキスト", "html": "<p>Déjà vu: this is the <b>body</b> of the post.</p>"},
  "category": ["indieweb", "webmention", "c++", "benchmarks", "portcullis"],
  "in-reply-to": ["https://bob.example/notes/42", "https://carol.example/2026/11/29/reply"],
  "rating": 4.50,
  "score": 45e-1,
  "views": 1234567,
  "ratio": 0.000001,
  "big": 1e21,
  "flags": [true, false, null],
  "location": {"latitude": 52.5200, "longitude": 13.4050, "altitude": 34.0},
  "syndication": ["https://social.example/@alice/112233445566778899"]
})";
}

void BM_JcsCanonicalizeSha256(benchmark::State& state) {
  const std::string item = IngestItem();
  Require(state, json::CanonicalizeText(item).ok(), "ingest item does not canonicalize");
  for (auto _ : state) {
    absl::StatusOr<std::string> canonical = json::CanonicalizeText(item);
    crypto::Sha256Digest hash = json::ContentHash(*canonical);
    benchmark::DoNotOptimize(hash);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * item.size()));
  state.counters["item_bytes"] = static_cast<double>(item.size());
}
BENCHMARK(BM_JcsCanonicalizeSha256);

// ---------------------------------------------------------------------------------------------
// Standard Webhooks verification, v1 (HMAC-SHA256) and v1a (Ed25519)

struct SignedFixture {
  std::string msg_id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
  std::string timestamp = "1796001825";  // 2026-11-30T01:23:45Z
  std::string body = IngestItem();
  std::string header;
  std::vector<verifier::ingest::VerificationKey> keys;
  absl::Time now = absl::FromUnixSeconds(1796001825 + 30);
};

SignedFixture SignedV1() {
  SignedFixture fixture;
  const std::string secret(32, '\x5a');
  fixture.header = verifier::ingest::SignV1(
      secret, verifier::ingest::SignedContent(fixture.msg_id, 1796001825, fixture.body));
  fixture.keys.push_back({"k1", verifier::ingest::SignatureVersion::kV1, secret});
  return fixture;
}

SignedFixture SignedV1a() {
  SignedFixture fixture;
  const absl::StatusOr<crypto::Ed25519PrivateKey> key =
      crypto::Ed25519PrivateKey::FromSeed(std::string(crypto::kEd25519SeedSize, '\x17'));
  if (!key.ok()) {
    return fixture;  // no keys: the benchmark reports the failure
  }
  fixture.header = verifier::ingest::SignV1a(
      *key, verifier::ingest::SignedContent(fixture.msg_id, 1796001825, fixture.body));
  fixture.keys.push_back(
      {"k1", verifier::ingest::SignatureVersion::kV1a, std::string(key->PublicKey().raw())});
  return fixture;
}

void RunVerify(benchmark::State& state, const SignedFixture& fixture) {
  const verifier::ingest::SignedDelivery delivery{fixture.msg_id, fixture.timestamp, fixture.header,
                                                  fixture.body};
  Require(state, verifier::ingest::VerifyDelivery(delivery, fixture.keys, fixture.now).ok(),
          "signature does not verify");
  for (auto _ : state) {
    absl::StatusOr<verifier::ingest::VerifiedSignature> verified =
        verifier::ingest::VerifyDelivery(delivery, fixture.keys, fixture.now);
    benchmark::DoNotOptimize(verified);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_WebhookVerifyV1(benchmark::State& state) { RunVerify(state, SignedV1()); }
BENCHMARK(BM_WebhookVerifyV1);

void BM_WebhookVerifyV1a(benchmark::State& state) { RunVerify(state, SignedV1a()); }
BENCHMARK(BM_WebhookVerifyV1a);

// ---------------------------------------------------------------------------------------------
// C2PA (issue 19): validating the manifest of one signed 200 KiB JPEG — container walk, JUMBF,
// claim CBOR, ES256 COSE signature, chain check against one anchor, hashed URIs and SHA-256 of the
// whole file for the data hash — beside one bare Ed25519 verification (of a 1 KiB message) in the
// same run. The JPEG is made by the test signer (tests/support/c2pa_test_signer): a 1x1 image
// with 200 KiB of comment segments, so the data hash covers 200 KiB.

void BM_C2paVerifyJpeg200KiB(benchmark::State& state) {
  const absl::Time now = absl::Now();
  const testing::C2paTestCredential credential =
      testing::MakeC2paTestCredential("Bench Signer", now - absl::Hours(1), now + absl::Hours(24));
  testing::C2paTestManifest manifest;
  manifest.digital_source_type =
      "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia";
  const std::string jpeg = testing::SignC2paTestAsset(
      testing::PlainTestJpeg(200 * 1024), verifier::c2pa::MediaType::kJpeg, credential, manifest);
  const verifier::c2pa::TrustAnchors anchors =
      *verifier::c2pa::TrustAnchors::FromPem(credential.certificate_pem);
  const verifier::c2pa::C2paLimits limits;
  Require(state,
          verifier::c2pa::ValidateAsset(jpeg, verifier::c2pa::MediaType::kJpeg, anchors, now,
                                        limits)
                  .verdict == verifier::c2pa::Verdict::kValid,
          "the signed JPEG does not validate");
  for (auto _ : state) {
    verifier::c2pa::ValidationResult result =
        verifier::c2pa::ValidateAsset(jpeg, verifier::c2pa::MediaType::kJpeg, anchors, now, limits);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * jpeg.size()));
  state.counters["jpeg_bytes"] = static_cast<double>(jpeg.size());
}
BENCHMARK(BM_C2paVerifyJpeg200KiB)->Unit(benchmark::kMicrosecond);

void BM_Ed25519Verify(benchmark::State& state) {
  const crypto::Ed25519PrivateKey key =
      *crypto::Ed25519PrivateKey::FromSeed(std::string(crypto::kEd25519SeedSize, '\x19'));
  const std::string message(1024, 'm');
  const std::string signature = key.Sign(message);
  const crypto::Ed25519PublicKey public_key = key.PublicKey();
  Require(state, public_key.Verify(message, signature), "the signature does not verify");
  for (auto _ : state) {
    bool verified = public_key.Verify(message, signature);
    benchmark::DoNotOptimize(verified);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ed25519Verify)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// mf2 parse against gumbo's raw parse of the same page

// An h-feed page of at least `min_bytes`: h-entries, each with an author h-card, dates (one by the
// value-class pattern), categories, a reply context, a like, a comment, e-content with markup and
// relative links (about 1.9 KiB per entry), plus rel links in the head.
std::string FeedPage(size_t min_bytes) {
  std::string html = R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Alice's notes</title>
<link rel="me" href="https://social.example/@alice"><link rel="webmention" href="/webmention">
<link rel="stylesheet" href="/style.css"><link rel="alternate" type="application/rss+xml" href="/feed.xml">
</head><body><header><nav><a href="/">Home</a> <a href="/about" rel="author">About</a></nav></header>
<main class="h-feed"><h1 class="p-name">Alice's notes</h1>
<div class="p-author h-card"><img class="u-photo" src="/me.jpg" alt="Alice"><a class="p-name u-url" href="/">Alice Example</a></div>
)";
  const absl::string_view end = "</main><footer><p>© 2026 Alice</p></footer></body></html>\n";
  for (int i = 0; html.size() + end.size() < min_bytes; ++i) {
    absl::StrAppend(
        &html, "<article class=\"h-entry\" id=\"post-", i, "\">\n",
        "<h2 class=\"p-name\"><a href=\"/posts/", i, "\" class=\"u-url u-uid\">Post number ", i,
        ": on webmentions and feeds</a></h2>\n",
        "<div class=\"meta\">Posted <time class=\"dt-published\" datetime=\"2026-11-", 10 + i % 20,
        "T0", i % 10, ":15:00Z\">November ", 10 + i % 20,
        "</time> by <span class=\"p-author h-card\"><img class=\"u-photo\" src=\"/me.jpg\" "
        "alt=\"\"><a class=\"p-name u-url\" href=\"https://alice.example/\">Alice</a></span>",
        " <span class=\"dt-updated\"><span class=\"value\">2026-11-30</span> at <span "
        "class=\"value\">12:00</span></span></div>\n",
        "<div class=\"u-in-reply-to h-cite\"><a class=\"u-url p-name\" "
        "href=\"https://bob.example/notes/",
        i, "\">Bob's note ", i, "</a> by <span class=\"p-author\">Bob</span></div>\n",
        "<div class=\"e-content\"><p>This is the body of post ", i,
        ", long enough to look like a real post. It links to <a href=\"https://bob.example/notes/",
        i, "\">Bob's note</a>, to <a href=\"../archive/", i,
        "\">the archive</a> and to <a href=\"#comments\">the comments</a>.</p>\n",
        "<p>Déjà vu, ünïcödé, 日本語: a second paragraph with <em>emphasis</em>, <code>code</code>"
        " and an image <img src=\"/img/",
        i, ".jpg\" alt=\"a picture\">.</p>\n",
        "<ul><li>one point</li><li>another point</li><li>a <strong>third</strong> point</li></ul>"
        "<blockquote><p>A quotation from somewhere else, kept short.</p></blockquote></div>\n",
        "<footer>Tagged <a class=\"p-category\" href=\"/tags/indieweb\">indieweb</a>, <a "
        "class=\"p-category\" href=\"/tags/webmention\">webmention</a>, <span "
        "class=\"p-category\">notes</span>. <a class=\"u-syndication\" "
        "href=\"https://social.example/@alice/",
        1000000 + i,
        "\" rel=\"syndication\">Also on social</a>. <a class=\"u-like-of\" "
        "href=\"https://carol.example/",
        i, "\">liked</a></footer>\n", "<section class=\"comments\" id=\"comments-", i,
        "\"><div class=\"p-comment h-cite\">"
        "<span class=\"p-author h-card\"><a class=\"u-url p-name\" "
        "href=\"https://dave.example/\">Dave</a></span>: <span class=\"p-content\">Nice post "
        "number ",
        i, "!</span></div></section>\n</article>\n");
  }
  absl::StrAppend(&html, end);
  return html;
}

// Pages of about 100 KiB and 1 MiB (the fetcher's body cap).
const std::string& Page(int64_t kib) {
  static const auto* const kSmall = new std::string(FeedPage(size_t{100} << 10));
  static const auto* const kLarge = new std::string(FeedPage(size_t{1} << 20));
  return kib <= 100 ? *kSmall : *kLarge;
}

struct GumboOutputDeleter {
  void operator()(GumboOutput* output) const {
    if (output != nullptr) {
      gumbo_destroy_output(&kGumboDefaultOptions, output);
    }
  }
};
using GumboOutputPtr = std::unique_ptr<GumboOutput, GumboOutputDeleter>;

// The reference: gumbo's parse and teardown of the page, with the options HtmlDocument uses.
void BM_GumboRawParse(benchmark::State& state) {
  const std::string& page = Page(state.range(0));
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  for (auto _ : state) {
    GumboOutputPtr output(gumbo_parse_with_options(&options, page.data(), page.size()));
    benchmark::DoNotOptimize(output.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.counters["page_bytes"] = static_cast<double>(page.size());
}
BENCHMARK(BM_GumboRawParse)->Arg(100)->Arg(1024)->Unit(benchmark::kMillisecond);

// HtmlDocument::Parse alone: depth cap + gumbo + the tree over its output.
void BM_HtmlDocumentParse(benchmark::State& state) {
  const std::string& page = Page(state.range(0));
  for (auto _ : state) {
    verifier::html::HtmlDocument document = verifier::html::HtmlDocument::Parse(page);
    benchmark::DoNotOptimize(document.root());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
}
BENCHMARK(BM_HtmlDocumentParse)->Arg(100)->Arg(1024)->Unit(benchmark::kMillisecond);

// The figure: text to mf2 JSON, everything the verifier does with a fetched page
// (ParseMf2(html, url) = HtmlDocument::Parse + the mf2 walk).
void BM_Mf2Parse(benchmark::State& state) {
  const std::string& page = Page(state.range(0));
  const std::string page_url = "https://alice.example/notes/";
  absl::StatusOr<boost::json::object> first = verifier::html::ParseMf2(page, page_url);
  Require(state, first.ok(), "mf2 parse failed");
  if (first.ok()) {
    const boost::json::value* items = first->if_contains("items");
    Require(state, items != nullptr && items->is_array() && !items->as_array().empty(),
            "mf2 parse found no items");
  }
  for (auto _ : state) {
    absl::StatusOr<boost::json::object> parsed = verifier::html::ParseMf2(page, page_url);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
}
BENCHMARK(BM_Mf2Parse)->Arg(100)->Arg(1024)->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------------------------
// Link matching: does a parsed page link to the target?

// A post of at least `min_bytes` with many links (about 20 per 1.2 KiB paragraph: absolute and
// relative, other hosts and the target's host, fragments, images, near misses such as /post-10
// for /post-1), all inside one h-entry so that each counts; `with_target` appends the target's
// link as the very last one.
std::string LinkPage(size_t min_bytes, bool with_target) {
  std::string html = R"(<!doctype html><html><head><title>Links</title>
<link rel="stylesheet" href="/style.css"><link rel="webmention" href="/webmention"></head>
<body><nav><a href="/">Home</a> <a href="/archive">Archive</a></nav>
<article class="h-entry"><h1 class="p-name">A link-heavy post</h1><div class="e-content">
)";
  for (int i = 0; html.size() < min_bytes; ++i) {
    absl::StrAppend(
        &html, "<p>Paragraph ", i, " cites <a href=\"https://bob.example/notes/", i,
        "\">Bob</a>, <a href=\"https://target.example/post-1", i % 10,
        "\">a near miss</a>, <a href=\"https://target.example/post-1/comments#c", i,
        "\">its comments</a>, <a href=\"../archive/", i, "\">the archive</a>, <a href=\"#n", i,
        "\">a note</a>, <a href=\"/tags/t", i % 50, "\">a tag</a>, <a href=\"//cdn.example/x/", i,
        "\">the CDN</a>, <a href=\"https://carol.example/", i, "?utm_source=feed\">Carol</a>,",
        " <a href=\"https://dave.example/a/b/../c/", i,
        "\">Dave</a>, <a href=\"HTTPS://Eve.Example/", i, "\">Eve</a>, <img src=\"/img/", i,
        ".jpg\" alt=\"\">, <a href=\"https://frank.example/", i,
        "/\">Frank</a>, <a href=\"https://grace.example/p?", i, "\">Grace</a>, <a href=\"",
        "https://heidi.example/2026/11/", i, "\">Heidi</a>, <a href=\"mailto:alice@example.com\">",
        "mail</a>, <a href=\"https://ivan.example/", i,
        "\">Ivan</a>, <a href=\"https://judy.example/", i,
        "\">Judy</a>, <a href=\"https://mallory.example/", i, "\">Mallory</a> and <a href=\"",
        "https://target.example/post-", 100 + i,
        "\">another post</a>. Some text to read between "
        "the links, as a real paragraph has.</p>\n");
  }
  if (with_target) {
    html += "<p>Finally, <a href=\"https://target.example/post-1\">the post I reply to</a>.</p>\n";
  }
  html += "</div></article></body></html>\n";
  return html;
}

// FindLink over an already parsed ~100 KiB page (parsing is BM_HtmlDocumentParse): arg 1 = the
// target is the last link, arg 0 = absent (every link read, the diagnostic collected).
void BM_FindLink(benchmark::State& state) {
  const bool with_target = state.range(0) == 1;
  const std::string page = LinkPage(size_t{100} << 10, with_target);
  const verifier::html::HtmlDocument document = verifier::html::HtmlDocument::Parse(page);
  const absl::StatusOr<url::Url> page_url = url::ParseUrl("https://alice.example/notes/1");
  const absl::StatusOr<url::Url> target = url::ParseUrl("https://target.example/post-1");
  Require(state, page_url.ok() && target.ok(), "URLs do not parse");
  if (!page_url.ok() || !target.ok()) {
    return;
  }
  const verifier::html::LinkMatch first = verifier::html::FindLink(document, *page_url, *target);
  Require(state, first.found == with_target && !first.scan_truncated, "unexpected match result");
  for (auto _ : state) {
    verifier::html::LinkMatch match = verifier::html::FindLink(document, *page_url, *target);
    benchmark::DoNotOptimize(match);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.counters["page_bytes"] = static_cast<double>(page.size());
  state.counters["links"] = static_cast<double>(first.links_checked);
}
BENCHMARK(BM_FindLink)->ArgName("target_last")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// The whole analysis of a fetched source (bench/verify's 20 KiB h-entry page): parse, link match,
// mf2, classification with the sanitized e-content, authorship. Gumbo's raw parse of the same page
// is the reference (the ratio is the figure); the sanitizer alone shows its share.

constexpr absl::string_view kEntryTarget = "https://example.com/notes/2024/hello-world";

// The page bench/verify's origin serves, byte for byte.
const std::string& EntryPage() {
  static const std::string* const kPage = [] {
    auto* html = new std::string(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>A reply</title>\n"
        "<link rel=\"author\" href=\"/about\"></head><body>\n"
        "<article class=\"h-entry\"><h1 class=\"p-name\">A reply about hello world</h1>\n"
        "<a class=\"p-author h-card\" href=\"https://alice.example/\"><img class=\"u-photo\" "
        "src=\"/alice.jpg\" alt=\"\">Alice</a>\n"
        "<time class=\"dt-published\" datetime=\"2024-05-01T10:00:00Z\">1 May 2024</time>\n");
    absl::StrAppend(html, "<p>In reply to <a class=\"u-in-reply-to\" href=\"", kEntryTarget,
                    "\">hello world</a>.</p>\n<div class=\"e-content\">\n");
    for (int i = 1; i <= 140; ++i) {
      absl::StrAppend(html, "<p>Paragraph ", i,
                      " with <em>some</em> text and a <a href=\"https://elsewhere.example/", i,
                      "\">link</a> to fill the page to about twenty KiB of HTML.</p>\n");
    }
    absl::StrAppend(html, "</div></article></body></html>\n");
    return html;
  }();
  return *kPage;
}

void BM_EntryGumboRawParse(benchmark::State& state) {
  const std::string& page = EntryPage();
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  for (auto _ : state) {
    GumboOutputPtr output(gumbo_parse_with_options(&options, page.data(), page.size()));
    benchmark::DoNotOptimize(output.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.SetItemsProcessed(state.iterations());  // items/s: pages/s
  state.counters["page_bytes"] = static_cast<double>(page.size());
}
BENCHMARK(BM_EntryGumboRawParse)->Unit(benchmark::kMicrosecond);

void BM_EntryAnalyze(benchmark::State& state) {
  const std::string& page = EntryPage();
  const absl::StatusOr<url::Url> page_url = url::ParseUrl("http://127.0.0.1:8081/reply/1");
  Require(state, page_url.ok(), "page URL does not parse");
  if (!page_url.ok()) {
    return;
  }
  const verifier::verification::HtmlSourceAnalyzer analyzer;
  const verifier::verification::SourceAnalysis first =
      analyzer.Analyze(page, *page_url, kEntryTarget);
  Require(state,
          first.links_to_target && first.content.type == "reply" &&
              first.content.author_name == "Alice" && !first.content.content_html.empty(),
          "the entry page did not analyze as a reply by Alice");
  for (auto _ : state) {
    verifier::verification::SourceAnalysis analysis =
        analyzer.Analyze(page, *page_url, kEntryTarget);
    benchmark::DoNotOptimize(analysis);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.SetItemsProcessed(state.iterations());  // items/s: pages/s, against BM_EntryGumboRawParse's
}
BENCHMARK(BM_EntryAnalyze)->Unit(benchmark::kMicrosecond);

// The sanitizer alone on the page's e-content parsed from its html (what the classifier did before
// issue 15; it now hands the parsed e-content to SanitizeParsedHtml, below).
void BM_EntrySanitize(benchmark::State& state) {
  const std::string& page = EntryPage();
  const size_t begin = page.find("<div class=\"e-content\">\n") + 24;
  const absl::string_view content =
      absl::string_view(page).substr(begin, page.rfind("</div>") - begin);
  const absl::StatusOr<url::Url> page_url = url::ParseUrl("http://127.0.0.1:8081/reply/1");
  Require(state, page_url.ok(), "page URL does not parse");
  if (!page_url.ok()) {
    return;
  }
  for (auto _ : state) {
    verifier::html::SanitizedHtml sanitized = verifier::html::SanitizeHtml(content, *page_url);
    benchmark::DoNotOptimize(sanitized);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}
BENCHMARK(BM_EntrySanitize)->Unit(benchmark::kMicrosecond);

// The sanitizer on the e-content of the already parsed page (the analysis's path): no parse.
void BM_EntrySanitizeParsed(benchmark::State& state) {
  const std::string& page = EntryPage();
  const absl::StatusOr<url::Url> page_url = url::ParseUrl("http://127.0.0.1:8081/reply/1");
  Require(state, page_url.ok(), "page URL does not parse");
  if (!page_url.ok()) {
    return;
  }
  verifier::html::HtmlDocument document = verifier::html::HtmlDocument::Parse(page);
  verifier::html::Mf2HtmlSources sources;
  const absl::StatusOr<boost::json::object> mf2 =
      verifier::html::ParseMf2(document, *page_url, {}, &sources);
  Require(state, mf2.ok() && sources.size() == 1, "the page has no one e-content");
  if (!mf2.ok() || sources.size() != 1) {
    return;
  }
  const boost::json::string& html =
      mf2->at("items").at(0).at("properties").at("content").at(0).at("html").as_string();
  const absl::string_view content(html.data(), html.size());
  const verifier::html::HtmlFragment* fragment = sources.Find(content);
  Require(state, fragment != nullptr, "the e-content was not recorded");
  if (fragment == nullptr) {
    return;
  }
  const verifier::html::SanitizedHtml first =
      verifier::html::SanitizeParsedHtml(*fragment, content, *page_url);
  Require(state, first.parses == 0, "the e-content was parsed again");
  for (auto _ : state) {
    verifier::html::SanitizedHtml sanitized =
        verifier::html::SanitizeParsedHtml(*fragment, content, *page_url);
    benchmark::DoNotOptimize(sanitized);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * content.size()));
}
BENCHMARK(BM_EntrySanitizeParsed)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// Egress policy check of a URL (before DNS: spelling, parse, scheme, port, host name or literal)

void BM_EgressParseAndCheckUrl(benchmark::State& state) {
  const std::vector<std::string> urls = {
      "https://alice.example/posts/2026/11/30/hello-world",
      "https://bob.example/notes/42?utm_source=feed#comments",
      "https://bücher.example/katalog/übersicht",
      "http://93.184.216.34/page",
      "http://127.0.0.1/",           // refused: loopback literal
      "http://metadata.internal/",   // refused: special-use name
      "https://example.com:8443/x",  // refused: port
      "http://[::ffff:7f00:1]/",     // refused: IPv4-mapped loopback
  };
  const verifier::fetch::EgressPolicy policy;
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<url::Url> checked = policy.ParseAndCheckUrl(urls[i]);
    benchmark::DoNotOptimize(checked);
    i = (i + 1) & 7;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EgressParseAndCheckUrl);

}  // namespace
}  // namespace portcullis::bench

BENCHMARK_MAIN();
