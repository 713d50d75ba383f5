#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/crypto/sha256.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/verifier_client.h"

// POST /ingest: feed items pushed by publishers and brokers, answered so that a broker retries
// only what is worth retrying (../shared/DESIGN.md, "POST /ingest"):
//
//   202 accepted      {"status":"accepted",...}                 X-Ingest-Action: accept
//   202 quarantined   {"status":"quarantined","reason",...}     X-Ingest-Action: quarantine
//   200 dropped       {"status":"dropped","reason",...}         X-Ingest-Action: drop
//   200 duplicate     {"status":"acknowledged_duplicate","reason":<original decision>,...}
//                                                               X-Ingest-Action: duplicate
//   400 malformed_json         not JSON, or not UTF-8
//   403 unknown_publisher      X-Provenance-Source is not registered (or disabled)
//   413 payload_too_large      body over the cap (the server answers it before the handler)
//   415 unsupported_media_type Content-Type is not JSON
//   422 schema_violation       with `field`: a header name or a JSON Pointer into the body
//   503 unavailable            + Retry-After (jittered) + X-Ingest-Action: retry: the verifier, the
//                              database or the key store is down or over its deadline
// Decision bodies always carry `item_id` and `content_hash` (so do 403 and 503). 410 is never
// sent: brokers read it as "disable this endpoint".
namespace portcullis::gateway {

inline constexpr char kIngestPath[] = "/ingest";
// The default and largest body cap of POST /ingest (EvaluateIngest carries at most 1 MiB).
inline constexpr uint64_t kMaxIngestBodyBytes = 1024 * 1024;
// Longest item `id`, in bytes.
inline constexpr size_t kMaxItemIdBytes = 256;
// Longest publisher name (X-Provenance-Source), in bytes.
inline constexpr size_t kMaxPublisherBytes = 128;
// Longest `digital_source_type` and provenance header value, in bytes (what the verifier stores).
inline constexpr size_t kMaxDigitalSourceTypeBytes = 1024;
inline constexpr size_t kMaxProvenanceHeaderBytes = 8192;
// Largest canonical form: numbers can grow ("1e20" is 100000000000000000000), so a 1 MiB body
// may canonicalize to several; over this it is answered 413 like an oversized body.
inline constexpr size_t kMaxCanonicalBodyBytes = 2 * 1024 * 1024;
// `media` (issue 19): elements per item, and decoded bytes per element (the body cap applies to
// the whole item as well).
inline constexpr size_t kMaxMediaElements = 16;
inline constexpr size_t kMaxMediaElementBytes = 2 * 1024 * 1024;

inline constexpr char kIngestActionHeader[] = "X-Ingest-Action";

// The Standard Webhooks fields of a delivery and every header name each arrives under, in the
// order they are tried: the standard's own, Svix's (a delivery built with the svix library
// carries only svix-id, svix-timestamp and svix-signature), then Portcullis's. A delivery that
// gives one field two different values (under two names, or one name twice) is a 422
// schema_violation naming the header.
struct ProvenanceHeaderAliases {
  absl::string_view field;
  std::array<absl::string_view, 3> names;
};
inline constexpr ProvenanceHeaderAliases kProvenanceHeaderAliases[] = {
    {"signature", {"webhook-signature", "svix-signature", "X-Provenance-Signature"}},
    {"id", {"webhook-id", "svix-id", "X-Provenance-Id"}},
    {"timestamp", {"webhook-timestamp", "svix-timestamp", "X-Provenance-Timestamp"}},
};

// One element of an item's `media`: {"content_type": "image/jpeg" | "image/png",
// "data": "<standard base64>"}, decoded.
struct IngestMediaElement {
  std::string content_type;
  std::string data;
};

// One item, read and canonicalized, ready for EvaluateIngest.
struct IngestItem {
  std::string publisher;
  std::string item_id;
  std::optional<bool> is_synthetic;
  std::string digital_source_type;
  std::vector<IngestMediaElement> media;
  std::string canonical_body;  // RFC 8785.
  crypto::Sha256Digest content_hash;  // SHA-256 of canonical_body.
  // The Standard Webhooks fields, from kProvenanceHeaderAliases; "" when absent.
  std::string signature;
  std::string message_id;
  std::string timestamp;
};

// Reads `request` as an ingest delivery: the Content-Type, the JSON body (strict I-JSON, see
// common/json/strict_parse.h), the schema of the known members and X-Provenance-Source. Unknown
// members are allowed; the provenance headers (kProvenanceHeaderAliases). Either the item or the
// 400/413/415/422 answer. A `media` element decoding to more than `max_media_element_bytes` is a
// 422 naming it.
std::variant<IngestItem, http::HttpResponse> ReadIngestItem(
    const http::HttpRequest& request, uint64_t max_body_bytes,
    size_t max_media_element_bytes = kMaxMediaElementBytes);

// The EvaluateIngest request for `item` delivered as `request` (the raw body, and the provenance
// fields ReadIngestItem read).
verifier::v1::EvaluateIngestRequest EvaluateRequestFor(const http::HttpRequest& request,
                                                       const IngestItem& item);

// The HTTP answer for the verifier's decision (see the table above); `retry_after_seconds` is
// used only if the result is a retryable error.
http::HttpResponse IngestResponseFor(const absl::StatusOr<verifier::v1::EvaluateIngestResponse>& result,
                                     const IngestItem& item, int retry_after_seconds);

// `base` seconds spread by up to ±base/2 (at least ±1), never below 1: retries of many senders
// after one outage do not arrive in lockstep.
int JitteredRetryAfter(int base);

// (publisher, SHA-256 of an accepted item) → the item's id and content hash, for at most `ttl`
// after the verifier said so. An accepted decision is final while it lives (nothing replaces it:
// IngestStore::Record), so a repeat inside the TTL is a duplicate of it without asking the
// verifier. The handler remembers an item under two hashes: its content hash (a repeat formatted
// differently) and the hash of the body as delivered (a byte-identical retry, answered before its
// body is parsed). Bounded: `max_entries` hashes; when full, it starts over. Entries are kept
// small (binary digests, one map per publisher): the default 50,000 take a few MiB of the
// gateway's 64 MiB. Thread-safe.
class AcceptedDecisionCache {
 public:
  struct Accepted {
    std::string item_id;
    crypto::Sha256Digest content_hash;
  };

