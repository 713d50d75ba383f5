#pragma once

#include <atomic>

#include "absl/types/optional.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/resolver.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/server/verify_now_rpc.h"
#include "verifier-service/src/store/blocklist_store.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/publisher_store.h"
#include "verifier-service/src/store/site_store.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::server {

// What CheckUrl and SafeFetch run on; borrowed, they must outlive the service. When `fetcher` is
// null those RPCs answer UNIMPLEMENTED.
struct FetchBackend {
  const fetch::EgressPolicy* policy = nullptr;
  fetch::Resolver* resolver = nullptr;
  fetch::SafeFetcher* fetcher = nullptr;
};

// What the ingest, publisher and dead-letter RPCs run on; borrowed, they must outlive the service.
// When unset those RPCs answer UNIMPLEMENTED.
struct IngestBackend {
  bool configured() const {
    return evaluator != nullptr && publishers != nullptr && ingest != nullptr;
  }

  ingest::IngestEvaluator* evaluator = nullptr;
  store::PublisherStore* publishers = nullptr;
  store::IngestStore* ingest = nullptr;
};

// portcullis.verifier.v1.Verifier on the gRPC callback API. Every call is first authorized in
// memory (authorized_call.h: ready, bearer token, scope, site binding), then validated inline
// (cheap, no I/O); store calls run on the blocking pool, which finishes the reactor, and get the
// caller's site binding so that another site's data never leaves the database. When the pool's
// queue is full, or before the database schema is ready, calls are answered UNAVAILABLE at once.
// CheckUrl and SafeFetch need no database: they run on the resolver's and the fetcher's event
// loops, whose callbacks finish the reactor.
class VerifierService final : public portcullis::verifier::v1::Verifier::CallbackService {
 public:
  // `tokens`, the stores and `pool` must outlive the service and any call in flight.
  VerifierService(auth::TokenRegistry& tokens, store::MentionStore& store, store::SiteStore& sites,
                  BlockingPool& pool, FetchBackend fetch = {})
      : tokens_(tokens), store_(store), sites_(sites), pool_(pool), fetch_(fetch) {}

  // Before the server starts: enables CreateToken, ListTokens, RevokeToken (token_rpc.cc);
  // borrowed.
  void SetTokenStore(store::TokenStore* token_store) { token_store_ = token_store; }

  // Before the server starts: enables VerifyNow (verify_now_rpc.cc).
  void SetVerifyNowBackend(VerifyNowBackend backend) { verify_now_ = std::move(backend); }

  // Before the server starts: enables the ingest RPCs (verifier_service_ingest.cc).
  void SetIngestBackend(IngestBackend backend) { ingest_ = backend; }

  // Before the server starts: enables the blocklist admin RPCs (blocklist_rpc.cc); borrowed.
  void SetBlocklistStore(store::BlocklistStore* blocks) { blocks_ = blocks; }

  // Calls are answered UNAVAILABLE until this is set (migrations applied).
  void SetReady(bool ready) { ready_.store(ready); }

