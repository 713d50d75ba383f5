#include "verifier-service/src/store/source_block.h"

#include "absl/strings/match.h"

namespace portcullis::verifier::store {

std::vector<std::string> DomainBlockKeys(absl::string_view host) {
  std::vector<std::string> keys;
  if (host.empty()) {
    return keys;
  }
  keys.emplace_back(host);
  if (absl::StartsWith(host, "[")) {
    return keys;  // IPv6 literal.
  }
  // A dotted-decimal IPv4 literal (the only form the serializer writes): only itself.
  const bool ipv4 = host.find_first_not_of("0123456789.") == absl::string_view::npos;
  if (ipv4) {
    return keys;
  }
  for (size_t dot = host.find('.'); dot != absl::string_view::npos; dot = host.find('.')) {
    host.remove_prefix(dot + 1);
    if (host.empty()) {
      break;
    }
    keys.emplace_back(host);
  }
  return keys;
}

std::string HostOfSerializedUrl(absl::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) {
    return "";
  }
  absl::string_view rest = url.substr(scheme_end + 3);
  if (absl::StartsWith(rest, "[")) {
    const size_t close = rest.find(']');
    return std::string(rest.substr(0, close == absl::string_view::npos ? rest.size() : close + 1));
  }
  return std::string(rest.substr(0, rest.find_first_of(":/?#")));
}

const char* BlockKindName(BlockKind kind) {
  return kind == BlockKind::kDomain ? "DOMAIN" : "PREFIX";
}

}  // namespace portcullis::verifier::store
