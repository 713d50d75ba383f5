#include "verifier-service/src/server/verify_now_rpcs.h"

#include <utility>
#include <variant>

#include "absl/random/random.h"
#include "absl/time/clock.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/queue/verification_worker.h"
#include "verifier-service/src/server/mention_rpcs.h"
#include "verifier-service/src/server/unary_rpc.h"
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
                                                 const auth::SiteBinding& visible_sites,
                                                 absl::string_view request_id) {
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
    logging::Info("request_id={} verify_now mention={} attempt={} outcome_reason={}",
                  std::string(request_id),
                  mention_id, job.attempts, recorded.reason.empty() ? "-" : recorded.reason);
    break;
  }
  absl::StatusOr<store::StoredMention> mention = mentions.Get(mention_id, visible_sites);
  if (!mention.ok()) {
    return mention.status();
  }
  result.mention = *std::move(mention);
  return result;
}

PORTCULLIS_VERIFIER_RPC(VerifyNow) {
  return rpcs_.Serve(
      "VerifyNow", context, request, response, kAdminAccess,
      [this](const v1::VerifyNowRequest& request, const auth::Caller& caller) {
        return ValidateSubmission(request.source(), request.target(), tracking_, caller);
      },
      // Its own threads: a verification blocks for seconds.
      OnPool(*deps_.verify_now.pool,
             [this, response](store::NewMention mention, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::SubmitResult submitted, deps_.mentions->Submit(mention));
               if (std::optional<intake::Rejection> rejection = UnservedTarget(submitted.target)) {
                 WriteRejection(*rejection, response);
                 return absl::OkStatus();
               }
               ASSIGN_OR_RETURN(VerifyNowResult verified,
                                VerifyMentionNow(deps_.verify_now, *deps_.mentions,
                                                 submitted.mention_id, call.sites(),
                                                 call.request_id()));
               response->set_decision(v1::DECISION_ACCEPTED);
               ToProto(verified.mention, response->mutable_mention());
               if (verified.mention.state == store::MentionState::kPending &&
                   !verified.transient_reason.empty()) {
                 response->mutable_mention()->set_reason(verified.transient_reason);
               }
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
