#include "verifier-service/src/server/publisher_rpcs.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/ed25519.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/c2pa/trust_anchors.h"
#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/server/ingest_rpcs.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr int64_t kMaxRetentionSeconds = int64_t{10} * 366 * 24 * 3600;
constexpr char kPublisherTokenPrefix[] = "p:";
constexpr size_t kMaxSerializedKeyBytes = 256;

// A publisher's own C2PA anchors: empty, or PEM certificates that all parse, within the cap.
absl::Status ValidateC2paTrust(const std::string& pem, absl::string_view field) {
  if (pem.size() > kMaxC2paTrustBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is over 256 KiB"));
  }
  if (!pem.empty()) {
    if (absl::StatusOr<c2pa::TrustAnchors> anchors = c2pa::TrustAnchors::FromPem(pem);
        !anchors.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " is not PEM certificates: ", anchors.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<store::PublisherSettings> Validate(const v1::AddPublisherRequest& request) {
  const v1::Publisher& publisher = request.publisher();
  if (absl::Status status = ValidatePublisherName(publisher.name(), "publisher.name");
      !status.ok()) {
    return status;
  }
  if (publisher.retention_seconds() < 0 || publisher.retention_seconds() > kMaxRetentionSeconds) {
    return absl::InvalidArgumentError(
        "publisher.retention_seconds must be from 0 (the server default) to ten years");
  }
  if (publisher.keep_drops_seconds() < 0 || publisher.keep_drops_seconds() > kMaxRetentionSeconds) {
    return absl::InvalidArgumentError(
        "publisher.keep_drops_seconds must be from 0 (drops not kept) to ten years");
  }
  RETURN_IF_ERROR(ValidateC2paTrust(publisher.c2pa_trust(), "publisher.c2pa_trust"));
  return store::PublisherSettings{publisher.name(),
                                  publisher.verified(),
                                  publisher.require_signature(),
                                  publisher.retention_seconds(),
                                  publisher.keep_drops_seconds(),
                                  publisher.require_c2pa_for_media(),
                                  publisher.c2pa_trust()};
}

absl::StatusOr<PublisherUpdate> Validate(const v1::UpdatePublisherRequest& request) {
  RETURN_IF_ERROR(ValidatePublisherName(request.name(), "name"));
  if (!request.has_keep_drops_seconds() && !request.has_require_c2pa_for_media() &&
      !request.has_c2pa_trust()) {
    return absl::InvalidArgumentError(
        "nothing to update: set keep_drops_seconds, require_c2pa_for_media or c2pa_trust");
  }
  PublisherUpdate update{request.name(), {}};
  if (request.has_keep_drops_seconds()) {
    if (request.keep_drops_seconds() < 0 || request.keep_drops_seconds() > kMaxRetentionSeconds) {
      return absl::InvalidArgumentError(
          "keep_drops_seconds must be from 0 (drops not kept) to ten years");
    }
    update.change.keep_drops_seconds = request.keep_drops_seconds();
  }
  if (request.has_require_c2pa_for_media()) {
    update.change.require_c2pa_for_media = request.require_c2pa_for_media();
  }
  if (request.has_c2pa_trust()) {
    RETURN_IF_ERROR(ValidateC2paTrust(request.c2pa_trust(), "c2pa_trust"));
    update.change.c2pa_trust = request.c2pa_trust();
  }
  return update;
}

absl::StatusOr<PublisherPage> Validate(const v1::ListPublishersRequest& request) {
  PublisherPage page;
  absl::StatusOr<int> size = IngestPageSize(request.page_size(), "page_size");
  if (!size.ok()) {
    return size.status();
  }
  page.size = *size;
  if (!request.page_token().empty()) {
    std::string decoded;
    if (request.page_token().size() > 512 ||
        !absl::WebSafeBase64Unescape(request.page_token(), &decoded) ||
        !absl::StartsWith(decoded, kPublisherTokenPrefix) ||
        !ValidatePublisherName(decoded.substr(2), "page_token").ok()) {
      return absl::InvalidArgumentError("page_token is not a token from a previous page");
    }
    page.after = decoded.substr(2);
  }
  return page;
}

std::string PublisherPageToken(const std::string& last_name) {
  return absl::WebSafeBase64Escape(absl::StrCat(kPublisherTokenPrefix, last_name));
}

absl::StatusOr<ParsedPublisherKey> ParsePublisherKey(const std::string& serialized) {
  if (serialized.size() > kMaxSerializedKeyBytes) {
    return absl::InvalidArgumentError("key is too long");
  }
  // Bare base64 (accepted by ParseVerificationKey as a secret) is refused here: the prefix says
  // what the key is.
  if (!absl::StartsWith(serialized, "whpk_") && !absl::StartsWith(serialized, "whsec_")) {
    return absl::InvalidArgumentError(
        "key must be whpk_<base64 Ed25519 public key> or whsec_<base64 HMAC secret>");
  }
  absl::StatusOr<ingest::VerificationKey> key = ingest::ParseVerificationKey("", serialized);
  if (!key.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("key: ", key.status().message()));
  }
  if (key->version == ingest::SignatureVersion::kV1a) {
    return ParsedPublisherKey{store::kEd25519Algorithm, key->material};
  }
  return ParsedPublisherKey{store::kHmacSha256Algorithm, key->material};
}

absl::StatusOr<ParsedPublisherKey> Validate(const v1::AddPublisherKeyRequest& request) {
  if (absl::Status status = ValidatePublisherName(request.publisher(), "publisher");
      !status.ok()) {
    return status;
  }
  return ParsePublisherKey(request.key());
}

absl::Status Validate(const v1::RevokePublisherKeyRequest& request) {
  if (absl::Status status = ValidatePublisherName(request.publisher(), "publisher");
      !status.ok()) {
    return status;
  }
  if (!store::IsUuid(request.key_id())) {
    return absl::InvalidArgumentError("key_id must be a UUID");
  }
  return absl::OkStatus();
}

void ToProto(const store::PublisherKeyRecord& key, v1::PublisherKey* out) {
  out->set_key_id(key.key_id);
  out->set_algorithm(key.algorithm);
  if (key.algorithm == store::kEd25519Algorithm) {
    if (absl::StatusOr<crypto::Ed25519PublicKey> public_key =
            crypto::Ed25519PublicKey::FromRaw(key.material);
        public_key.ok()) {
      out->set_public_key(ingest::SerializePublicKey(*public_key));
    }
  }
  out->set_fingerprint(key.fingerprint);
  out->set_revoked(!key.active());
  *out->mutable_created_at() = TimestampProto(key.created_at);
  if (key.revoked_at.has_value()) {
    *out->mutable_revoked_at() = TimestampProto(*key.revoked_at);
  }
}

void ToProto(const store::PublisherRecord& publisher, bool with_keys, v1::Publisher* out) {
  out->set_name(publisher.settings.name);
  out->set_verified(publisher.settings.verified);
  out->set_require_signature(publisher.settings.require_signature);
  out->set_retention_seconds(publisher.settings.retention_seconds);
  out->set_keep_drops_seconds(publisher.settings.keep_drops_seconds);
  out->set_require_c2pa_for_media(publisher.settings.require_c2pa_for_media);
  out->set_c2pa_trust(publisher.settings.c2pa_trust);
  out->set_enabled(publisher.enabled);
  *out->mutable_created_at() = TimestampProto(publisher.created_at);
  if (with_keys) {
    for (const store::PublisherKeyRecord& key : publisher.keys) {
      ToProto(key, out->add_keys());
    }
  }
}

PORTCULLIS_VERIFIER_RPC(AddPublisher) {
  return rpcs_.Serve(
      "AddPublisher", context, request, response, kUnboundAdminAccess,
      [](const v1::AddPublisherRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](store::PublisherSettings settings,
                              const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::AddPublisherResult added,
                                deps_.publishers->AddPublisher(settings));
               deps_.evaluator->ForgetPublisher(settings.name);
               ToProto(added.publisher, /*with_keys=*/false, response->mutable_publisher());
               response->set_created(added.created);
               if (added.created) {
                 call.Info("publisher added name={} verified={} require_signature={}",
                           settings.name, settings.verified, settings.require_signature);
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListPublishers) {
  return rpcs_.Serve(
      "ListPublishers", context, request, response, kUnboundAdminAccess,
      [](const v1::ListPublishersRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](PublisherPage page, const RpcCall&) {
               return ListPage(
                   page.size,
                   [&](int limit) { return deps_.publishers->ListPublishers(page.after, limit); },
                   [](const store::PublisherRecord& last) {
                     return PublisherPageToken(last.settings.name);
                   },
                   [&](const store::PublisherRecord& publisher) {
                     ToProto(publisher, /*with_keys=*/true, response->add_publishers());
                   },
                   response->mutable_next_page_token());
             }));
}

PORTCULLIS_VERIFIER_RPC(SetPublisherEnabled) {
  return rpcs_.Serve(
      "SetPublisherEnabled", context, request, response, kUnboundAdminAccess,
      [](const v1::SetPublisherEnabledRequest& request) {
        return ValidatePublisherName(request.name(), "name");
      },
      OnPool(*deps_.pool, [this, request, response](const RpcCall& call) -> absl::Status {
        const std::string& name = request->name();
        ASSIGN_OR_RETURN(store::PublisherRecord publisher,
                         deps_.publishers->SetEnabled(name, request->enabled()));
        deps_.evaluator->ForgetPublisher(name);
        ToProto(publisher, /*with_keys=*/true, response->mutable_publisher());
        call.Info("publisher {} name={}", request->enabled() ? "enabled" : "disabled", name);
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(UpdatePublisher) {
  return rpcs_.Serve(
      "UpdatePublisher", context, request, response, kUnboundAdminAccess,
      [](const v1::UpdatePublisherRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](PublisherUpdate update, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::PublisherRecord publisher,
                                deps_.publishers->UpdateSettings(update.name, update.change));
               deps_.evaluator->ForgetPublisher(update.name);
               ToProto(publisher, /*with_keys=*/true, response->mutable_publisher());
               call.Info(
                   "publisher updated name={} keep_drops_seconds={} "
                   "require_c2pa_for_media={} c2pa_trust_bytes={}",
                   update.name, publisher.settings.keep_drops_seconds,
                   publisher.settings.require_c2pa_for_media, publisher.settings.c2pa_trust.size());
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(AddPublisherKey) {
  return rpcs_.Serve(
      "AddPublisherKey", context, request, response, kUnboundAdminAccess,
      [](const v1::AddPublisherKeyRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, request, response](ParsedPublisherKey key,
                                       const RpcCall& call) -> absl::Status {
               const std::string& publisher = request->publisher();
               ASSIGN_OR_RETURN(store::AddKeyResult added,
                                deps_.publishers->AddKey(publisher, key.algorithm, key.material));
               deps_.evaluator->ForgetPublisher(publisher);
               ToProto(added.key, response->mutable_key());
               response->set_created(added.created);
               if (added.created) {
                 call.Info("publisher key added publisher={} algorithm={} fingerprint={}",
                           publisher, added.key.algorithm, added.key.fingerprint);
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(RevokePublisherKey) {
  return rpcs_.Serve(
      "RevokePublisherKey", context, request, response, kUnboundAdminAccess,
      [](const v1::RevokePublisherKeyRequest& request) { return Validate(request); },
      OnPool(*deps_.pool, [this, request, response](const RpcCall& call) -> absl::Status {
        const std::string& publisher = request->publisher();
        ASSIGN_OR_RETURN(store::PublisherKeyRecord key,
                         deps_.publishers->RevokeKey(publisher, request->key_id()));
        deps_.evaluator->ForgetPublisher(publisher);
        ToProto(key, response->mutable_key());
        call.Info("publisher key revoked publisher={} key={}", publisher, request->key_id());
        return absl::OkStatus();
      }));
}

}  // namespace portcullis::verifier::server
