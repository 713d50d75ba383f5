#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

// The admin and consumer commands of feed ingest, over gRPC: publishers and their keys
// (`portcullis publisher ...`), the dead-letter queue (`portcullis deadletter ...`) and the outbox
// of accepted items (`portcullis items list`). Each prints the answer as JSON on `out` and
// returns an exit code of cli.h.
namespace portcullis::cli {

// `publisher add` settings: --verified, --require-signature, --retention (0: the server default),
// --keep-drops (0: drops not kept).
struct PublisherSettings {
  bool verified = false;
  bool require_signature = false;
  absl::Duration retention = absl::ZeroDuration();
  absl::Duration keep_drops = absl::ZeroDuration();
  // --require-c2pa-for-media, --c2pa-trust (the PEM text).
  bool require_c2pa_for_media = false;
  std::string c2pa_trust;
};

// `portcullis publisher add NAME [--verified] [--require-signature] [--retention 72h]`
// (idempotent: an existing publisher is printed unchanged with "created": false). A retention
// that is negative or not whole seconds is a usage error.
int AddPublisher(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 const std::string& name, const PublisherSettings& settings, std::ostream& out,
                 std::ostream& err);
// What `publisher set` changes: each setting that is given.
struct PublisherChange {
  std::optional<absl::Duration> keep_drops;  // zero turns the ledger off
  std::optional<bool> require_c2pa_for_media;
  std::optional<std::string> c2pa_trust;  // PEM text; empty removes the publisher's anchors
};

// `portcullis publisher set NAME [--keep-drops=7d|off] [--require-c2pa-for-media[=false]]
// [--c2pa-trust=PEM_FILE|off]`: changes only the settings given. Prints the publisher.
int UpdatePublisher(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                    const std::string& name, const PublisherChange& change, std::ostream& out,
                    std::ostream& err);
// `portcullis publisher list`: every page, with the keys (never a secret).
int ListPublishers(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                   std::ostream& out, std::ostream& err);
// `portcullis publisher disable NAME` / `enable NAME`.
int SetPublisherEnabled(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                        const std::string& name, bool enabled, std::ostream& out,
                        std::ostream& err);
// `portcullis publisher key-add NAME KEY`: a whpk_ Ed25519 public key or a whsec_ HMAC secret.
int AddPublisherKey(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                    const std::string& name, const std::string& key, std::ostream& out,
                    std::ostream& err);
// `portcullis publisher key-revoke NAME KEY_ID`.
int RevokePublisherKey(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                       const std::string& name, const std::string& key_id, std::ostream& out,
                       std::ostream& err);

// `portcullis deadletter list [PUBLISHER]`: every page, oldest first.
int ListDeadLetters(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                    const std::string& publisher, std::ostream& out, std::ostream& err);
// `portcullis deadletter replay ID`: prints the new decision.
int ReplayDeadLetter(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                     const std::string& id, std::ostream& out, std::ostream& err);
// `portcullis deadletter discard ID`.
int DiscardDeadLetter(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                      const std::string& id, std::ostream& out, std::ostream& err);

// `portcullis items list [--after N] [--limit N]`: one page of the outbox after cursor N.
int ListAcceptedItems(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                      int64_t after, int32_t limit, std::ostream& out, std::ostream& err);

// Pages fetched at most by the list commands (1000 entries each).
inline constexpr int kMaxListPages = 1000;

}  // namespace portcullis::cli
