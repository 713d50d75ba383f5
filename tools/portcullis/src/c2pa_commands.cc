#include "tools/portcullis/src/c2pa_commands.h"

#include <fstream>
#include <iterator>

#include "boost/json/serialize.hpp"
#include "verifier-service/src/c2pa/c2pa_limits.h"
#include "verifier-service/src/c2pa/manifest_validator.h"
#include "verifier-service/src/c2pa/trust_anchors.h"
#include "verifier-service/src/c2pa/validation_result_json.h"

namespace portcullis::cli {
namespace {

namespace c2pa = verifier::c2pa;

// The file's bytes, or nullopt when it cannot be read or is over `max_bytes`.
std::optional<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::string bytes;
  bytes.resize(max_bytes + 1);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad() || static_cast<size_t>(in.gcount()) > max_bytes) {
    return std::nullopt;
  }
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

constexpr size_t kMaxTrustFileBytes = 4 * 1024 * 1024;

}  // namespace

std::string C2paUsage() {
  return "  c2pa verify FILE [--trust PEM]  validate the C2PA manifest of a JPEG or PNG file\n"
         "                                 (claim signature, signer chain against the PEM trust\n"
         "                                 anchors, hashed URIs, data hash); prints the result\n"
         "                                 JSON; exit 0 only when valid and trusted\n";
}

int VerifyC2paFile(const std::string& path, const std::string& trust_path, absl::Time now,
                   std::ostream& out, std::ostream& err) {
  const c2pa::C2paLimits limits;
  c2pa::TrustAnchors anchors;
  if (!trust_path.empty()) {
    const std::optional<std::string> pem = ReadBoundedFile(trust_path, kMaxTrustFileBytes);
    if (!pem.has_value()) {
      err << "error: cannot read the trust anchors " << trust_path << "\n";
      return kExitFailed;
    }
    absl::StatusOr<c2pa::TrustAnchors> parsed = c2pa::TrustAnchors::FromPem(*pem);
    if (!parsed.ok()) {
      err << "error: " << trust_path << ": " << parsed.status().message() << "\n";
      return kExitFailed;
    }
    anchors = *std::move(parsed);
  }
  const std::optional<std::string> asset = ReadBoundedFile(path, limits.max_asset_bytes);
  if (!asset.has_value()) {
    err << "error: cannot read " << path << " (or it is over " << limits.max_asset_bytes
        << " bytes)\n";
    return kExitFailed;
  }
  const absl::StatusOr<c2pa::MediaType> type = c2pa::SniffMediaType(*asset);
  if (!type.ok()) {
    err << "error: " << path << ": " << type.status().message() << "\n";
    return kExitFailed;
  }
  const c2pa::ValidationResult result = c2pa::ValidateAsset(*asset, *type, anchors, now, limits);
  out << boost::json::serialize(c2pa::ValidationResultToJson(result)) << "\n";
  return result.verdict == c2pa::Verdict::kValid ? kExitOk : kExitFailed;
}

std::optional<int> RunC2paCommand(const std::vector<std::string>& args, const CliOptions& options,
                                  std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] != "c2pa") {
    return std::nullopt;
  }
  if (args.size() != 3 || args[1] != "verify") {
    err << "error: usage: portcullis c2pa verify FILE [--trust PEM]\n";
    return kExitUsage;
  }
  return VerifyC2paFile(args[2], options.c2pa_trust, absl::Now(), out, err);
}

}  // namespace portcullis::cli
