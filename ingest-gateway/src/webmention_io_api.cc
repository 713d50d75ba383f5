#include "ingest-gateway/src/webmention_io_api.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/json/array.hpp"
#include "boost/json/serialize.hpp"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/form_decoding.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;
using http::HttpResponse;

// Longest accepted parameter values.
constexpr size_t kMaxApiTargetBytes = 2048;
constexpr size_t kMaxApiDomainBytes = 253;
constexpr size_t kMaxApiTokenBytes = 256;
constexpr size_t kMaxApiCursorBytes = 64;
constexpr size_t kMaxApiSinceBytes = 64;

absl::Status ApiInvalid(absl::string_view sentence) {
  return absl::InvalidArgumentError(sentence);
}

bool ApiHasControlOrSpace(absl::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

// The parsed query string, with the rule every parameter shares: given at most once (the `[]`
// forms excepted), within its size.
class ApiParams {
 public:
  static absl::StatusOr<ApiParams> Decode(absl::string_view query) {
    absl::StatusOr<std::vector<FormField>> fields = DecodeForm(query);
    if (!fields.ok()) {
      return ApiInvalid("The query string is not validly encoded.");
    }
    return ApiParams(*std::move(fields));
  }

  // The value of `name`; nullopt when absent or empty; an error when given twice or too long.
  absl::StatusOr<std::optional<std::string>> Single(absl::string_view name, size_t max_bytes) const {
    const std::vector<absl::string_view> values = FieldValues(fields_, name);
    if (values.size() > 1) {
      return ApiInvalid(absl::StrCat("The ", name, " parameter is given more than once."));
    }
    if (values.empty() || values.front().empty()) {
      return std::optional<std::string>();
    }
    if (values.front().size() > max_bytes || ApiHasControlOrSpace(values.front())) {
      return ApiInvalid(absl::StrCat("The ", name, " parameter is too long or not valid."));
    }
    return std::optional<std::string>(std::string(values.front()));
  }

  // Every value of `name` and `name[]`, at most `max_count`, each within `max_bytes`.
  absl::StatusOr<std::vector<std::string>> Many(absl::string_view name, int max_count,
                                                size_t max_bytes) const {
    std::vector<std::string> values;
    for (const std::string& key : {std::string(name), absl::StrCat(name, "[]")}) {
      for (const absl::string_view value : FieldValues(fields_, key)) {
        if (value.empty()) {
          continue;
        }
        if (value.size() > max_bytes || ApiHasControlOrSpace(value)) {
          return ApiInvalid(absl::StrCat("Each ", name, " must be at most ", max_bytes,
                                         " bytes, without spaces."));
        }
        values.emplace_back(value);
      }
    }
    if (static_cast<int>(values.size()) > max_count) {
      return ApiInvalid(absl::StrCat("At most ", max_count, " ", name, " values."));
    }
    return values;
  }

  // An integer parameter from `min` to `max`; `fallback` when absent.
  absl::StatusOr<int64_t> Number(absl::string_view name, int64_t min, int64_t max,
                                 int64_t fallback) const {
    absl::StatusOr<std::optional<std::string>> text = Single(name, 20);
    if (!text.ok()) {
      return text.status();
    }
    if (!text->has_value()) {
      return fallback;
    }
    int64_t value = 0;
    if (!absl::SimpleAtoi(**text, &value) || value < min || value > max) {
      return ApiInvalid(absl::StrCat("The ", name, " parameter must be a number from ", min,
                                     " to ", max, "."));
    }
    return value;
  }

 private:
  explicit ApiParams(std::vector<FormField> fields) : fields_(std::move(fields)) {}
  std::vector<FormField> fields_;
};

struct PropertyRow {
  const char* property;
  v1::MentionType type;
};
// webmention.io's wm-property values and the types they name.
constexpr PropertyRow kProperties[] = {
    {"in-reply-to", v1::MENTION_TYPE_REPLY},   {"like-of", v1::MENTION_TYPE_LIKE},
    {"repost-of", v1::MENTION_TYPE_REPOST},    {"bookmark-of", v1::MENTION_TYPE_BOOKMARK},
    {"mention-of", v1::MENTION_TYPE_MENTION},  {"rsvp", v1::MENTION_TYPE_RSVP},
};

boost::json::string_view ApiJson(absl::string_view s) { return {s.data(), s.size()}; }

// The answer of a validated query: CORS, ETag, Cache-Control; 304 on a matching If-None-Match.
HttpResponse ApiJsonAnswer(std::string body, const std::optional<std::string>& if_none_match,
                           int max_age_seconds) {
  const std::string etag = StrongEtag(body);
  HttpResponse response;
  AddFeedCorsHeaders(response);
  response.headers.Set("ETag", etag);
  response.headers.Set("Cache-Control", absl::StrCat("public, max-age=", max_age_seconds));
  response.headers.Set("X-Content-Type-Options", "nosniff");
  if (if_none_match && IfNoneMatchMatches(*if_none_match, etag)) {
    return Answered(Answer::kFeedNotModified, std::move(response));
  }
  response.headers.Set("Content-Type", "application/json");
  response.body = std::move(body);
  return Answered(Answer::kFeed, std::move(response));
}

std::optional<std::string> IfNoneMatchOf(const http::HttpRequest& request) {
  if (const auto header = request.headers.Get("If-None-Match")) {
    return std::string(*header);
  }
  return std::nullopt;
}

HttpResponse ApiBadQuery(const absl::Status& status) {
  HttpResponse bad = ErrorAnswer(Answer::kInvalidFeedQuery, {.description = status.message()});
  AddFeedCorsHeaders(bad);
  return bad;
}

// Answers a verifier call: its failure through the one mapping, its result rendered.
template <typename Response, typename Render>
auto ApiAnswerWith(http::Respond respond, std::string request_id, int retry_after,
                   std::optional<std::string> if_none_match, int max_age, Render render) {
  return [respond = std::move(respond), request_id = std::move(request_id), retry_after,
          if_none_match = std::move(if_none_match), max_age,
          render = std::move(render)](absl::StatusOr<Response> result) {
    if (!result.ok()) {
      if (result.status().code() != absl::StatusCode::kInvalidArgument) {
        logging::Warn("request_id={} webmention.io API call failed: {}", request_id,
                      result.status().ToString());
      }
      HttpResponse failed = ResponseForStatus(result.status(), retry_after);
      AddFeedCorsHeaders(failed);
      respond(std::move(failed));
      return;
    }
    respond(ApiJsonAnswer(render(*result), if_none_match, max_age));
  };
}

}  // namespace

