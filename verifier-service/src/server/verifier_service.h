#pragma once

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/resolver.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verify_now_rpcs.h"
#include "verifier-service/src/store/blocklist_store.h"
#include "verifier-service/src/store/delivery_store.h"
#include "verifier-service/src/store/erasure_store.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/moderation_store.h"
#include "verifier-service/src/store/public_mention_store.h"
#include "verifier-service/src/store/publisher_store.h"
#include "verifier-service/src/store/site_store.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::server {

// Everything the service runs on; borrowed: each must outlive the service and any call in flight.
// Every pointer is required (VerifierService::Create names the first one missing).
struct VerifierServiceDeps {
  auth::TokenRegistry* tokens = nullptr;
  // The database calls' threads.
  BlockingPool* pool = nullptr;
  store::MentionStore* mentions = nullptr;
  // webmention.io's read API, export and import (public_mention_rpcs.cc).
  store::PublicMentionStore* public_mentions = nullptr;
  // SubmitMention's writes (answered when durable, no thread held meanwhile).
  store::MentionSubmitter* submissions = nullptr;
  store::SiteStore* sites = nullptr;
  store::BlocklistStore* blocks = nullptr;
  // Moderation (issue 16): review states, approval rules, site policies.
  store::ModerationStore* moderation = nullptr;
  // Hosts an approval rule may not name bare (--approval_rule_relay_hosts).
  std::vector<std::string> approval_rule_relay_hosts;
  store::TokenStore* token_store = nullptr;
  // CheckUrl and SafeFetch.
  const fetch::EgressPolicy* policy = nullptr;
  fetch::Resolver* resolver = nullptr;
  fetch::SafeFetcher* fetcher = nullptr;
  // The ingest, publisher and dead-letter RPCs.
  ingest::IngestEvaluator* evaluator = nullptr;
  store::PublisherStore* publishers = nullptr;
  store::IngestStore* ingest = nullptr;
  // VerifyNow (its jobs, verifier and pool are required).
  VerifyNowBackend verify_now;
  // Erase (issue 17).
  store::ErasureStore* erasures = nullptr;
  // Subscriptions and deliveries (issue 20).
  store::DeliveryStore* deliveries = nullptr;
};

// portcullis.verifier.v1.Verifier on the gRPC callback API. Every RPC goes through
// UnaryRpcs::Serve (unary_rpc.h): authorized in memory (authorized_call.h: ready, bearer token,
// scope, site binding), validated inline (cheap, no I/O), then its work: store calls on the
// blocking pool, with the caller's site binding so that another site's data never leaves the
// database; CheckUrl and SafeFetch on the resolver's and the fetcher's event loops. One file per
// RPC family (<family>_rpcs.{h,cc}) holds its validation, its proto mapping and its handlers.
class VerifierService final : public portcullis::verifier::v1::Verifier::CallbackService {
 public:
  // The whole service, or INVALID_ARGUMENT naming the first missing dependency.
  static absl::StatusOr<std::unique_ptr<VerifierService>> Create(const VerifierServiceDeps& deps);

  // Calls are answered UNAVAILABLE until this is set (migrations applied).
  void SetReady(bool ready) { ready_.store(ready); }

