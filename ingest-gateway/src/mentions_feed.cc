#include "ingest-gateway/src/mentions_feed.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "boost/json/array.hpp"
#include "boost/json/serialize.hpp"
#include "common/crypto/sha256.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/avatar_proxy.h"
#include "ingest-gateway/src/form_decoding.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;
using http::HttpResponse;

boost::json::string_view Json(absl::string_view s) { return {s.data(), s.size()}; }

// Sets `key` to `value` unless `value` is empty.
void SetIfPresent(boost::json::object& object, absl::string_view key, absl::string_view value) {
  if (!value.empty()) {
    object[Json(key)] = Json(value);
  }
}

// RFC 3339 in UTC; empty when the timestamp is unset.
std::string Rfc3339(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) {
    return "";
  }
  const absl::Time time =
      absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", time, absl::UTCTimeZone());
}

// Percent-encodes everything but the URL Standard's unreserved characters.
std::string QueryEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

absl::Status Invalid(absl::string_view sentence) {
  return absl::InvalidArgumentError(sentence);
}

// The single value of `name`, nullopt when absent; an error when repeated.
absl::StatusOr<std::optional<std::string>> Single(const std::vector<FormField>& fields,
                                                  absl::string_view name) {
  const std::vector<absl::string_view> values = FieldValues(fields, name);
  if (values.size() > 1) {
    return Invalid(absl::StrCat("The ", name, " parameter is given more than once."));
  }
  if (values.empty()) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::string(values.front()));
}

// Only http(s) URLs are served as links: a consumer may put them in href or src as they are.
absl::string_view WebUrlOrEmpty(absl::string_view url) {
  const bool web = absl::StartsWithIgnoreCase(url, "https://") ||
                   absl::StartsWithIgnoreCase(url, "http://");
  return web ? url : absl::string_view();
}

bool HasControlOrSpace(absl::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

// The entity tags of an If-None-Match list, without their W/ prefix.
std::vector<absl::string_view> OpaqueTags(absl::string_view header) {
  std::vector<absl::string_view> tags;
  for (absl::string_view item : absl::StrSplit(header, ',')) {
    item = absl::StripAsciiWhitespace(item);
    absl::ConsumePrefix(&item, "W/");
    if (!item.empty()) {
      tags.push_back(item);
    }
  }
  return tags;
}

}  // namespace

absl::StatusOr<FeedQuery> ParseFeedQuery(absl::string_view query) {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(query);
  if (!fields.ok()) {
    return Invalid("The query string is not validly encoded.");
  }
  FeedQuery feed;
  absl::StatusOr<std::optional<std::string>> target = Single(*fields, "target");
  absl::StatusOr<std::optional<std::string>> site = Single(*fields, "site");
  absl::StatusOr<std::optional<std::string>> per_page = Single(*fields, "per-page");
  absl::StatusOr<std::optional<std::string>> page = Single(*fields, "page");
  for (const auto* value : {&target, &site, &per_page, &page}) {
    if (!value->ok()) {
      return value->status();
    }
  }
  const bool has_target = target->has_value() && !(*target)->empty();
  const bool has_site = site->has_value() && !(*site)->empty();
  if (has_target == has_site) {
    return Invalid("Give exactly one of the target and site parameters.");
  }
  if (has_target) {
    if ((*target)->size() > kMaxFeedTargetBytes || HasControlOrSpace(**target)) {
      return Invalid(absl::StrCat("The target parameter must be a URL of at most ",
                                  kMaxFeedTargetBytes, " bytes."));
    }
    feed.target = **target;
  } else {
    if ((*site)->size() > 253 || HasControlOrSpace(**site)) {
      return Invalid("The site parameter must be a domain name.");
    }
    feed.site = **site;
  }
  if (per_page->has_value()) {
    int size = 0;
    if (!absl::SimpleAtoi(**per_page, &size) || size < 1 || size > kMaxFeedPageSize) {
      return Invalid(absl::StrCat("The per-page parameter must be from 1 to ", kMaxFeedPageSize,
                                  "."));
    }
    feed.per_page = size;
  }
  if (page->has_value()) {
    if ((*page)->size() > kMaxFeedTokenBytes || HasControlOrSpace(**page)) {
      return Invalid("The page parameter is not a page of this feed.");
    }
    feed.page = **page;
  }
  return feed;
}

