#include "ingest-gateway/src/ingest_handler.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/json/object.hpp"
#include "common/crypto/base64.h"
#include "common/crypto/sha256.h"
#include "common/json/jcs.h"
#include "common/json/strict_parse.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;
using http::HttpRequest;
using http::HttpResponse;

constexpr char kSourceHeader[] = "X-Provenance-Source";

boost::json::string_view Json(absl::string_view s) { return {s.data(), s.size()}; }
absl::string_view View(const boost::json::string& s) { return {s.data(), s.size()}; }

HttpResponse SchemaViolation(absl::string_view field, absl::string_view description) {
  boost::json::object body;
  body["error"] = Json(RowFor(Answer::kSchemaViolation).code);
  body["field"] = Json(field);
  body["error_description"] = Json(description);
  return Answered(Answer::kSchemaViolation, http::JsonResponse(0, body));
}

// RFC 6901: "~" → "~0", "/" → "~1".
std::string PointerToken(absl::string_view name) {
  return absl::StrReplaceAll(name, {{"~", "~0"}, {"/", "~1"}});
}

// application/json or application/<anything>+json, with a UTF-8 charset when one is named.
bool IsJsonContentType(absl::string_view content_type) {
  std::vector<absl::string_view> parts = absl::StrSplit(content_type, ';');
  const absl::string_view media_type = absl::StripAsciiWhitespace(parts[0]);
  const bool json = absl::EqualsIgnoreCase(media_type, "application/json") ||
                    (absl::StartsWithIgnoreCase(media_type, "application/") &&
                     absl::EndsWithIgnoreCase(media_type, "+json"));
  if (!json) {
    return false;
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const absl::string_view parameter = absl::StripAsciiWhitespace(parts[i]);
    const size_t equals = parameter.find('=');
    if (equals == absl::string_view::npos) {
      continue;
    }
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(parameter.substr(0, equals)),
                               "charset")) {
      absl::string_view charset = absl::StripAsciiWhitespace(parameter.substr(equals + 1));
      absl::ConsumePrefix(&charset, "\"");
      absl::ConsumeSuffix(&charset, "\"");
      if (!absl::EqualsIgnoreCase(charset, "utf-8") && !absl::EqualsIgnoreCase(charset, "utf8")) {
        return false;
      }
    }
  }
  return true;
}

bool IsPublisherName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxPublisherBytes) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
           c == ':' || c == '-';
  });
}

// The values of every field named `name`.
std::vector<absl::string_view> HeaderValues(const http::HeaderMap& headers,
                                            absl::string_view name) {
  std::vector<absl::string_view> values;
  for (const auto& [field_name, value] : headers.fields()) {
    if (absl::EqualsIgnoreCase(field_name, name)) {
      values.push_back(value);
    }
  }
  return values;
}

// The Standard Webhooks fields of `headers` into `item` (kProvenanceHeaderAliases): each the one
// value its names carry, whitespace-trimmed; a 422 when a value is too long or a field has two
// different values.
std::optional<HttpResponse> ReadProvenanceHeaders(const http::HeaderMap& headers,
                                                  IngestItem* item) {
  std::string* const fields[] = {&item->signature, &item->message_id, &item->timestamp};
  static_assert(std::size(kProvenanceHeaderAliases) == std::size(fields));
  for (size_t i = 0; i < std::size(kProvenanceHeaderAliases); ++i) {
    const ProvenanceHeaderAliases& aliases = kProvenanceHeaderAliases[i];
    absl::string_view found_name;
    std::optional<absl::string_view> found;
    for (absl::string_view name : aliases.names) {
      for (absl::string_view raw : HeaderValues(headers, name)) {
        if (raw.size() > kMaxProvenanceHeaderBytes) {
          return SchemaViolation(name, absl::StrCat(name, " is longer than ",
                                                    kMaxProvenanceHeaderBytes, " bytes."));
        }
        const absl::string_view value = absl::StripAsciiWhitespace(raw);
        if (!found.has_value()) {
          found_name = name;
          found = value;
        } else if (*found != value) {
          return SchemaViolation(
              name, absl::StrCat("The webhook ", aliases.field, " is given twice with different "
                                 "values (", found_name, " and ", name, ")."));
        }
      }
    }
    *fields[i] = std::string(found.value_or(""));
  }
  return std::nullopt;
}