std::optional<absl::Time> ParseSinceTime(absl::string_view text) {
  const std::string input(text);
  absl::Time time;
  std::string error;
  for (const char* format : {"%Y-%m-%dT%H:%M:%E*S%Ez", "%Y-%m-%dT%H:%M:%E*S%z",
                             "%Y-%m-%dT%H:%M:%E*SZ", "%Y-%m-%d"}) {
    if (absl::ParseTime(format, input, absl::UTCTimeZone(), &time, &error)) {
      return time;
    }
  }
  return std::nullopt;
}

absl::StatusOr<v1::ListPublicMentionsRequest> ParseApiMentionsQuery(absl::string_view query) {
  absl::StatusOr<ApiParams> params = ApiParams::Decode(query);
  if (!params.ok()) {
    return params.status();
  }
  v1::ListPublicMentionsRequest request;
  absl::StatusOr<std::vector<std::string>> targets =
      params->Many("target", kMaxApiTargets, kMaxApiTargetBytes);
  absl::StatusOr<std::optional<std::string>> domain = params->Single("domain", kMaxApiDomainBytes);
  absl::StatusOr<std::optional<std::string>> token = params->Single("token", kMaxApiTokenBytes);
  absl::StatusOr<std::optional<std::string>> sort_by = params->Single("sort-by", 16);
  absl::StatusOr<std::optional<std::string>> sort_dir = params->Single("sort-dir", 16);
  absl::StatusOr<std::optional<std::string>> since = params->Single("since", kMaxApiSinceBytes);
  absl::StatusOr<std::vector<std::string>> properties =
      params->Many("wm-property", static_cast<int>(std::size(kProperties)), 16);
  // Clients written for webmention.io often ask for everything at once (per-page=1000 or more):
  // they get pages of kMaxApiPageSize instead of a refusal.
  absl::StatusOr<int64_t> per_page =
      params->Number("per-page", 1, INT32_MAX, kDefaultApiPageSize);
  if (per_page.ok()) {
    *per_page = std::min<int64_t>(*per_page, kMaxApiPageSize);
  }
  absl::StatusOr<int64_t> since_id = params->Number("since_id", 0, INT64_MAX, 0);
  for (const absl::Status& status :
       {targets.status(), domain.status(), token.status(), sort_by.status(), sort_dir.status(),
        since.status(), properties.status(), per_page.status(), since_id.status()}) {
    if (!status.ok()) {
      return status;
    }
  }
  // The deepest page the verifier reads (page * per-page at most 50000).
  absl::StatusOr<int64_t> page = params->Number("page", 0, 50000 / *per_page, 0);
  if (!page.ok()) {
    return page.status();
  }
  if (targets->empty() == !domain->has_value()) {
    return ApiInvalid("Give a target (or target[]) or a domain, not both.");
  }
  if (domain->has_value()) {
    request.set_domain(**domain);
  }
  for (std::string& target : *targets) {
    request.add_targets(std::move(target));
  }
  // webmention.js asks for sort-by=published: served in received order, which is the order
  // mentions are published in but for late senders (the entry's own `published` is free text).
  if (sort_by->has_value()) {
    if (**sort_by == "updated") {
      request.set_order(v1::PUBLIC_MENTION_ORDER_UPDATED);
    } else if (**sort_by != "created" && **sort_by != "published") {
      return ApiInvalid("The sort-by parameter must be created, published or updated.");
    }
  }
  if (sort_dir->has_value()) {
    if (**sort_dir == "up") {
      request.set_ascending(true);
    } else if (**sort_dir != "down") {
      return ApiInvalid("The sort-dir parameter must be up or down.");
    }
  }
  for (const std::string& property : *properties) {
    bool known = false;
    for (const PropertyRow& row : kProperties) {
      if (property == row.property) {
        request.add_types(row.type);
        known = true;
      }
    }
    if (!known) {
      return ApiInvalid(
          "The wm-property parameter must be in-reply-to, like-of, repost-of, bookmark-of, "
          "mention-of or rsvp.");
    }
  }
  if (since->has_value()) {
    const std::optional<absl::Time> time = ParseSinceTime(**since);
    if (!time) {
      return ApiInvalid("The since parameter must be an ISO 8601 time, e.g. 2024-01-31T12:00:00Z.");
    }
    request.mutable_since()->set_seconds(absl::ToUnixSeconds(*time));
  }
  request.set_since_id(*since_id);
  request.set_page_size(static_cast<int>(*per_page));
  request.set_page(static_cast<int>(*page));
  return request;
}

