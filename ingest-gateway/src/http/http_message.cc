#include "ingest-gateway/src/http/http_message.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "boost/json/object.hpp"
#include "boost/json/serialize.hpp"

namespace portcullis::gateway::http {

void HeaderMap::Add(absl::string_view name, absl::string_view value) {
  fields_.emplace_back(std::string(name), std::string(value));
}

void HeaderMap::Set(absl::string_view name, absl::string_view value) {
  std::erase_if(fields_,
                [&](const auto& field) { return absl::EqualsIgnoreCase(field.first, name); });
  Add(name, value);
}

std::optional<absl::string_view> HeaderMap::Get(absl::string_view name) const {
  for (const auto& [field_name, value] : fields_) {
    if (absl::EqualsIgnoreCase(field_name, name)) {
      return absl::string_view(value);
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