// X-Provenance-Source: exactly one, a publisher name (IsPublisherName) once trimmed.
std::optional<HttpResponse> ReadPublisher(const http::HeaderMap& headers, std::string* publisher) {
  const std::vector<absl::string_view> sources = HeaderValues(headers, kSourceHeader);
  if (sources.empty() || absl::StripAsciiWhitespace(sources.front()).empty()) {
    return SchemaViolation(kSourceHeader, "The X-Provenance-Source header names no publisher.");
  }
  if (sources.size() > 1) {
    return SchemaViolation(kSourceHeader, "X-Provenance-Source is sent more than once.");
  }
  *publisher = std::string(absl::StripAsciiWhitespace(sources.front()));
  if (!IsPublisherName(*publisher)) {
    return SchemaViolation(kSourceHeader,
                           absl::StrCat("X-Provenance-Source must be 1 to ", kMaxPublisherBytes,
                                        " characters of A-Z a-z 0-9 . _ : -"));
  }
  return std::nullopt;
}

// `media`: an array of at most kMaxMediaElements objects {"content_type", "data"}, the type
// image/jpeg or image/png, the data strict standard base64 of at most `max_element_bytes`.
std::optional<HttpResponse> ReadMedia(const boost::json::value& media, size_t max_element_bytes,
                                      IngestItem* item) {
  if (!media.is_array()) {
    return SchemaViolation("/media", "media must be an array of {content_type, data} objects.");
  }
  const boost::json::array& elements = media.as_array();
  if (elements.size() > kMaxMediaElements) {
    return SchemaViolation("/media",
                           absl::StrCat("media holds more than ", kMaxMediaElements, " elements."));
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string path = absl::StrCat("/media/", i);
    if (!elements[i].is_object()) {
      return SchemaViolation(path, "Every media element must be an object.");
    }
    const boost::json::object& element = elements[i].as_object();
    const boost::json::value* type = element.if_contains("content_type");
    if (type == nullptr || !type->is_string()) {
      return SchemaViolation(absl::StrCat(path, "/content_type"), "content_type must be a string.");
    }
    const absl::string_view content_type = View(type->as_string());
    if (content_type != "image/jpeg" && content_type != "image/png") {
      return SchemaViolation(absl::StrCat(path, "/content_type"),
                             "content_type must be image/jpeg or image/png.");
    }
    const boost::json::value* data = element.if_contains("data");
    if (data == nullptr || !data->is_string()) {
      return SchemaViolation(absl::StrCat(path, "/data"), "data must be a base64 string.");
    }
    const absl::string_view encoded = View(data->as_string());
    // Checked before decoding: 4 characters carry 3 bytes.
    if (encoded.size() / 4 * 3 > max_element_bytes + 2) {
      return SchemaViolation(
          absl::StrCat(path, "/data"),
          absl::StrCat("data decodes to more than ", max_element_bytes, " bytes."));
    }
    absl::StatusOr<std::string> decoded = crypto::DecodeBase64Strict(encoded);
    if (!decoded.ok()) {
      return SchemaViolation(absl::StrCat(path, "/data"),
                             "data must be standard base64 (RFC 4648), padded, no whitespace.");
    }
    if (decoded->empty() || decoded->size() > max_element_bytes) {
      return SchemaViolation(
          absl::StrCat(path, "/data"),
          absl::StrCat("data must decode to 1 to ", max_element_bytes, " bytes."));
    }
    item->media.push_back({std::string(content_type), *std::move(decoded)});
  }
  return std::nullopt;
}

