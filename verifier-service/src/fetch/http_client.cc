#include "verifier-service/src/fetch/http_client.h"

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::fetch {

std::string MediaTypeOf(absl::string_view content_type) {
  const absl::string_view type = content_type.substr(0, content_type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(type));
}

}  // namespace portcullis::verifier::fetch