absl::StatusOr<v1::CountPublicMentionsRequest> ParseApiCountQuery(absl::string_view query) {
  absl::StatusOr<ApiParams> params = ApiParams::Decode(query);
  if (!params.ok()) {
    return params.status();
  }
  absl::StatusOr<std::vector<std::string>> targets =
      params->Many("target", kMaxApiTargets, kMaxApiTargetBytes);
  if (!targets.ok()) {
    return targets.status();
  }
  if (targets->empty()) {
    return ApiInvalid("Give a target (or target[]).");
  }
  v1::CountPublicMentionsRequest request;
  for (std::string& target : *targets) {
    request.add_targets(std::move(target));
  }
  return request;
}

absl::StatusOr<v1::ListMentionChangesRequest> ParseApiChangesQuery(absl::string_view query) {
  absl::StatusOr<ApiParams> params = ApiParams::Decode(query);
  if (!params.ok()) {
    return params.status();
  }
  absl::StatusOr<std::optional<std::string>> domain = params->Single("domain", kMaxApiDomainBytes);
  absl::StatusOr<std::optional<std::string>> after = params->Single("after", kMaxApiCursorBytes);
  absl::StatusOr<int64_t> limit = params->Number("limit", 1, kMaxApiChanges, kDefaultApiChanges);
  for (const absl::Status& status : {domain.status(), after.status(), limit.status()}) {
    if (!status.ok()) {
      return status;
    }
  }
  if (!domain->has_value()) {
    return ApiInvalid("Give the domain parameter.");
  }
  v1::ListMentionChangesRequest request;
  request.set_domain(**domain);
  request.set_after(after->value_or(""));
  request.set_limit(static_cast<int>(*limit));
  return request;
}

boost::json::object ApiJf2Entry(const v1::Mention& mention, absl::string_view public_base_url) {
  boost::json::object entry = Jf2Entry(mention, public_base_url);
  // webmention.io's card always has its three fields.
  boost::json::object author;
  author["type"] = "card";
  if (const auto* found = entry.if_contains("author")) {
    author = found->as_object();
  }
  for (const char* field : {"name", "photo", "url"}) {
    if (!author.contains(field)) {
      author[field] = "";
    }
  }
  entry["author"] = std::move(author);
  entry["wm-id"] = mention.wm_id();
  entry["wm-protocol"] = "webmention";
  entry["wm-private"] = false;
  const absl::string_view property = WmProperty(mention.type());
  if (property != "rsvp") {
    entry[ApiJson(property)] = ApiJson(mention.target());
  } else {
    entry["in-reply-to"] = ApiJson(mention.target());
  }
  return entry;
}

