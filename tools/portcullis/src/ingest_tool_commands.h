#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/conformance_data.h"

// Feed ingest on the command line: the dispatcher for every ingest command (the admin ones of
// publisher_commands.h included), and the offline tools a publisher uses — `portcullis keygen`,
// `portcullis sign` — and the conformance runners over the shared JCS and Standard Webhooks
// vectors.
namespace portcullis::cli {

// Runs `args` when it is an ingest command (publisher, deadletter, items, keygen, sign,
// conformance jcs|webhooks[-if-present]); nullopt for any other command.
std::optional<int> RunIngestCommand(const std::vector<std::string>& args,
                                    const CliOptions& options, std::ostream& out,
                                    std::ostream& err);

// The usage lines of the ingest commands.
std::string IngestUsage();

// `portcullis keygen`: a fresh Ed25519 pair as JSON {"signing_key":"whsk_…","public_key":"whpk_…"}.
int Keygen(std::ostream& out);

// The Standard Webhooks headers of one signed delivery.
struct SignedHeaders {
  std::string msg_id;
  int64_t timestamp = 0;
  std::string signature;  // "v1a,<base64>" or "v1,<base64>".
};

// Signs `body` as sent (`msg_id "." timestamp "." body`) with `key`: "whsk_…" (Ed25519, v1a) or
// "whsec_…" (HMAC-SHA256, v1). kInvalidArgument for anything else (a whpk_ public key cannot
// sign), never naming the key.
absl::StatusOr<SignedHeaders> SignBody(absl::string_view key, absl::string_view body,
                                       std::string msg_id, int64_t timestamp);

// The three header lines ("webhook-id: …", "webhook-timestamp: …", "X-Provenance-Signature: …"),
// usable as `curl -H @FILE`.
std::string FormatSignedHeaders(const SignedHeaders& headers);

// `portcullis sign --key KEY [--id ID] [--timestamp T] FILE`: KEY as for SignBody, or "@PATH" to
// read it from a file; ID defaults to "msg_" + 24 random hex digits, T (Unix seconds) to `now`.
int Sign(const std::string& key, const std::string& id, const std::string& timestamp,
         const std::string& path, absl::Time now, std::ostream& out, std::ostream& err);

// `portcullis conformance jcs FILE` / `conformance webhooks FILE`: every vector of the shared file
// (common/json/jcs_vectors.h, verifier-service/src/ingest/webhook_vectors.h); one "FAIL: …" line
// per failed case and "N passed, M failed". 0 only when none failed; a missing file as
// MissingData says (kExitSkipped = 77 when skipped).
int RunJcsConformanceFile(const std::string& path, MissingData missing, bool ci,
                          std::ostream& out, std::ostream& err);
int RunWebhooksConformanceFile(const std::string& path, MissingData missing, bool ci,
                               std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
