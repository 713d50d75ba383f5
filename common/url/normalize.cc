#include "common/url/normalize.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/encoding/percent.h"

namespace portcullis::url {

TrackingParameters TrackingParameters::Default() {
  return TrackingParameters{
      .names = {"fbclid",      "gclid",      "dclid",   "msclkid",    "mc_cid", "mc_eid", "_hsenc",
                "_hsmi",       "igshid",     "yclid",   "twclid",     "ttclid", "wbraid", "gbraid",
                "oly_anon_id", "oly_enc_id", "vero_id", "rb_clickid", "s_cid",  "mkt_tok"},
      .name_prefixes = {"utm_"},
  };
}

bool TrackingParameters::Matches(absl::string_view name) const {
  for (const std::string& exact : names) {
    if (name == exact) {
      return true;
    }
  }
  for (const std::string& prefix : name_prefixes) {
    if (absl::StartsWith(name, prefix)) {
      return true;
    }
  }
  return false;
}

std::string Normalize(const Url& url, const TrackingParameters& tracking) {
  // Credentials stay part of the serialization so that two different URLs never share a key
  // (the gateway refuses URLs with credentials before it gets here anyway).
  std::string out;
  out.reserve(url.scheme().size() + 3 + url.username().size() + url.password().size() + 2 +
              url.host().size() + 6 + url.path().size() +
              (url.query().has_value() ? url.query()->size() + 1 : 0));
  absl::StrAppend(&out, url.scheme(), "://");
  if (url.has_credentials()) {
    absl::StrAppend(&out, url.username());
    if (!url.password().empty()) {
      absl::StrAppend(&out, ":", url.password());
    }
    out.push_back('@');
  }
  absl::StrAppend(&out, url.host());
  if (url.port().has_value()) {
    absl::StrAppend(&out, ":", *url.port());
  }
  absl::StrAppend(&out, url.path());
  if (url.query().has_value()) {
    // "?" and the kept parameters joined by "&"; the "?" goes again when that join is empty.
    const size_t question_mark = out.size();
    out.push_back('?');
    bool first = true;
    const absl::string_view query = *url.query();
    size_t begin = 0;
    while (true) {
      const size_t end = std::min(query.find('&', begin), query.size());
      const absl::string_view parameter = query.substr(begin, end - begin);
      const absl::string_view name = parameter.substr(0, parameter.find('='));
      const bool tracked =
          std::none_of(name.begin(), name.end(), [](char c) { return c == '%' || c == '+'; })
              ? tracking.Matches(name)
              : tracking.Matches(encoding::PercentDecode(name, encoding::PlusIs::kSpace));
      if (!tracked) {
        if (!first) {
          out.push_back('&');
        }
        first = false;
        out.append(parameter.data(), parameter.size());
      }
      if (end == query.size()) {
        break;
      }
      begin = end + 1;
    }
    if (out.size() == question_mark + 1) {
      out.pop_back();
    }
  }
  return out;
}

MentionKey MentionKeyOf(const Url& source, const Url& target, const TrackingParameters& tracking) {
  MentionKey key;
  key.normalized_source = Normalize(source, tracking);
  key.normalized_target = Normalize(target, tracking);
  key.source_hash = crypto::Sha256(key.normalized_source);
  key.target_hash = crypto::Sha256(key.normalized_target);
  key.pair_hash = crypto::Sha256(absl::StrCat(key.normalized_source, ":", key.normalized_target));
  return key;
}

}  // namespace portcullis::url