std::string RenderApiMentions(const v1::ListPublicMentionsResponse& page,
                              absl::string_view public_base_url) {
  boost::json::object feed;
  feed["type"] = "feed";
  feed["name"] = "Webmentions";
  boost::json::array children;
  for (const v1::Mention& mention : page.mentions()) {
    // The verifier reads the public's mentions only; nothing else is ever served.
    if (mention.state() == v1::MENTION_STATE_VERIFIED) {
      children.emplace_back(ApiJf2Entry(mention, public_base_url));
    }
  }
  feed["children"] = std::move(children);
  return boost::json::serialize(feed);
}

std::string RenderApiCount(const v1::CountPublicMentionsResponse& counts) {
  boost::json::object by_type;
  by_type["like"] = counts.likes();
  by_type["mention"] = counts.mentions();
  by_type["reply"] = counts.replies();
  by_type["repost"] = counts.reposts();
  by_type["bookmark"] = counts.bookmarks();
  by_type["rsvp"] = counts.rsvps();
  boost::json::object body;
  body["count"] = counts.count();
  body["type"] = std::move(by_type);
  return boost::json::serialize(body);
}

std::string RenderApiChanges(const v1::ListMentionChangesResponse& page,
                             absl::string_view public_base_url) {
  boost::json::array children;
  for (const v1::MentionChange& change : page.changes()) {
    if (change.deleted() || change.mention().state() != v1::MENTION_STATE_VERIFIED) {
      boost::json::object gone;
      gone["wm-id"] = change.wm_id();
      gone["deleted"] = true;
      children.emplace_back(std::move(gone));
    } else {
      children.emplace_back(ApiJf2Entry(change.mention(), public_base_url));
    }
  }
  boost::json::object body;
  body["children"] = std::move(children);
  body["next"] = ApiJson(page.next_cursor());
  return boost::json::serialize(body);
}

bool WebmentionIoApi::Admit(const http::HttpRequest& request, http::Respond& respond) const {
  if (limits_.per_client == nullptr) {
    return true;
  }
  const std::string key = ClientKey(request.client_address, request.headers.Get("X-Forwarded-For"),
                                    limits_.trusted_proxies);
  const absl::Duration wait = limits_.per_client->Acquire(key, limits_.now());
  if (wait <= absl::ZeroDuration()) {
    return true;
  }
  HttpResponse limited = RateLimitedResponse(wait, "address");
  AddFeedCorsHeaders(limited);
  respond(std::move(limited));
  return false;
}

void WebmentionIoApi::Mentions(const http::HttpRequest& request, http::Respond respond) const {
  if (!Admit(request, respond)) {
    return;
  }
  absl::StatusOr<v1::ListPublicMentionsRequest> query = ParseApiMentionsQuery(request.query);
  if (!query.ok()) {
    respond(ApiBadQuery(query.status()));
    return;
  }
  verifier_.ListPublicMentions(
      request.request_id, *query,
      ApiAnswerWith<v1::ListPublicMentionsResponse>(
          std::move(respond), std::string(request.request_id), retry_after_seconds_,
          IfNoneMatchOf(request), kMentionsFeedMaxAgeSeconds,
          [base = public_base_url_](const v1::ListPublicMentionsResponse& page) {
            return RenderApiMentions(page, base);
          }));
}

void WebmentionIoApi::Count(const http::HttpRequest& request, http::Respond respond) const {
  if (!Admit(request, respond)) {
    return;
  }
  absl::StatusOr<v1::CountPublicMentionsRequest> query = ParseApiCountQuery(request.query);
  if (!query.ok()) {
    respond(ApiBadQuery(query.status()));
    return;
  }
  verifier_.CountPublicMentions(
      request.request_id, *query,
      ApiAnswerWith<v1::CountPublicMentionsResponse>(
          std::move(respond), std::string(request.request_id), retry_after_seconds_,
          IfNoneMatchOf(request), kApiCountMaxAgeSeconds,
          [](const v1::CountPublicMentionsResponse& counts) { return RenderApiCount(counts); }));
}

void WebmentionIoApi::Changes(const http::HttpRequest& request, http::Respond respond) const {
  if (!Admit(request, respond)) {
    return;
  }
  absl::StatusOr<v1::ListMentionChangesRequest> query = ParseApiChangesQuery(request.query);
  if (!query.ok()) {
    respond(ApiBadQuery(query.status()));
    return;
  }
  // A follower polls for news: never served from a cache.
  verifier_.ListMentionChanges(
      request.request_id, *query,
      ApiAnswerWith<v1::ListMentionChangesResponse>(
          std::move(respond), std::string(request.request_id), retry_after_seconds_,
          IfNoneMatchOf(request), 0,
          [base = public_base_url_](const v1::ListMentionChangesResponse& page) {
            return RenderApiChanges(page, base);
          }));
}

}  // namespace portcullis::gateway
