#pragma once

// The shared SSRF vectors (../shared/testdata/ssrf/vectors.json, SSRF-POLICY.md "The test
// vectors") run through the real fetch path: the WHATWG parser, EgressPolicy, SafeFetcher's
// one-lookup-per-hop resolution, pinning and hand-followed redirects — with the resolver stubbed
// from each vector and an HTTP backend that records every address a connection was attempted to.
// Used by `portcullis conformance ssrf FILE` and by the fetcher's tests.
//
// How each kind runs (the production EgressPolicy, no allow list):
//   resolved_ip     fetch http://resolved-ip.test/ whose one DNS answer is the input address;
//   url             fetch the input; every name answers 93.184.216.34; origins answer 200 HTML;
//   redirect_chain  fetch `start`; DNS from `dns` (other names: NXDOMAIN); the n-th connection
//                   is answered by hops[n] (past the script: 404);
//   dns_rebind      fetch `url`; the n-th lookup is answered by lookups[n] (past them: NXDOMAIN);
//                   every connection but the last scripted one is answered 302 to the same URL,
//                   so each lookup is a hop, the last 200 HTML.
// A vector passes when the fetch succeeds (`allow`), or is refused (`block`) for the reason its
// kind means (ExpectedRefusals: a policy refusal, never a stub's NXDOMAIN, a 404 or a failed
// connection), AND the recorded path is clean: no connection attempted to an address the policy refuses; exactly one
// lookup before each connection to a name (none for an IP literal), for the connection's host;
// each connection to an address that lookup answered (pinned); at most one lookup after the last.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/ip_address.h"
#include "verifier-service/src/fetch/http_client.h"
#include "verifier-service/src/fetch/resolver.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::fetch {

// What the fetch path did, in order: a lookup (host and what it answered) or a connection attempt.
struct FetchEvent {
  enum class Kind { kLookup, kConnect };
  Kind kind = Kind::kLookup;
  std::string host;  // the looked-up name, or the connection's URL host
  absl::StatusOr<std::vector<net::IpAddress>> answers = std::vector<net::IpAddress>{};
  std::string url;                        // kConnect: the URL requested
  std::optional<net::IpAddress> address;  // kConnect: where the connection went
};

// A Resolver answering synchronously from a function, recording each lookup into `events`.
class ScriptedResolver final : public Resolver {
 public:
  using Script = std::function<absl::StatusOr<std::vector<net::IpAddress>>(absl::string_view)>;
  ScriptedResolver(Script script, std::vector<FetchEvent>* events)
      : script_(std::move(script)), events_(events) {}
  void Resolve(absl::string_view host, Callback callback) override;
  int lookups() const { return lookups_; }

 private:
  Script script_;
  std::vector<FetchEvent>* events_;
  int lookups_ = 0;
};

// An HttpClient answering synchronously from a function, recording each connection attempt (its
// pinned address) into `events`. It opens no socket.
class RecordingHttpClient final : public HttpClient {
 public:
  using Script = std::function<absl::StatusOr<HttpResponse>(const HttpRequest&)>;
  RecordingHttpClient(Script script, std::vector<FetchEvent>* events)
      : script_(std::move(script)), events_(events) {}
  void Fetch(HttpRequest request, Callback callback) override;
  int connections() const { return connections_; }

 private:
  Script script_;
  std::vector<FetchEvent>* events_;
  int connections_ = 0;
};

struct SsrfHop {
  int status = 200;
  std::optional<std::string> location;
  std::string content_type = "text/html";
};

struct SsrfVector {
  std::string id;
  std::string kind;  // resolved_ip, url, redirect_chain, dns_rebind
  bool expect_block = false;
  std::string why;
  std::string input_json;  // the input as written, for reports
  // resolved_ip, url: the input text; redirect_chain: start; dns_rebind: url.
  std::string text;
  std::map<std::string, std::vector<std::string>> dns;  // redirect_chain
  std::vector<SsrfHop> hops;                            // redirect_chain
  std::vector<std::vector<std::string>> lookups;        // dns_rebind
};

// Reads a vectors file. kInvalidArgument naming the first malformed vector (unknown kind
// included), or for a file without vectors; nothing is run on a malformed file.
absl::StatusOr<std::vector<SsrfVector>> ParseSsrfVectors(absl::string_view json_text);

// The outcomes that count as the refusal a `block` vector of this kind expects (SSRF-POLICY.md
// "The test vectors"):
//   resolved_ip     forbidden_address: the policy refused the resolver's answer;
//   url             bad_url, bad_scheme, forbidden_url or forbidden_address, before any lookup
//                   (refused before DNS, or by its literal or special-use name);
//   redirect_chain  forbidden_address, forbidden_url or bad_scheme at some hop; too_many_redirects
//                   too when the script holds more redirects than the fetcher follows;
//   dns_rebind      forbidden_address: an answer of some lookup was refused.
// Every other outcome (dns_not_found, http_4xx, connection_failed, ...) is a fetch that failed for
// a reason the policy did not decide: a `block` vector refused that way fails.
std::vector<FetchOutcome> ExpectedRefusals(const SsrfVector& vector, int max_redirects);

struct SsrfVectorRun {
  bool passed = false;
  bool blocked = false;
  FetchResult result;
  std::vector<FetchEvent> events;
  // Why it failed (empty when it passed): outcome mismatch and every path violation.
  std::vector<std::string> problems;
};

SsrfVectorRun RunSsrfVector(const SsrfVector& vector);

// One line describing the recorded path: "lookup a.test -> [93.184.216.34]; connect ...".
std::string DescribeEvents(const std::vector<FetchEvent>& events);

}  // namespace portcullis::verifier::fetch