  // mention_rpcs.cc
  grpc::ServerUnaryReactor* SubmitMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SubmitMentionRequest* request,
      portcullis::verifier::v1::SubmitMentionResponse* response) override;

  grpc::ServerUnaryReactor* GetMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::GetMentionRequest* request,
      portcullis::verifier::v1::GetMentionResponse* response) override;

  grpc::ServerUnaryReactor* ListMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListMentionsRequest* request,
      portcullis::verifier::v1::ListMentionsResponse* response) override;

  // site_rpcs.cc (sites and their targets)
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

  // fetch_rpcs.cc
  grpc::ServerUnaryReactor* CheckUrl(grpc::CallbackServerContext* context,
                                     const portcullis::verifier::v1::CheckUrlRequest* request,
                                     portcullis::verifier::v1::CheckUrlResponse* response) override;

  grpc::ServerUnaryReactor* SafeFetch(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SafeFetchRequest* request,
      portcullis::verifier::v1::SafeFetchResponse* response) override;

  // verify_now_rpcs.cc
  grpc::ServerUnaryReactor* VerifyNow(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::VerifyNowRequest* request,
      portcullis::verifier::v1::VerifyNowResponse* response) override;

  // ingest_rpcs.cc (EvaluateIngest, dead letters, accepted items), publisher_rpcs.cc
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

  grpc::ServerUnaryReactor* UpdatePublisher(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::UpdatePublisherRequest* request,
      portcullis::verifier::v1::UpdatePublisherResponse* response) override;

  // blocklist_rpcs.cc
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

  // moderation_rpcs.cc (issue 16)
  grpc::ServerUnaryReactor* ReviewMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ReviewMentionRequest* request,
      portcullis::verifier::v1::ReviewMentionResponse* response) override;
  grpc::ServerUnaryReactor* ListReviewQueue(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListReviewQueueRequest* request,
      portcullis::verifier::v1::ListReviewQueueResponse* response) override;
  grpc::ServerUnaryReactor* AddApprovalRule(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::AddApprovalRuleRequest* request,
      portcullis::verifier::v1::AddApprovalRuleResponse* response) override;
  grpc::ServerUnaryReactor* ListApprovalRules(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListApprovalRulesRequest* request,
      portcullis::verifier::v1::ListApprovalRulesResponse* response) override;
  grpc::ServerUnaryReactor* RemoveApprovalRule(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RemoveApprovalRuleRequest* request,
      portcullis::verifier::v1::RemoveApprovalRuleResponse* response) override;
  grpc::ServerUnaryReactor* SetSiteSettings(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SetSiteSettingsRequest* request,
      portcullis::verifier::v1::SetSiteSettingsResponse* response) override;
  // public_mention_rpcs.cc (webmention.io read API, issue 18)
  grpc::ServerUnaryReactor* ListPublicMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListPublicMentionsRequest* request,
      portcullis::verifier::v1::ListPublicMentionsResponse* response) override;
  grpc::ServerUnaryReactor* CountPublicMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::CountPublicMentionsRequest* request,
      portcullis::verifier::v1::CountPublicMentionsResponse* response) override;
  grpc::ServerUnaryReactor* ListMentionChanges(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListMentionChangesRequest* request,
      portcullis::verifier::v1::ListMentionChangesResponse* response) override;
  grpc::ServerUnaryReactor* ExportMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ExportMentionsRequest* request,
      portcullis::verifier::v1::ExportMentionsResponse* response) override;
  grpc::ServerUnaryReactor* ImportMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ImportMentionsRequest* request,
      portcullis::verifier::v1::ImportMentionsResponse* response) override;

  // token_rpcs.cc
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

  // Issue 21: the batch calls. mention_rpcs.cc
  grpc::ServerUnaryReactor* SubmitMentions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SubmitMentionsRequest* request,
      portcullis::verifier::v1::SubmitMentionsResponse* response) override;
  // ingest_rpcs.cc
  grpc::ServerUnaryReactor* EvaluateIngestBatch(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::EvaluateIngestBatchRequest* request,
      portcullis::verifier::v1::EvaluateIngestBatchResponse* response) override;
  // lifecycle_rpcs.cc (issue 17)
  grpc::ServerUnaryReactor* Erase(grpc::CallbackServerContext* context,
                                  const portcullis::verifier::v1::EraseRequest* request,
                                  portcullis::verifier::v1::EraseResponse* response) override;
  grpc::ServerUnaryReactor* ListDrops(grpc::CallbackServerContext* context,
                                      const portcullis::verifier::v1::ListDropsRequest* request,
                                      portcullis::verifier::v1::ListDropsResponse* response) override;
  grpc::ServerUnaryReactor* ReevaluateDrops(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ReevaluateDropsRequest* request,
      portcullis::verifier::v1::ReevaluateDropsResponse* response) override;
  // delivery_rpcs.cc (issue 20)
  grpc::ServerUnaryReactor* CreateSubscription(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::CreateSubscriptionRequest* request,
      portcullis::verifier::v1::CreateSubscriptionResponse* response) override;
  grpc::ServerUnaryReactor* ListSubscriptions(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListSubscriptionsRequest* request,
      portcullis::verifier::v1::ListSubscriptionsResponse* response) override;
  grpc::ServerUnaryReactor* RemoveSubscription(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::RemoveSubscriptionRequest* request,
      portcullis::verifier::v1::RemoveSubscriptionResponse* response) override;
  grpc::ServerUnaryReactor* SendTestEvent(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SendTestEventRequest* request,
      portcullis::verifier::v1::SendTestEventResponse* response) override;
  grpc::ServerUnaryReactor* ListDeliveries(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ListDeliveriesRequest* request,
      portcullis::verifier::v1::ListDeliveriesResponse* response) override;
  grpc::ServerUnaryReactor* ReplayDeliveries(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::ReplayDeliveriesRequest* request,
      portcullis::verifier::v1::ReplayDeliveriesResponse* response) override;

  // avatar_rpcs.cc (issue 17)
  grpc::ServerUnaryReactor* FetchAvatar(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::FetchAvatarRequest* request,
      portcullis::verifier::v1::FetchAvatarResponse* response) override;

 private:
  explicit VerifierService(const VerifierServiceDeps& deps) : deps_(deps) {}

  const VerifierServiceDeps deps_;
  // Query parameters left out of the de-duplication key.
  const url::TrackingParameters tracking_ = url::TrackingParameters::Default();
  std::atomic<bool> ready_{false};
  const UnaryRpcs rpcs_{*deps_.tokens, ready_};
};

}  // namespace portcullis::verifier::server

// Defines VerifierService::Name, the handler of the RPC `Name` (the override of the generated
// CallbackService method), whose parameters are `context`, `request` (const v1::NameRequest*)
// and `response` (v1::NameResponse*). Each family's file defines its RPCs' handlers with it.
#define PORTCULLIS_VERIFIER_RPC(Name)                                                       \
  grpc::ServerUnaryReactor* ::portcullis::verifier::server::VerifierService::Name(          \
      grpc::CallbackServerContext* context,                                                 \
      const ::portcullis::verifier::v1::Name##Request* request,                             \
      ::portcullis::verifier::v1::Name##Response* response)
