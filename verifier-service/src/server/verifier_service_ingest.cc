// VerifierService: the ingest, publisher, dead-letter and outbox RPCs. Requests are validated
// inline (ingest_rpc.h, publisher_admin_rpc.h); store work runs on the blocking pool.

#include <utility>

#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "verifier-service/src/server/ingest_rpc.h"
#include "verifier-service/src/server/publisher_admin_rpc.h"
#include "verifier-service/src/server/store_errors.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr char kNoIngest[] = "ingest is not configured";

}  // namespace

grpc::ServerUnaryReactor* VerifierService::EvaluateIngest(
    grpc::CallbackServerContext* context, const v1::EvaluateIngestRequest* request,
    v1::EvaluateIngestResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kIngestAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<store::DeliveryRecord> delivery = Validate(*request);
  if (!delivery.ok()) {
    reactor->Finish(status::ToGrpcStatus(delivery.status()));
    return reactor;
  }
  RunOnPool("EvaluateIngest", context, reactor,
            [this, response, delivery = *std::move(delivery)]() -> absl::Status {
              absl::StatusOr<ingest::IngestOutcome> outcome =
                  ingest_.evaluator->Evaluate(delivery);
              if (!outcome.ok()) {
                return Retryable(outcome.status());
              }
              ToProto(*outcome, response);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::AddPublisher(grpc::CallbackServerContext* context,
                                                        const v1::AddPublisherRequest* request,
                                                        v1::AddPublisherResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<store::PublisherSettings> settings = Validate(*request);
  if (!settings.ok()) {
    reactor->Finish(status::ToGrpcStatus(settings.status()));
    return reactor;
  }
  RunOnPool("AddPublisher", context, reactor,
            [this, response, settings = *std::move(settings)]() -> absl::Status {
              absl::StatusOr<store::AddPublisherResult> added =
                  ingest_.publishers->AddPublisher(settings);
              if (!added.ok()) {
                return Retryable(added.status());
              }
              ingest_.evaluator->ForgetPublisher(settings.name);
              ToProto(added->publisher, /*with_keys=*/false, response->mutable_publisher());
              response->set_created(added->created);
              if (added->created) {
                logging::Info("publisher added name={} verified={} require_signature={}",
                              settings.name, settings.verified, settings.require_signature);
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListPublishers(
    grpc::CallbackServerContext* context, const v1::ListPublishersRequest* request,
    v1::ListPublishersResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<PublisherPage> page = Validate(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  RunOnPool("ListPublishers", context, reactor,
            [this, response, page = *std::move(page)]() -> absl::Status {
              // One more than asked for tells whether there is a next page.
              absl::StatusOr<std::vector<store::PublisherRecord>> publishers =
                  ingest_.publishers->ListPublishers(page.after, page.size + 1);
              if (!publishers.ok()) {
                return Retryable(publishers.status());
              }
              if (static_cast<int>(publishers->size()) > page.size) {
                publishers->resize(page.size);
                response->set_next_page_token(
                    PublisherPageToken(publishers->back().settings.name));
              }
              for (const store::PublisherRecord& publisher : *publishers) {
                ToProto(publisher, /*with_keys=*/true, response->add_publishers());
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::SetPublisherEnabled(
    grpc::CallbackServerContext* context, const v1::SetPublisherEnabledRequest* request,
    v1::SetPublisherEnabledResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  if (absl::Status status = ValidatePublisherName(request->name(), "name"); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("SetPublisherEnabled", context, reactor,
            [this, response, name = request->name(),
             enabled = request->enabled()]() -> absl::Status {
              absl::StatusOr<store::PublisherRecord> publisher =
                  ingest_.publishers->SetEnabled(name, enabled);
              if (!publisher.ok()) {
                return Retryable(publisher.status());
              }
              ingest_.evaluator->ForgetPublisher(name);
              ToProto(*publisher, /*with_keys=*/true, response->mutable_publisher());
              logging::Info("publisher {} name={}", enabled ? "enabled" : "disabled", name);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::AddPublisherKey(
    grpc::CallbackServerContext* context, const v1::AddPublisherKeyRequest* request,
    v1::AddPublisherKeyResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<ParsedPublisherKey> key = Validate(*request);
  if (!key.ok()) {
    reactor->Finish(status::ToGrpcStatus(key.status()));
    return reactor;
  }
  RunOnPool("AddPublisherKey", context, reactor,
            [this, response, publisher = request->publisher(),
             key = *std::move(key)]() -> absl::Status {
              absl::StatusOr<store::AddKeyResult> added =
                  ingest_.publishers->AddKey(publisher, key.algorithm, key.material);
              if (!added.ok()) {
                return Retryable(added.status());
              }
              ingest_.evaluator->ForgetPublisher(publisher);
              ToProto(added->key, response->mutable_key());
              response->set_created(added->created);
              if (added->created) {
                logging::Info("publisher key added publisher={} algorithm={} fingerprint={}",
                              publisher, added->key.algorithm, added->key.fingerprint);
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::RevokePublisherKey(
    grpc::CallbackServerContext* context, const v1::RevokePublisherKeyRequest* request,
    v1::RevokePublisherKeyResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  if (absl::Status status = Validate(*request); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("RevokePublisherKey", context, reactor,
            [this, response, publisher = request->publisher(),
             key_id = request->key_id()]() -> absl::Status {
              absl::StatusOr<store::PublisherKeyRecord> key =
                  ingest_.publishers->RevokeKey(publisher, key_id);
              if (!key.ok()) {
                return Retryable(key.status());
              }
              ingest_.evaluator->ForgetPublisher(publisher);
              ToProto(*key, response->mutable_key());
              logging::Info("publisher key revoked publisher={} key={}", publisher, key_id);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListDeadLetters(
    grpc::CallbackServerContext* context, const v1::ListDeadLettersRequest* request,
    v1::ListDeadLettersResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<DeadLetterPage> page = Validate(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  RunOnPool("ListDeadLetters", context, reactor,
            [this, response, page = *std::move(page)]() -> absl::Status {
              absl::StatusOr<std::vector<store::DeadLetterRecord>> letters =
                  ingest_.ingest->ListDeadLetters(page.publisher, page.after, page.size + 1);
              if (!letters.ok()) {
                return Retryable(letters.status());
              }
              if (static_cast<int>(letters->size()) > page.size) {
                letters->resize(page.size);
                response->set_next_page_token(DeadLetterPageToken(letters->back()));
              }
              for (const store::DeadLetterRecord& letter : *letters) {
                ToProto(letter, response->add_dead_letters());
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ReplayDeadLetter(
    grpc::CallbackServerContext* context, const v1::ReplayDeadLetterRequest* request,
    v1::ReplayDeadLetterResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  if (absl::Status status = ValidateDeadLetterId(request->dead_letter_id()); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("ReplayDeadLetter", context, reactor,
            [this, response, id = request->dead_letter_id()]() -> absl::Status {
              absl::StatusOr<ingest::IngestOutcome> outcome = ingest_.evaluator->Replay(id);
              if (!outcome.ok()) {
                return Retryable(outcome.status());
              }
              ToProto(*outcome, response->mutable_result());
              logging::Info("dead letter replayed id={} reason={}", id, outcome->reason);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::DiscardDeadLetter(
    grpc::CallbackServerContext* context, const v1::DiscardDeadLetterRequest* request,
    v1::DiscardDeadLetterResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  if (absl::Status status = ValidateDeadLetterId(request->dead_letter_id()); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("DiscardDeadLetter", context, reactor,
            [this, id = request->dead_letter_id()]() -> absl::Status {
              absl::Status status = Retryable(ingest_.ingest->DiscardDeadLetter(id));
              if (status.ok()) {
                logging::Info("dead letter discarded id={}", id);
              }
              return status;
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListAcceptedItems(
    grpc::CallbackServerContext* context, const v1::ListAcceptedItemsRequest* request,
    v1::ListAcceptedItemsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(ingest_.configured(), kNoIngest, reactor)) {
    return reactor;
  }
  absl::StatusOr<AcceptedItemsPage> page = Validate(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  RunOnPool("ListAcceptedItems", context, reactor,
            [this, response, page = *page]() -> absl::Status {
              absl::StatusOr<std::vector<store::AcceptedItemRecord>> items =
                  ingest_.ingest->ListAcceptedItems(page.after_cursor, page.limit);
              if (!items.ok()) {
                return Retryable(items.status());
              }
              for (const store::AcceptedItemRecord& item : *items) {
                ToProto(item, response->add_items());
              }
              return absl::OkStatus();
            });
  return reactor;
}

}  // namespace portcullis::verifier::server
