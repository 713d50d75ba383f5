#include "verifier-service/src/server/verify_now_rpc.h"

#include <utility>
#include <variant>

#include "absl/random/random.h"
#include "absl/time/clock.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "verifier-service/src/intake/mention_request_validation.h"
#include "verifier-service/src/queue/verification_worker.h"
#include "verifier-service/src/server/mention_read_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

// How often a claim is tried again while a worker holds the mention's job.
constexpr absl::Duration kBusyPoll = absl::Milliseconds(100);

double Random01() {
  thread_local absl::BitGen random;
  return absl::Uniform(random, 0.0, 1.0);
}

}  // namespace

absl::StatusOr<VerifyNowResult> VerifyMentionNow(const VerifyNowBackend& backend,
                                                 store::MentionStore& mentions,
                                                 const std::string& mention_id,
                                                 const auth::SiteBinding& visible_sites) {
  VerifyNowResult result;
  const absl::Time give_up = absl::Now() + backend.busy_wait;
  while (true) {
    absl::StatusOr<store::MentionClaim> claim =
        backend.jobs->ClaimMention(mention_id, backend.owner, backend.lease);
    if (!claim.ok()) {
      return claim.status();
    }
    if (claim->kind == store::MentionClaim::Kind::kBusy && absl::Now() < give_up) {
      absl::SleepFor(kBusyPoll);
      continue;
    }
    if (claim->kind != store::MentionClaim::Kind::kClaimed) {
      break;  // Nothing queued, or a worker still on it: the mention as it stands.
    }
    const store::JobRecord& job = claim->job;
    const queue::VerificationOutcome outcome = backend.verifier->Verify(job);
    const store::JobResult recorded =
        queue::ToJobResult(outcome, job.attempts, backend.retry, Random01());
    const absl::Status finished = backend.jobs->Finish(job.job_id, backend.owner, recorded);
    if (!finished.ok() && !absl::IsFailedPrecondition(finished)) {
      return finished;  // Not recorded: the lease runs out and a worker runs the job again.
    }
    if (recorded.kind == store::JobResult::Kind::kRetry) {
      result.transient_reason = recorded.reason;
    }
    logging::Info("verify_now mention={} attempt={} outcome_reason={}", mention_id, job.attempts,
                  recorded.reason.empty() ? "-" : recorded.reason);
    break;
  }
  absl::StatusOr<store::StoredMention> mention = mentions.Get(mention_id, visible_sites);
  if (!mention.ok()) {
    return mention.status();
  }
  result.mention = *std::move(mention);
  return result;
}

grpc::ServerUnaryReactor* VerifierService::VerifyNow(grpc::CallbackServerContext* context,
                                                     const v1::VerifyNowRequest* request,
                                                     v1::VerifyNowResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  v1::SubmitMentionRequest submit;
  submit.set_source(request->source());
  submit.set_target(request->target());
  intake::SubmitMentionValidation validation = intake::Validate(submit, tracking_);
  if (const auto* rejection = std::get_if<intake::Rejection>(&validation)) {
    response->set_decision(v1::DECISION_REJECTED);
    response->set_reason(rejection->reason);
    response->set_reason_description(rejection->description);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  if (verify_now_.jobs == nullptr || verify_now_.verifier == nullptr ||
      verify_now_.pool == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "VerifyNow is not enabled"));
    return reactor;
  }
  const auto& normalized = std::get<intake::NormalizedMention>(validation);
  if (absl::Status status = RequireSite(*caller, normalized.target_domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  store::NewMention mention{request->source(),
                            request->target(),
                            normalized.key.source_hash,
                            normalized.key.target_hash,
                            normalized.target_domain,
                            normalized.key.normalized_target,
                            normalized.key.normalized_source};
  const bool queued = verify_now_.pool->TrySubmit(
      [this, context, reactor, response, mention = std::move(mention),
       sites = std::move(caller->sites)]() mutable {
        if (context->IsCancelled()) {
          reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled"));
          return;
        }
        absl::StatusOr<store::SubmitResult> submitted = store_.Submit(mention);
        if (!submitted.ok()) {
          reactor->Finish(status::ToGrpcStatus(submitted.status()));
          return;
        }
        if (submitted->target != store::TargetMatch::kServed) {
          const bool unknown_site = submitted->target == store::TargetMatch::kUnknownSite;
          response->set_decision(v1::DECISION_REJECTED);
          response->set_reason(
              std::string(unknown_site ? intake::kTargetNotSupported : intake::kTargetNotFound));
          response->set_reason_description(
              unknown_site ? "The target is not on a site that receives webmentions here."
                           : "The target is not a page of this site that receives webmentions.");
          reactor->Finish(grpc::Status::OK);
          return;
        }
        absl::StatusOr<VerifyNowResult> verified =
            VerifyMentionNow(verify_now_, store_, submitted->mention_id, sites);
        if (!verified.ok()) {
          reactor->Finish(status::ToGrpcStatus(verified.status()));
          return;
        }
        response->set_decision(v1::DECISION_ACCEPTED);
        ToProto(verified->mention, response->mutable_mention());
        if (verified->mention.state == store::MentionState::kPending &&
            !verified->transient_reason.empty()) {
          response->mutable_mention()->set_reason(verified->transient_reason);
        }
        reactor->Finish(grpc::Status::OK);
      });
  if (!queued) {
    logging::Warn("refused VerifyNow: its pool is full");
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "verifier overloaded, retry later"));
  }
  return reactor;
}

}  // namespace portcullis::verifier::server
