#include "tools/portcullis/src/ingest_tool_commands.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "boost/json/object.hpp"
#include "boost/json/serialize.hpp"
#include "common/crypto/ed25519.h"
#include "common/crypto/random.h"
#include "common/json/jcs_vectors.h"
#include "tools/portcullis/src/lifecycle_commands.h"
#include "tools/portcullis/src/publisher_commands.h"
#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/ingest/webhook_vectors.h"

namespace portcullis::cli {
namespace {

namespace webhooks = verifier::ingest;

// Counts the cases of one vector run and prints each failure.
class Tally {
 public:
  explicit Tally(std::ostream& out) : out_(out) {}
  void Check(bool ok, const std::string& what) {
    if (ok) {
      ++passed_;
    } else {
      ++failed_;
      out_ << "FAIL: " << what << "\n";
    }
  }
  int passed() const { return passed_; }
  int failed() const { return failed_; }

 private:
  std::ostream& out_;
  int passed_ = 0;
  int failed_ = 0;
};

// Shared by the two conformance runners: find, read, run, count.
template <typename RunVectors>
int RunVectorFile(const std::string& path, absl::string_view what, MissingData missing, bool ci,
                  std::ostream& out, std::ostream& err, const RunVectors& run) {
  if (const std::optional<int> exit_code = ExitUnlessPresent(path, what, missing, ci, err)) {
    return *exit_code;
  }
  const std::optional<std::string> text = ReadWholeFile(path, err);
  if (!text) {
    return kExitFailed;
  }
  Tally tally(out);
  const absl::Status status = run(*text, [&](bool ok, const std::string& name) {
    tally.Check(ok, name);
  });
  out << tally.passed() << " passed, " << tally.failed() << " failed\n";
  if (!status.ok()) {
    err << "error: " << path << ": " << status.message() << "\n";
    return kExitFailed;
  }
  if (tally.passed() == 0) {
    err << "error: " << path << ": no vectors\n";
    return kExitFailed;
  }
  return tally.failed() == 0 ? kExitOk : kExitFailed;
}

bool IsCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace

std::string IngestUsage() {
  return "  publisher add NAME [--verified] [--require-signature] [--retention=72h]\n"
         "                [--keep-drops=7d] [--require-c2pa-for-media] [--c2pa-trust=PEM_FILE]\n"
         "                                 register a feed publisher (idempotent); --keep-drops\n"
         "                                 keeps its dropped deliveries for `drops reevaluate`\n"
         "  publisher set NAME [--keep-drops=7d|off] [--require-c2pa-for-media[=true|false]]\n"
         "                [--c2pa-trust=PEM_FILE|off]  change only the settings given\n"
         "  publisher list                 list publishers with their keys (no secrets)\n"
         "  publisher disable|enable NAME  stop (or resume) accepting a publisher's items\n"
         "  publisher key-add NAME KEY     trust a whpk_ Ed25519 public key or a whsec_ secret\n"
         "  publisher key-revoke NAME KEY_ID  stop trusting a key\n"
         "  deadletter list [PUBLISHER]    quarantined deliveries, oldest first\n"
         "  deadletter replay ID           evaluate a quarantined delivery again\n"
         "  deadletter discard ID          delete a quarantined delivery\n"
         "  items list [--after=N] [--limit=N]  accepted items (the outbox) after cursor N\n"
         "  keygen                         print a new Ed25519 pair (whsk_ signing, whpk_ public)\n"
         "  sign --key=KEY [--id=ID] [--timestamp=T] FILE  print the webhook-id,\n"
         "                                 webhook-timestamp and X-Provenance-Signature headers\n"
         "                                 for FILE's bytes (KEY: whsk_… v1a, whsec_… v1, or\n"
         "                                 @PATH); use with curl -H @headers --data-binary @FILE\n"
         "  conformance jcs FILE           run RFC 8785 vectors (../shared/testdata/jcs format)\n"
         "  conformance webhooks FILE      run Standard Webhooks vectors\n"
         "  conformance jcs-if-present FILE, webhooks-if-present FILE  a missing FILE exits 77\n"
         "                                 unless CI=true\n";
}

int Keygen(std::ostream& out) {
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  boost::json::object pair;
  pair["signing_key"] = webhooks::SerializeSigningKey(key);
  pair["public_key"] = webhooks::SerializePublicKey(key.PublicKey());
  out << boost::json::serialize(pair) << "\n";
  return kExitOk;
}

absl::StatusOr<SignedHeaders> SignBody(absl::string_view key, absl::string_view body,
                                       std::string msg_id, int64_t timestamp) {
  SignedHeaders headers;
  headers.msg_id = std::move(msg_id);
  headers.timestamp = timestamp;
  const std::string content = webhooks::SignedContent(headers.msg_id, timestamp, body);
  if (absl::StartsWith(key, "whsk_")) {
    absl::StatusOr<crypto::Ed25519PrivateKey> signing_key = webhooks::ParseSigningKey(key);
    if (!signing_key.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the whsk_ key is malformed: ", signing_key.status().message()));
    }
    headers.signature = webhooks::SignV1a(*signing_key, content);
    return headers;
  }
  if (absl::StartsWith(key, "whsec_")) {
    absl::StatusOr<webhooks::VerificationKey> secret = webhooks::ParseVerificationKey("cli", key);
    if (!secret.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the whsec_ secret is malformed: ", secret.status().message()));
    }
    headers.signature = webhooks::SignV1(secret->material, content);
    return headers;
  }
  if (absl::StartsWith(key, "whpk_")) {
    return absl::InvalidArgumentError(
        "a whpk_ public key cannot sign: use the whsk_ signing key from `portcullis keygen`");
  }
  return absl::InvalidArgumentError("--key must be a whsk_ signing key or a whsec_ secret");
}

std::string FormatSignedHeaders(const SignedHeaders& headers) {
  return absl::StrCat("webhook-id: ", headers.msg_id, "\n", "webhook-timestamp: ",
                      headers.timestamp, "\n", "X-Provenance-Signature: ", headers.signature,
                      "\n");
}

int Sign(const std::string& key, const std::string& id, const std::string& timestamp,
         const std::string& path, absl::Time now, std::ostream& out, std::ostream& err) {
  std::string key_text = key;
  if (absl::StartsWith(key, "@")) {
    std::optional<std::string> contents = ReadWholeFile(key.substr(1), err);
    if (!contents) {
      return kExitFailed;
    }
    key_text = std::string(absl::StripAsciiWhitespace(*contents));
  }
  if (key_text.empty()) {
    err << "error: sign needs --key (a whsk_ signing key or a whsec_ secret, or @PATH)\n";
    return kExitUsage;
  }
  int64_t seconds = absl::ToUnixSeconds(now);
  if (!timestamp.empty()) {
    if (timestamp.size() > 19 ||
        !std::all_of(timestamp.begin(), timestamp.end(),
                     [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
        !absl::SimpleAtoi(timestamp, &seconds)) {
      err << "error: --timestamp must be Unix seconds (1 to 19 digits)\n";
      return kExitUsage;
    }
  }
  const std::string msg_id = id.empty() ? absl::StrCat("msg_", crypto::RandomHex(12)) : id;
  const std::optional<std::string> body = ReadWholeFile(path, err);
  if (!body) {
    return kExitFailed;
  }
  absl::StatusOr<SignedHeaders> headers = SignBody(key_text, *body, msg_id, seconds);
  if (!headers.ok()) {
    err << "error: " << headers.status().message() << "\n";
    return kExitUsage;
  }
  out << FormatSignedHeaders(*headers);
  return kExitOk;
}

int RunJcsConformanceFile(const std::string& path, MissingData missing, bool ci,
                          std::ostream& out, std::ostream& err) {
  return RunVectorFile(path, "JCS vectors", missing, ci, out, err,
                       [&](absl::string_view text, const json::VectorCheck& check) {
                         return json::RunJcsVectors(text, check, out);
                       });
}

int RunWebhooksConformanceFile(const std::string& path, MissingData missing, bool ci,
                               std::ostream& out, std::ostream& err) {
  return RunVectorFile(path, "Standard Webhooks vectors", missing, ci, out, err,
                       [](absl::string_view text, const webhooks::VectorCheck& check) {
                         return webhooks::RunWebhookVectors(text, check);
                       });
}

std::optional<int> RunIngestCommand(const std::vector<std::string>& args,
                                    const CliOptions& options, std::ostream& out,
                                    std::ostream& err) {
  if (args.empty()) {
    return std::nullopt;
  }
  const auto usage_error = [&](const std::string& why) {
    err << "error: " << why << "\n" << Usage();
    return kExitUsage;
  };
  const std::string& noun = args[0];
  const std::string verb = args.size() > 1 ? args[1] : "";
  const auto arity = [&](size_t min_args, size_t max_args) -> std::optional<int> {
    if (args.size() < min_args || args.size() > max_args) {
      return usage_error(absl::StrCat("wrong number of arguments for '", noun,
                                      verb.empty() ? "" : " ", verb, "'"));
    }
    return std::nullopt;
  };

  if (noun == "conformance" &&
      (verb == "jcs" || verb == "jcs-if-present" || verb == "webhooks" ||
       verb == "webhooks-if-present")) {
    if (auto bad = arity(3, 3)) {
      return bad;
    }
    const MissingData missing =
        absl::EndsWith(verb, "-if-present") ? MissingData::kSkipUnlessCi : MissingData::kFail;
    if (absl::StartsWith(verb, "jcs")) {
      return RunJcsConformanceFile(args[2], missing, IsCi(), out, err);
    }
    return RunWebhooksConformanceFile(args[2], missing, IsCi(), out, err);
  }
  if (noun == "keygen") {
    if (auto bad = arity(1, 1)) {
      return bad;
    }
    return Keygen(out);
  }
  if (noun == "sign") {
    if (args.size() != 2) {
      return usage_error("wrong number of arguments for 'sign' (one FILE)");
    }
    return Sign(options.key, options.message_id, options.timestamp, args[1], absl::Now(), out,
                err);
  }
  if (noun != "publisher" && noun != "deadletter" && noun != "items") {
    return std::nullopt;
  }

  // The admin commands: check the arguments before dialing.
  std::optional<int> bad;
  if (noun == "publisher") {
    if (verb == "list") {
      bad = arity(2, 2);
    } else if (verb == "add" || verb == "set" || verb == "disable" || verb == "enable") {
      bad = arity(3, 3);
    } else if (verb == "key-add" || verb == "key-revoke") {
      bad = arity(4, 4);
    } else {
      return usage_error(verb.empty() ? "missing publisher command"
                                      : "unknown publisher command '" + verb + "'");
    }
  } else if (noun == "deadletter") {
    if (verb == "list") {
      bad = arity(2, 3);
    } else if (verb == "replay" || verb == "discard") {
      bad = arity(3, 3);
    } else {
      return usage_error(verb.empty() ? "missing deadletter command"
                                      : "unknown deadletter command '" + verb + "'");
    }
  } else if (verb != "list") {
    return usage_error(verb.empty() ? "missing items command"
                                    : "unknown items command '" + verb + "'");
  } else {
    bad = arity(2, 2);
  }
  if (bad) {
    return bad;
  }
  // --keep-drops (publisher add, publisher set), --require-c2pa-for-media and --c2pa-trust
  // (publisher set): parsed, and the PEM file read, before dialing.
  absl::Duration keep_drops = absl::ZeroDuration();
  PublisherChange change;
  if (noun == "publisher" && (verb == "add" || verb == "set")) {
    if (verb == "set" && options.keep_drops.empty() &&
        !options.require_c2pa_for_media.has_value() && options.publisher_c2pa_trust.empty()) {
      return usage_error(
          "'publisher set' needs a setting to change: --keep-drops=DURATION|off, "
          "--require-c2pa-for-media[=true|false] or --c2pa-trust=PEM_FILE|off");
    }
    if (!options.keep_drops.empty()) {
      absl::StatusOr<absl::Duration> parsed = ParseKeepDrops(options.keep_drops);
      if (!parsed.ok()) {
        return usage_error(std::string(parsed.status().message()));
      }
      keep_drops = *parsed;
      change.keep_drops = keep_drops;
    }
    change.require_c2pa_for_media = options.require_c2pa_for_media;
    if (options.publisher_c2pa_trust == "off") {
      change.c2pa_trust = "";
    } else if (!options.publisher_c2pa_trust.empty()) {
      std::ifstream file(options.publisher_c2pa_trust, std::ios::binary);
      std::stringstream text;
      text << file.rdbuf();
      if (!file || file.bad()) {
        err << "error: --c2pa-trust: cannot read " << options.publisher_c2pa_trust << "\n";
        return kExitFailed;
      }
      change.c2pa_trust = text.str();
    }
  }

  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = verifier::v1::Verifier::NewStub(channel);
  const absl::Duration timeout = options.timeout;
  const std::string argument = args.size() > 2 ? args[2] : "";
  if (noun == "items") {
    return ListAcceptedItems(*stub, timeout, options.after, options.limit, out, err);
  }
  if (noun == "deadletter") {
    if (verb == "list") {
      return ListDeadLetters(*stub, timeout, argument, out, err);
    }
    if (verb == "replay") {
      return ReplayDeadLetter(*stub, timeout, argument, out, err);
    }
    return DiscardDeadLetter(*stub, timeout, argument, out, err);
  }
  if (verb == "add") {
    return AddPublisher(*stub, timeout, argument,
                        {.verified = options.verified,
                         .require_signature = options.require_signature,
                         .retention = options.retention,
                         .keep_drops = keep_drops,
                         .require_c2pa_for_media = change.require_c2pa_for_media.value_or(false),
                         .c2pa_trust = change.c2pa_trust.value_or("")},
                        out, err);
  }
  if (verb == "set") {
    return UpdatePublisher(*stub, timeout, argument, change, out, err);
  }
  if (verb == "list") {
    return ListPublishers(*stub, timeout, out, err);
  }
  if (verb == "disable" || verb == "enable") {
    return SetPublisherEnabled(*stub, timeout, argument, verb == "enable", out, err);
  }
  if (verb == "key-add") {
    return AddPublisherKey(*stub, timeout, argument, args[3], out, err);
  }
  return RevokePublisherKey(*stub, timeout, argument, args[3], out, err);
}

}  // namespace portcullis::cli