v1::ListMentionsRequest ToListRequest(const FeedQuery& query) {
  v1::ListMentionsRequest request;
  if (!query.target.empty()) {
    request.set_target(query.target);
  } else {
    request.set_domain(query.site);
  }
  request.set_state(v1::MENTION_STATE_VERIFIED);
  // What the public sees under the site's moderation policy, whatever the gateway's token may
  // see (issue 16).
  request.set_shown_only(true);
  request.set_page_size(query.per_page);
  request.set_page_token(query.page);
  return request;
}

std::string NextPageUrl(const FeedQuery& query, absl::string_view next_page_token) {
  return absl::StrCat(kMentionsPath, "?",
                      query.target.empty() ? absl::StrCat("site=", QueryEncode(query.site))
                                           : absl::StrCat("target=", QueryEncode(query.target)),
                      "&per-page=", query.per_page, "&page=", QueryEncode(next_page_token));
}

absl::string_view WmProperty(v1::MentionType type) {
  switch (type) {
    case v1::MENTION_TYPE_REPLY:
      return "in-reply-to";
    case v1::MENTION_TYPE_LIKE:
      return "like-of";
    case v1::MENTION_TYPE_REPOST:
      return "repost-of";
    case v1::MENTION_TYPE_BOOKMARK:
      return "bookmark-of";
    case v1::MENTION_TYPE_RSVP:
      return "rsvp";
    default:
      return "mention-of";
  }
}

boost::json::object Jf2Entry(const v1::Mention& mention, absl::string_view public_base_url) {
  boost::json::object entry;
  entry["type"] = "entry";
  if (mention.has_author()) {
    boost::json::object author;
    author["type"] = "card";
    SetIfPresent(author, "name", mention.author().name());
    SetIfPresent(author, "url", WebUrlOrEmpty(mention.author().url()));
    const std::string proxied = ProxiedPhotoUrl(mention.author(), public_base_url);
    SetIfPresent(author, "photo",
                 proxied.empty() ? WebUrlOrEmpty(mention.author().photo()) : proxied);
    if (author.size() > 1) {
      entry["author"] = std::move(author);
    }
  }
  SetIfPresent(entry, "url", WebUrlOrEmpty(mention.url().empty() ? mention.source() : mention.url()));
  SetIfPresent(entry, "published", mention.published());
  SetIfPresent(entry, "name", mention.name());
  boost::json::object content;
  SetIfPresent(content, "text", mention.content_text());
  SetIfPresent(content, "html", mention.content_html());
  if (!content.empty()) {
    entry["content"] = std::move(content);
  }
  entry["wm-property"] = Json(WmProperty(mention.type()));
  SetIfPresent(entry, "wm-target", mention.target());
  SetIfPresent(entry, "wm-source", mention.source());
  SetIfPresent(entry, "wm-received", Rfc3339(mention.created_at()));
  SetIfPresent(entry, "wm-id", mention.mention_id());
  if (mention.type() == v1::MENTION_TYPE_RSVP) {
    SetIfPresent(entry, "rsvp", mention.rsvp());
  }
  return entry;
}

std::string RenderJf2Feed(const v1::ListMentionsResponse& page, absl::string_view next_url,
                          absl::string_view public_base_url) {
  boost::json::object feed;
  feed["type"] = "feed";
  boost::json::array children;
  for (const v1::Mention& mention : page.mentions()) {
    // The verifier was asked for VERIFIED only; nothing else is ever served.
    if (mention.state() == v1::MENTION_STATE_VERIFIED) {
      children.emplace_back(Jf2Entry(mention, public_base_url));
    }
  }
  feed["children"] = std::move(children);
  SetIfPresent(feed, "next", next_url);
  return boost::json::serialize(feed);
}

