#include "ingest-gateway/src/http/http_message.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "boost/json/object.hpp"
#include "boost/json/serialize.hpp"

namespace portcullis::gateway::http {

namespace {
// Room for a typical request's or response's fields at the first Add.
constexpr size_t kInitialBytes = 512;
constexpr size_t kInitialFields = 8;
}  // namespace

void HeaderMap::Add(absl::string_view name, absl::string_view value) {
  if (spans_.empty()) {
    bytes_.reserve(kInitialBytes);
    spans_.reserve(kInitialFields);
  }
  Span span;
  span.name_at = static_cast<uint32_t>(bytes_.size());
  span.name_size = static_cast<uint32_t>(name.size());
  bytes_.append(name.data(), name.size());
  span.value_at = static_cast<uint32_t>(bytes_.size());
  span.value_size = static_cast<uint32_t>(value.size());
  bytes_.append(value.data(), value.size());
  spans_.push_back(span);
}

HeaderMap::Field HeaderMap::FieldAt(size_t index) const {
  const Span& span = spans_[index];
  const absl::string_view bytes(bytes_);
  return {bytes.substr(span.name_at, span.name_size), bytes.substr(span.value_at, span.value_size)};
}

void HeaderMap::Set(absl::string_view name, absl::string_view value) {
  // The removed fields' bytes stay in the buffer until the map goes.
  std::erase_if(spans_, [&](const Span& span) {
    return absl::EqualsIgnoreCase(absl::string_view(bytes_).substr(span.name_at, span.name_size),
                                  name);
  });
  Add(name, value);
}

std::optional<absl::string_view> HeaderMap::Get(absl::string_view name) const {
  for (const Field field : fields()) {
    if (absl::EqualsIgnoreCase(field.name, name)) {
      return field.value;
    }
  }
  return std::nullopt;
}

HttpResponse JsonResponse(int status, const boost::json::value& value) {
  HttpResponse response;
  response.status = status;
  response.headers.Set("Content-Type", kJsonContentType);
  response.body = boost::json::serialize(value);
  return response;
}

HttpResponse JsonError(int status, absl::string_view error, absl::string_view description) {
  boost::json::object body;
  body["error"] = boost::json::string_view(error.data(), error.size());
  body["error_description"] = boost::json::string_view(description.data(), description.size());
  return JsonResponse(status, body);
}

bool IsAcceptableRequestId(absl::string_view id) {
  if (id.empty() || id.size() > 64) {
    return false;
  }
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace portcullis::gateway::http