// Checks the known members of the item object; fills `item`.
std::optional<HttpResponse> ReadKnownMembers(const boost::json::object& object,
                                             size_t max_media_element_bytes, IngestItem* item) {
  const boost::json::value* id = object.if_contains("id");
  if (id == nullptr) {
    return SchemaViolation("/id", "The item has no id.");
  }
  if (!id->is_string()) {
    return SchemaViolation("/id", "The item id must be a string.");
  }
  if (id->as_string().empty()) {
    return SchemaViolation("/id", "The item id must not be empty.");
  }
  if (id->as_string().size() > kMaxItemIdBytes) {
    return SchemaViolation("/id",
                           absl::StrCat("The item id is longer than ", kMaxItemIdBytes, " bytes."));
  }
  item->item_id = std::string(View(id->as_string()));
  if (item->item_id.find('\0') != std::string::npos) {
    return SchemaViolation("/id", "The item id must not contain U+0000.");
  }

  if (const boost::json::value* content = object.if_contains("content");
      content != nullptr && !content->is_string()) {
    return SchemaViolation("/content", "content must be a string.");
  }
  if (const boost::json::value* synthetic = object.if_contains("is_synthetic")) {
    if (!synthetic->is_bool()) {
      return SchemaViolation("/is_synthetic", "is_synthetic must be true or false.");
    }
    item->is_synthetic = synthetic->as_bool();
  }
  if (const boost::json::value* metadata = object.if_contains("metadata")) {
    if (!metadata->is_object()) {
      return SchemaViolation("/metadata", "metadata must be an object of strings.");
    }
    for (const auto& member : metadata->as_object()) {
      if (!member.value().is_string()) {
        return SchemaViolation(
            absl::StrCat("/metadata/", PointerToken(absl::string_view(member.key().data(),
                                                                      member.key().size()))),
            "Every metadata value must be a string.");
      }
    }
  }
  if (const boost::json::value* type = object.if_contains("digital_source_type")) {
    if (!type->is_string()) {
      return SchemaViolation("/digital_source_type", "digital_source_type must be a string.");
    }
    item->digital_source_type = std::string(View(type->as_string()));
    if (item->digital_source_type.size() > kMaxDigitalSourceTypeBytes ||
        item->digital_source_type.find('\0') != std::string::npos) {
      return SchemaViolation("/digital_source_type",
                             absl::StrCat("digital_source_type must be at most ",
                                          kMaxDigitalSourceTypeBytes,
                                          " bytes, without U+0000."));
    }
  }
  if (const boost::json::value* media = object.if_contains("media")) {
    return ReadMedia(*media, max_media_element_bytes, item);
  }
  return std::nullopt;
}

// A decision: {"status": <the row's word>, "item_id", "content_hash"[, "reason"]} with the row's
// status and X-Ingest-Action.
HttpResponse Decision(Answer answer, absl::string_view item_id,
                      const crypto::Sha256Digest& content_hash,
                      std::optional<absl::string_view> reason = std::nullopt) {
  boost::json::object body;
  body["status"] = Json(RowFor(answer).code);
  body["item_id"] = Json(item_id);
  body["content_hash"] = Json(crypto::ToHex(content_hash));
  if (reason.has_value()) {
    body["reason"] = Json(*reason);
  }
  return Answered(answer, http::JsonResponse(0, body), {.ingest = true});
}

// The one error shape, plus the item's id and hash (the item was read; only its decision
// failed). Rows with Retry-After carry X-Ingest-Action: retry.
HttpResponse ItemError(Answer answer, const IngestItem& item, int retry_after_seconds) {
  const AnswerRow& row = RowFor(answer);
  boost::json::object body;
  body["error"] = Json(row.code);
  body["error_description"] = Json(row.description);
  body["item_id"] = Json(item.item_id);
  body["content_hash"] = Json(crypto::ToHex(item.content_hash));
  return Answered(answer, http::JsonResponse(0, body),
                  {.retry_after_seconds = std::max(1, retry_after_seconds), .ingest = true});
}