  AcceptedDecisionCache(absl::Duration ttl, size_t max_entries,
                        std::function<absl::Time()> clock);

  // The accepted item remembered under (publisher, hash) less than `ttl` ago, if any.
  std::optional<Accepted> Find(absl::string_view publisher, const crypto::Sha256Digest& hash);
  void Remember(absl::string_view publisher, const crypto::Sha256Digest& hash,
                const Accepted& accepted);

 private:
  struct Entry {
    Accepted accepted;
    absl::Time remembered_at;
  };
  const absl::Duration ttl_;
  const size_t max_entries_;
  const std::function<absl::Time()> clock_;
  absl::Mutex mu_;
  size_t entries_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, absl::flat_hash_map<crypto::Sha256Digest, Entry>> by_publisher_
      ABSL_GUARDED_BY(mu_);
};

class IngestHandler {
 public:
  struct Options {
    uint64_t max_body_bytes = kMaxIngestBodyBytes;
    // Decoded bytes of one `media` element at most (kMaxMediaElementBytes at most).
    size_t max_media_element_bytes = kMaxMediaElementBytes;
    int retry_after_seconds = 5;
    // The Retry-After of one transient answer; defaults to JitteredRetryAfter(retry_after_seconds).
    std::function<int()> retry_after;
    // Repeats of an accepted item are answered here (200 acknowledged_duplicate, reason
    // "accepted", exactly as the verifier would) for this long after the verifier accepted it or
    // answered it a duplicate of an accepted one; zero: every delivery goes to the verifier. The
    // price: a publisher disabled (or a decision expiring) within this time after shows up to
    // this much later for items already accepted. Keep it at most the verifier's publisher cache
    // TTL (5 s). The gateway's is --ingest_duplicate_cache_ttl (GatewayConfig).
    absl::Duration accepted_duplicate_ttl = absl::ZeroDuration();
    size_t accepted_duplicate_max_entries = 50000;
    std::function<absl::Time()> clock = [] { return absl::Now(); };
  };

  // `verifier` must outlive the handler.
  IngestHandler(VerifierClient& verifier, Options options);

  // POST /ingest.
  void Handle(const http::HttpRequest& request, http::Respond respond) const;

 private:
  VerifierClient& verifier_;
  const Options options_;
  // Null when options_.accepted_duplicate_ttl is zero.
  std::shared_ptr<AcceptedDecisionCache> accepted_;
};

}  // namespace portcullis::gateway
