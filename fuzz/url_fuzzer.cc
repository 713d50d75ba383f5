// The WHATWG URL parser (common/url) on arbitrary bytes. Invariants: a parsed URL's
// serialization parses again to the same serialization (the parser is a fixed point on its own
// output), components agree with href, and normalization of a URL is itself a URL. When the input
// contains a newline, the text before it is also tried as a base for the text after it.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "common/url/url.h"
#include "fuzz/fuzz_check.h"

namespace {

using portcullis::url::ParseUrl;
using portcullis::url::Url;

void CheckRoundTrip(const Url& url) {
  const std::string href = url.href();
  FUZZ_CHECK(url.scheme() == "http" || url.scheme() == "https", href);
  FUZZ_CHECK(!url.host().empty(), href);
  FUZZ_CHECK(!url.path().empty() && url.path().front() == '/', href);
  FUZZ_CHECK(url.has_credentials() || absl::StartsWith(href, url.origin()), href);
  const auto again = ParseUrl(href);
  FUZZ_CHECK(again.ok(), href + " -> " + std::string(again.status().message()));
  FUZZ_CHECK(again->href() == href, href + " -> " + again->href());
  FUZZ_CHECK(again->host_kind() == url.host_kind(), href);
  FUZZ_CHECK(again->effective_port() == url.effective_port(), href);

  const std::string normalized =
      portcullis::url::Normalize(url, portcullis::url::TrackingParameters::Default());
  const auto reparsed = ParseUrl(normalized);
  FUZZ_CHECK(reparsed.ok(), href + " normalized to " + normalized);
  FUZZ_CHECK(reparsed->href() == normalized, normalized + " -> " + reparsed->href());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  (void)portcullis::url::SchemeOf(input);
  (void)portcullis::url::PreprocessInput(input);

  const auto url = ParseUrl(input);
  if (url.ok()) {
    CheckRoundTrip(*url);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(url.status()) || absl::IsUnimplemented(url.status()),
               url.status().ToString());
  }

  const size_t newline = input.find('\n');
  if (newline != absl::string_view::npos) {
    const auto base = ParseUrl(input.substr(0, newline));
    if (base.ok()) {
      const auto relative = ParseUrl(input.substr(newline + 1), &*base);
      if (relative.ok()) {
        CheckRoundTrip(*relative);
      }
    }
  }
  return 0;
}