// The body within the cap (413) and a JSON Content-Type (415).
std::optional<HttpResponse> CheckFraming(const HttpRequest& request, uint64_t max_body_bytes) {
  if (request.body.size() > max_body_bytes) {
    return ErrorAnswer(Answer::kItemTooLarge);
  }
  const std::optional<absl::string_view> content_type = request.headers.Get("Content-Type");
  if (!content_type || !IsJsonContentType(*content_type)) {
    return ErrorAnswer(Answer::kUnsupportedMediaType);
  }
  return std::nullopt;
}

}  // namespace

std::variant<IngestItem, HttpResponse> ReadIngestItem(const HttpRequest& request,
                                                      uint64_t max_body_bytes,
                                                      size_t max_media_element_bytes) {
  if (std::optional<HttpResponse> refusal = CheckFraming(request, max_body_bytes)) {
    return *std::move(refusal);
  }
  json::ParseOptions parse_options;
  parse_options.max_bytes = max_body_bytes;
  absl::StatusOr<boost::json::value> document = json::ParseStrict(request.body, parse_options);
  if (!document.ok()) {
    const std::optional<json::ParseErrorKind> kind = json::ParseErrorKindOf(document.status());
    if (kind == json::ParseErrorKind::kTooLarge) {
      return ErrorAnswer(Answer::kItemTooLarge);
    }
    if (!kind.has_value() || json::IsMalformed(*kind)) {
      const std::string description =
          absl::StrCat("The body is not UTF-8 JSON: ", document.status().message());
      return ErrorAnswer(Answer::kMalformedJson, {.description = description});
    }
    return SchemaViolation(json::ParseErrorPathOf(document.status()).value_or(""),
                           document.status().message());
  }

  IngestItem item;
  if (std::optional<HttpResponse> violation = ReadPublisher(request.headers, &item.publisher)) {
    return *std::move(violation);
  }

  if (!document->is_object()) {
    return SchemaViolation("", "The item must be a JSON object.");
  }
  if (std::optional<HttpResponse> violation =
          ReadKnownMembers(document->as_object(), max_media_element_bytes, &item)) {
    return *std::move(violation);
  }
  if (std::optional<HttpResponse> violation = ReadProvenanceHeaders(request.headers, &item)) {
    return *std::move(violation);
  }
  absl::StatusOr<std::string> canonical = json::Canonicalize(*document);
  if (!canonical.ok()) {
    // Cannot happen for a ParseStrict document; answer as for any other bad body.
    return SchemaViolation("", canonical.status().message());
  }
  if (canonical->size() > kMaxCanonicalBodyBytes) {
    const std::string description = absl::StrCat(
        "The item's canonical (RFC 8785) form is larger than ", kMaxCanonicalBodyBytes, " bytes.");
    return ErrorAnswer(Answer::kCanonicalTooLarge, {.description = description});
  }
  item.content_hash = json::ContentHash(*canonical);
  item.canonical_body = *std::move(canonical);
  return item;
}

v1::EvaluateIngestRequest EvaluateRequestFor(const HttpRequest& request, const IngestItem& item) {
  v1::EvaluateIngestRequest evaluate;
  evaluate.set_publisher(item.publisher);
  v1::ProvenanceHeaders* provenance = evaluate.mutable_provenance();
  provenance->set_signature(item.signature);
  provenance->set_message_id(item.message_id);
  provenance->set_timestamp(item.timestamp);
  evaluate.set_raw_body(request.body);
  evaluate.set_item_id(item.item_id);
  evaluate.set_content_hash(crypto::ToHex(item.content_hash));
  if (item.is_synthetic.has_value()) {
    evaluate.set_is_synthetic(*item.is_synthetic);
  }
  evaluate.set_digital_source_type(item.digital_source_type);
  evaluate.set_canonical_body(item.canonical_body);
  for (const IngestMediaElement& element : item.media) {
    v1::IngestMedia* media = evaluate.add_media();
    media->set_content_type(element.content_type);
    media->set_data(element.data);
  }
  return evaluate;
}