  grpc::ServerUnaryReactor* SubmitMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SubmitMentionRequest* request,
      portcullis::verifier::v1::SubmitMentionResponse* response) override;

  grpc::ServerUnaryReactor* GetMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::GetMentionRequest* request,
      portcullis::verifier::v1::GetMentionResponse* response) override;

  // Read (mention_read_rpc.h holds the validation and the mapping).
  grpc::ServerUnaryReactor* ListMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListMentionsRequest* request,
      portcullis::verifier::v1::ListMentionsResponse* response) override;

  grpc::ServerUnaryReactor* AddSite(grpc::CallbackServerContext* context,
                                    const portcullis::verifier::v1::AddSiteRequest* request,
                                    portcullis::verifier::v1::AddSiteResponse* response) override;

  grpc::ServerUnaryReactor* ListSites(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListSitesRequest* request,
      portcullis::verifier::v1::ListSitesResponse* response) override;

  grpc::ServerUnaryReactor* RemoveSite(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RemoveSiteRequest* request,
      portcullis::verifier::v1::RemoveSiteResponse* response) override;

  grpc::ServerUnaryReactor* AddTarget(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::AddTargetRequest* request,
      portcullis::verifier::v1::AddTargetResponse* response) override;

  grpc::ServerUnaryReactor* ImportTargets(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ImportTargetsRequest* request,
      portcullis::verifier::v1::ImportTargetsResponse* response) override;

  grpc::ServerUnaryReactor* ListTargets(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListTargetsRequest* request,
      portcullis::verifier::v1::ListTargetsResponse* response) override;

  grpc::ServerUnaryReactor* RemoveTarget(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RemoveTargetRequest* request,
      portcullis::verifier::v1::RemoveTargetResponse* response) override;

  grpc::ServerUnaryReactor* CheckUrl(grpc::CallbackServerContext* context,
                                     const portcullis::verifier::v1::CheckUrlRequest* request,
                                     portcullis::verifier::v1::CheckUrlResponse* response) override;

  grpc::ServerUnaryReactor* SafeFetch(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SafeFetchRequest* request,
      portcullis::verifier::v1::SafeFetchResponse* response) override;

  // Synchronous verification (verify_now_rpc.cc).
  grpc::ServerUnaryReactor* VerifyNow(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::VerifyNowRequest* request,
      portcullis::verifier::v1::VerifyNowResponse* response) override;

  // Ingest (verifier_service_ingest.cc).
  grpc::ServerUnaryReactor* EvaluateIngest(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::EvaluateIngestRequest* request,
      portcullis::verifier::v1::EvaluateIngestResponse* response) override;

  grpc::ServerUnaryReactor* AddPublisher(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::AddPublisherRequest* request,
      portcullis::verifier::v1::AddPublisherResponse* response) override;

  grpc::ServerUnaryReactor* ListPublishers(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListPublishersRequest* request,
      portcullis::verifier::v1::ListPublishersResponse* response) override;

  grpc::ServerUnaryReactor* SetPublisherEnabled(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SetPublisherEnabledRequest* request,
      portcullis::verifier::v1::SetPublisherEnabledResponse* response) override;

  grpc::ServerUnaryReactor* AddPublisherKey(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::AddPublisherKeyRequest* request,
      portcullis::verifier::v1::AddPublisherKeyResponse* response) override;

  grpc::ServerUnaryReactor* RevokePublisherKey(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RevokePublisherKeyRequest* request,
      portcullis::verifier::v1::RevokePublisherKeyResponse* response) override;

  grpc::ServerUnaryReactor* ListDeadLetters(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListDeadLettersRequest* request,
      portcullis::verifier::v1::ListDeadLettersResponse* response) override;

  grpc::ServerUnaryReactor* ReplayDeadLetter(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ReplayDeadLetterRequest* request,
      portcullis::verifier::v1::ReplayDeadLetterResponse* response) override;

  grpc::ServerUnaryReactor* DiscardDeadLetter(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::DiscardDeadLetterRequest* request,
      portcullis::verifier::v1::DiscardDeadLetterResponse* response) override;

  grpc::ServerUnaryReactor* ListAcceptedItems(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListAcceptedItemsRequest* request,
      portcullis::verifier::v1::ListAcceptedItemsResponse* response) override;

  // Source blocklist (blocklist_rpc.cc).
  grpc::ServerUnaryReactor* AddBlock(grpc::CallbackServerContext* context,
                                     const portcullis::verifier::v1::AddBlockRequest* request,
                                     portcullis::verifier::v1::AddBlockResponse* response) override;
  grpc::ServerUnaryReactor* ListBlocks(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListBlocksRequest* request,
      portcullis::verifier::v1::ListBlocksResponse* response) override;
  grpc::ServerUnaryReactor* RemoveBlock(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RemoveBlockRequest* request,
      portcullis::verifier::v1::RemoveBlockResponse* response) override;

  // API tokens (token_rpc.cc).
  grpc::ServerUnaryReactor* CreateToken(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::CreateTokenRequest* request,
      portcullis::verifier::v1::CreateTokenResponse* response) override;
  grpc::ServerUnaryReactor* ListTokens(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListTokensRequest* request,
      portcullis::verifier::v1::ListTokensResponse* response) override;
  grpc::ServerUnaryReactor* RevokeToken(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RevokeTokenRequest* request,
      portcullis::verifier::v1::RevokeTokenResponse* response) override;

 private:
  // AuthorizeCall (authorized_call.h) on this call: the caller, or nullopt after finishing
  // `reactor` with the refusal. The first thing every handler does.
  absl::optional<auth::Caller> Admit(grpc::CallbackServerContext* context,
                                     grpc::ServerUnaryReactor* reactor, Access access);

  // Finishes `reactor` with UNIMPLEMENTED `message` (and returns true) unless the backend an RPC
  // needs was set before the server started: the guard of the ingest, blocklist and token RPCs.
  static bool FinishIfUnconfigured(bool configured, const char* message,
                                   grpc::ServerUnaryReactor* reactor);

  // Finishes `reactor` at once when not ready or the pool is full; otherwise runs `work` on the
  // pool (skipped when the call was cancelled meanwhile), which returns the call's status.
  void RunOnPool(const char* rpc, grpc::CallbackServerContext* context,
                 grpc::ServerUnaryReactor* reactor, absl::AnyInvocable<absl::Status() &&> work);

  auth::TokenRegistry& tokens_;
  store::MentionStore& store_;
  store::SiteStore& sites_;
  BlockingPool& pool_;
  const FetchBackend fetch_;
  // Query parameters left out of the de-duplication key.
  const url::TrackingParameters tracking_ = url::TrackingParameters::Default();
  std::atomic<bool> ready_{false};
  IngestBackend ingest_;
  VerifyNowBackend verify_now_;
  store::BlocklistStore* blocks_ = nullptr;
  store::TokenStore* token_store_ = nullptr;
};

}  // namespace portcullis::verifier::server
