#include "verifier-service/src/server/verifier_service.h"

#include <string>
#include <utility>
#include <variant>

#include "common/crypto/sha256.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "google/protobuf/util/time_util.h"
#include "verifier-service/src/intake/mention_request_validation.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

v1::MentionState ToProto(store::MentionState state) {
  switch (state) {
    case store::MentionState::kPending:
      return v1::MENTION_STATE_PENDING;
    case store::MentionState::kVerified:
      return v1::MENTION_STATE_VERIFIED;
    case store::MentionState::kFailed:
      return v1::MENTION_STATE_FAILED;
  }
  return v1::MENTION_STATE_UNSPECIFIED;
}

google::protobuf::Timestamp ToProto(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

const grpc::Status& Overloaded() {
  static const grpc::Status* const kStatus =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "verifier overloaded, retry later");
  return *kStatus;
}

const grpc::Status& NotReady() {
  static const grpc::Status* const kStatus =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "verifier not ready, retry later");
  return *kStatus;
}

// Answers a call whose deadline passed or whose client went away while it waited in the queue,
// without touching the database.
bool FinishIfCancelled(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor) {
  if (context->IsCancelled()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled"));
    return true;
  }
  return false;
}

}  // namespace

grpc::ServerUnaryReactor* VerifierService::SubmitMention(grpc::CallbackServerContext* context,
                                                         const v1::SubmitMentionRequest* request,
                                                         v1::SubmitMentionResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  intake::SubmitMentionValidation validation = intake::Validate(*request, tracking_);
  if (const auto* rejection = std::get_if<intake::Rejection>(&validation)) {
    response->set_decision(v1::DECISION_REJECTED);
    response->set_reason(rejection->reason);
    response->set_reason_description(rejection->description);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  if (!ready_.load()) {
    reactor->Finish(NotReady());
    return reactor;
  }
  const auto& normalized = std::get<intake::NormalizedMention>(validation);
  store::NewMention mention{request->source(), request->target(), normalized.key.source_hash,
                            normalized.key.target_hash};
  const bool queued =
      pool_.TrySubmit([this, context, reactor, response, mention = std::move(mention)]() mutable {
        if (FinishIfCancelled(context, reactor)) {
          return;
        }
        absl::StatusOr<store::UpsertResult> result = store_.UpsertPending(mention);
        if (!result.ok()) {
          reactor->Finish(status::ToGrpcStatus(result.status()));
          return;
        }
        response->set_decision(v1::DECISION_ACCEPTED);
        response->set_mention_id(result->mention_id);
        response->set_state(ToProto(result->state));
        response->set_created(result->created);
        reactor->Finish(grpc::Status::OK);
      });
  if (!queued) {
    logging::Warn("refused SubmitMention: blocking pool queue full");
    reactor->Finish(Overloaded());
  }
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::GetMention(grpc::CallbackServerContext* context,
                                                      const v1::GetMentionRequest* request,
                                                      v1::GetMentionResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!store::IsMentionId(request->mention_id())) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "mention_id must be a UUID"));
    return reactor;
  }
  if (!ready_.load()) {
    reactor->Finish(NotReady());
    return reactor;
  }
  const bool queued = pool_.TrySubmit([this, context, reactor, request, response]() mutable {
    if (FinishIfCancelled(context, reactor)) {
      return;
    }
    absl::StatusOr<store::StoredMention> mention = store_.Get(request->mention_id());
    if (!mention.ok()) {
      reactor->Finish(status::ToGrpcStatus(mention.status()));
      return;
    }
    v1::Mention* out = response->mutable_mention();
    out->set_mention_id(mention->mention_id);
    out->set_source(mention->source);
    out->set_target(mention->target);
    out->set_state(ToProto(mention->state));
    out->set_reason(mention->reason);
    *out->mutable_created_at() = ToProto(mention->created_at);
    *out->mutable_updated_at() = ToProto(mention->updated_at);
    reactor->Finish(grpc::Status::OK);
  });
  if (!queued) {
    logging::Warn("refused GetMention: blocking pool queue full");
    reactor->Finish(Overloaded());
  }
  return reactor;
}

}  // namespace portcullis::verifier::server