HttpResponse IngestResponseFor(const absl::StatusOr<v1::EvaluateIngestResponse>& result,
                               const IngestItem& item, int retry_after_seconds) {
  if (!result.ok()) {
    return ItemError(VerifierFailure(result.status().code()), item, retry_after_seconds);
  }
  const std::string& item_id = result->item_id().empty() ? item.item_id : result->item_id();
  switch (result->decision()) {
    case v1::INGEST_DECISION_ACCEPTED:
      return Decision(Answer::kIngestAccepted, item_id, item.content_hash);
    case v1::INGEST_DECISION_DROPPED:
      return Decision(Answer::kIngestDropped, item_id, item.content_hash,
                      result->reason().empty() ? "unverified_synthetic_content"
                                               : absl::string_view(result->reason()));
    case v1::INGEST_DECISION_DUPLICATE:
      return Decision(Answer::kIngestDuplicate, item_id, item.content_hash, result->reason());
    case v1::INGEST_DECISION_QUARANTINED:
      return Decision(Answer::kIngestQuarantined, item_id, item.content_hash, result->reason());
    case v1::INGEST_DECISION_UNKNOWN_PUBLISHER:
      return ItemError(Answer::kUnknownPublisher, item, retry_after_seconds);
    default:
      return ItemError(Answer::kVerifierInternal, item, retry_after_seconds);
  }
}

int JitteredRetryAfter(int base) {
  base = std::max(base, 1);
  const int spread = std::max(1, base / 2);
  thread_local absl::BitGen random;
  return std::max(1, absl::Uniform<int>(absl::IntervalClosedClosed, random, base - spread,
                                        base + spread));
}

AcceptedDecisionCache::AcceptedDecisionCache(absl::Duration ttl, size_t max_entries,
                                             std::function<absl::Time()> clock)
    : ttl_(ttl), max_entries_(std::max<size_t>(1, max_entries)), clock_(std::move(clock)) {}

namespace {
// The headers of a delivery that ReadIngestItem would take whatever its body: the body within the
// cap, a JSON Content-Type, one publisher, the provenance headers. The publisher, or nothing.
std::optional<std::string> PublisherOfAcceptableHeaders(const HttpRequest& request,
                                                        uint64_t max_body_bytes) {
  IngestItem item;
  if (CheckFraming(request, max_body_bytes) || ReadPublisher(request.headers, &item.publisher) ||
      ReadProvenanceHeaders(request.headers, &item)) {
    return std::nullopt;
  }
  return std::move(item.publisher);
}

// What the verifier answers for a repeat of an accepted item.
HttpResponse RepeatOfAccepted(const AcceptedDecisionCache::Accepted& accepted) {
  return Decision(Answer::kIngestDuplicate, accepted.item_id, accepted.content_hash, "accepted");
}
}  // namespace

std::optional<AcceptedDecisionCache::Accepted> AcceptedDecisionCache::Find(
    absl::string_view publisher, const crypto::Sha256Digest& hash) {
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  const auto of_publisher = by_publisher_.find(publisher);
  if (of_publisher == by_publisher_.end()) {
    return std::nullopt;
  }
  const auto it = of_publisher->second.find(hash);
  if (it == of_publisher->second.end()) {
    return std::nullopt;
  }
  if (now < it->second.remembered_at || now - it->second.remembered_at >= ttl_) {
    of_publisher->second.erase(it);
    --entries_;
    return std::nullopt;
  }
  return it->second.accepted;
}

