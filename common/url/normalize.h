#pragma once

// Normalization of http(s) URLs for the webmention idempotency key (issue 3 §2). Stripping
// tracking parameters is for the key only: link matching compares the URLs as parsed.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/crypto/sha256.h"
#include "common/url/url.h"

namespace portcullis::url {

// Query parameters that identify a campaign or a click, not a resource.
struct TrackingParameters {
  // Names removed when equal (case-sensitive, compared after form-urlencoded decoding).
  std::vector<std::string> names;
  // Names removed when they start with one of these ("utm_" covers utm_source, utm_medium, ...).
  std::vector<std::string> name_prefixes;

  // The list from issue 3: utm_*, fbclid, gclid, dclid, msclkid, mc_cid, mc_eid, _hsenc, _hsmi,
  // igshid, yclid, twclid, ttclid, wbraid, gbraid, oly_anon_id, oly_enc_id, vero_id, rb_clickid,
  // s_cid, mkt_tok.
  static TrackingParameters Default();

  // Whether a parameter named `name` (already decoded) is removed.
  bool Matches(absl::string_view name) const;
};

// The normalized form of `url`: the URL serializer's output (lowercase ASCII host, default port
// dropped, path at least "/", "/a/" and "/a" kept distinct) without the fragment and without
// tracking parameters; the other parameters keep their order and bytes. When no parameter is
// left (or the query was empty), the "?" is dropped too.
std::string Normalize(const Url& url, const TrackingParameters& tracking);

// The idempotency key of a (source, target) pair.
struct MentionKey {
  std::string normalized_source;
  std::string normalized_target;
  crypto::Sha256Digest source_hash;  // SHA-256(normalized_source)
  crypto::Sha256Digest target_hash;  // SHA-256(normalized_target)
  // SHA-256(normalized_source ":" normalized_target), one value naming the pair.
  crypto::Sha256Digest pair_hash;
};

MentionKey MentionKeyOf(const Url& source, const Url& target, const TrackingParameters& tracking);

}  // namespace portcullis::url