std::string StrongEtag(absl::string_view body) {
  return absl::StrCat("\"", crypto::ToHex(crypto::Sha256(body)), "\"");
}

bool IfNoneMatchMatches(absl::string_view if_none_match, absl::string_view etag) {
  if (absl::StripAsciiWhitespace(if_none_match) == "*") {
    return true;
  }
  absl::string_view opaque = etag;
  absl::ConsumePrefix(&opaque, "W/");
  for (const absl::string_view tag : OpaqueTags(if_none_match)) {
    if (tag == opaque) {
      return true;
    }
  }
  return false;
}

void AddFeedCorsHeaders(HttpResponse& response) {
  response.headers.Set("Access-Control-Allow-Origin", "*");
  response.headers.Set("Access-Control-Expose-Headers", "ETag, Link");
}

HttpResponse MentionsPreflightResponse() {
  HttpResponse response = Answered(Answer::kFeedPreflight, {});
  AddFeedCorsHeaders(response);
  response.headers.Set("Access-Control-Allow-Methods", "GET, OPTIONS");
  response.headers.Set("Access-Control-Allow-Headers", "If-None-Match");
  response.headers.Set("Access-Control-Max-Age", "86400");
  return response;
}

void MentionsFeed::Handle(const http::HttpRequest& request, http::Respond respond) const {
  if (limits_.per_client != nullptr) {
    const std::string key = ClientKey(request.client_address, request.headers.Get("X-Forwarded-For"),
                                      limits_.trusted_proxies);
    const absl::Duration wait = limits_.per_client->Acquire(key, limits_.now());
    if (wait > absl::ZeroDuration()) {
      HttpResponse limited = RateLimitedResponse(wait, "address");
      AddFeedCorsHeaders(limited);
      respond(std::move(limited));
      return;
    }
  }
  absl::StatusOr<FeedQuery> query = ParseFeedQuery(request.query);
  if (!query.ok()) {
    HttpResponse bad =
        ErrorAnswer(Answer::kInvalidFeedQuery, {.description = query.status().message()});
    AddFeedCorsHeaders(bad);
    respond(std::move(bad));
    return;
  }
  std::optional<std::string> if_none_match;
  if (const auto header = request.headers.Get("If-None-Match")) {
    if_none_match = std::string(*header);
  }
  verifier_.ListMentions(
      request.request_id, ToListRequest(*query),
      [respond = std::move(respond), request_id = request.request_id,
       retry_after = retry_after_seconds_, query = *query, base = public_base_url_,
       if_none_match](absl::StatusOr<v1::ListMentionsResponse> result) {
        if (!result.ok()) {
          if (result.status().code() != absl::StatusCode::kInvalidArgument) {
            logging::Warn("request_id={} ListMentions failed: {}", request_id,
                          result.status().ToString());
          }
          HttpResponse failed = ResponseForStatus(result.status(), retry_after);
          AddFeedCorsHeaders(failed);
          respond(std::move(failed));
          return;
        }
        const std::string next = result->next_page_token().empty()
                                     ? std::string()
                                     : NextPageUrl(query, result->next_page_token());
        std::string body = RenderJf2Feed(*result, next, base);
        const std::string etag = StrongEtag(body);
        HttpResponse response;
        AddFeedCorsHeaders(response);
        response.headers.Set("ETag", etag);
        response.headers.Set("Cache-Control",
                             absl::StrCat("public, max-age=", kMentionsFeedMaxAgeSeconds));
        response.headers.Set("X-Content-Type-Options", "nosniff");
        if (!next.empty()) {
          response.headers.Set("Link", absl::StrCat("<", next, ">; rel=\"next\""));
        }
        if (if_none_match && IfNoneMatchMatches(*if_none_match, etag)) {
          respond(Answered(Answer::kFeedNotModified, std::move(response)));
          return;
        }
        response.headers.Set("Content-Type", kJf2FeedContentType);
        response.body = std::move(body);
        respond(Answered(Answer::kFeed, std::move(response)));
      });
}

}  // namespace portcullis::gateway