void AcceptedDecisionCache::Remember(absl::string_view publisher, const crypto::Sha256Digest& hash,
                                     const Accepted& accepted) {
  Entry entry{accepted, clock_()};
  absl::MutexLock lock(&mu_);
  if (entries_ >= max_entries_) {
    by_publisher_.clear();
    entries_ = 0;
  }
  const auto [it, inserted] =
      by_publisher_[publisher].insert_or_assign(hash, std::move(entry));
  if (inserted) {
    ++entries_;
  }
}

IngestHandler::IngestHandler(VerifierClient& verifier, Options options)
    : verifier_(verifier), options_([&] {
        if (!options.retry_after) {
          options.retry_after = [base = options.retry_after_seconds] {
            return JitteredRetryAfter(base);
          };
        }
        return std::move(options);
      }()) {
  if (options_.accepted_duplicate_ttl > absl::ZeroDuration()) {
    accepted_ = std::make_shared<AcceptedDecisionCache>(options_.accepted_duplicate_ttl,
                                                        options_.accepted_duplicate_max_entries,
                                                        options_.clock);
  }
}

void IngestHandler::Handle(const HttpRequest& request, http::Respond respond) const {
  // A byte-identical retry of an accepted delivery (what brokers send) is answered before its
  // body is parsed and canonicalized (two fifths of the gateway's work per item): the same bytes
  // and headers ReadIngestItem takes give the same item, so the answer is the one below for its
  // content hash.
  std::optional<crypto::Sha256Digest> delivered_hash;
  if (accepted_ != nullptr) {
    if (const std::optional<std::string> publisher =
            PublisherOfAcceptableHeaders(request, options_.max_body_bytes)) {
      delivered_hash = crypto::Sha256(request.body);
      if (const auto original = accepted_->Find(*publisher, *delivered_hash)) {
        respond(RepeatOfAccepted(*original));
        return;
      }
    }
  }
  std::variant<IngestItem, HttpResponse> read =
      ReadIngestItem(request, options_.max_body_bytes,
                     std::min(options_.max_media_element_bytes, kMaxMediaElementBytes));
  if (HttpResponse* refusal = std::get_if<HttpResponse>(&read)) {
    respond(std::move(*refusal));
    return;
  }
  IngestItem item = std::get<IngestItem>(std::move(read));
  if (accepted_ != nullptr) {
    if (const auto original = accepted_->Find(item.publisher, item.content_hash)) {
      respond(RepeatOfAccepted(*original));
      return;
    }
  }
  const v1::EvaluateIngestRequest evaluate = EvaluateRequestFor(request, item);
  verifier_.EvaluateIngest(
      request.request_id, evaluate,
      [respond = std::move(respond), item = std::move(item), request_id = request.request_id,
       retry_after = options_.retry_after, accepted = accepted_,
       delivered_hash = std::move(delivered_hash)](
          absl::StatusOr<v1::EvaluateIngestResponse> result) {
        if (!result.ok()) {
          logging::Warn("request_id={} EvaluateIngest failed: {}", request_id,
                        result.status().ToString());
        } else {
          logging::Debug("request_id={} ingest publisher={} decision={} reason={}", request_id,
                        item.publisher, v1::IngestDecision_Name(result->decision()),
                        result->reason());
        }
        if (accepted != nullptr && result.ok() &&
            (result->decision() == v1::INGEST_DECISION_ACCEPTED ||
             (result->decision() == v1::INGEST_DECISION_DUPLICATE &&
              result->reason() == "accepted"))) {
          const AcceptedDecisionCache::Accepted remembered{
              result->item_id().empty() ? item.item_id : result->item_id(), item.content_hash};
          accepted->Remember(item.publisher, remembered.content_hash, remembered);
          if (delivered_hash.has_value() && *delivered_hash != remembered.content_hash) {
            accepted->Remember(item.publisher, *delivered_hash, remembered);
          }
        }
        const bool retryable =
            !result.ok() && (RowFor(VerifierFailure(result.status().code())).headers & kRetryAfter);
        respond(IngestResponseFor(result, item, retryable ? retry_after() : 0));
      });
}

}  // namespace portcullis::gateway
