#pragma once

#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/verifier_client.h"

// The W3C Webmention receiver routes: the HTTP side of SubmitMention and GetMention.
namespace portcullis::gateway {

// The per-route body cap of POST /webmention (a form with two URLs needs far less).
inline constexpr uint64_t kWebmentionMaxBodyBytes = 64 * 1024;

inline constexpr char kWebmentionPath[] = "/webmention";
inline constexpr char kStatusPathPrefix[] = "/webmention/status/";
inline constexpr char kStatusRoute[] = "/webmention/status/{id}";

class WebmentionHandlers {
 public:
  // `verifier` must outlive the handlers.
  WebmentionHandlers(VerifierClient& verifier, int retry_after_seconds)
      : verifier_(verifier), retry_after_seconds_(retry_after_seconds) {}

  // POST /webmention: form with exactly one `source` and one `target` → SubmitMention.
  // 202 + Location on acceptance; 400 with a specific code otherwise; 503 + Retry-After when
  // the verifier is unavailable.
  void Submit(const http::HttpRequest& request, http::Respond respond) const;

  // GET /webmention/status/{id} → GetMention → 200 JSON; 404 for an unknown or malformed id.
  void Status(const http::HttpRequest& request, http::Respond respond) const;

 private:
  VerifierClient& verifier_;
  const int retry_after_seconds_;
};

// True for Content-Type application/x-www-form-urlencoded, with or without parameters.
bool IsFormContentType(absl::string_view content_type);

// "PENDING" for MENTION_STATE_PENDING.
std::string StateName(verifier::v1::MentionState state);

}  // namespace portcullis::gateway
