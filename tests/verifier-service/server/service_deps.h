#pragma once

// A whole VerifierService for tests that need no database: null implementations of every store
// (each call answers INTERNAL "unused", so a test that reaches one it did not mean to sees the
// error, which the service answers UNAVAILABLE), a real SafeFetcher over a resolver and an HTTP
// client that know no host, a real IngestEvaluator over the null stores, and small pools. A test
// points the parts it exercises at its own fakes or mocks before Build().

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verifier-service/store/null_delivery_store.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/http_client.h"
#include "verifier-service/src/fetch/resolver.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/intake/target_rules.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/job_store.h"

namespace portcullis::verifier::test_service {

using store::testing::NullDeliveryStore;

inline absl::Status Unused() { return absl::InternalError("unused"); }

class NullMentionStore final : public store::MentionStore {
 public:
  absl::StatusOr<store::SubmitResult> Submit(const store::NewMention&) override {
    return Unused();
  }
  absl::StatusOr<store::StoredMention> Get(absl::string_view, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::MentionPage> List(const store::MentionQuery&,
                                          const auth::SiteBinding&) override {
    return Unused();
  }
  absl::Status Ping() override { return absl::OkStatus(); }
};

class NullPublicMentionStore final : public store::PublicMentionStore {
 public:
  absl::StatusOr<std::vector<store::StoredMention>> ListPublic(
      const store::PublicMentionQuery&, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::PublicMentionCounts> CountPublic(absl::Span<const crypto::Sha256Digest>,
                                                         const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::MentionChangePage> ListChanges(absl::string_view, absl::string_view, int,
                                                       const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::StoredMention>> Export(absl::string_view, int64_t, int,
                                                           const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::ImportResult> Import(absl::Span<const store::ImportedMention>, bool,
                                             const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::string> FindProxiedPhoto(absl::string_view,
                                               const auth::SiteBinding&) override {
    return Unused();
  }
};

class NullSiteStore final : public store::SiteStore {
 public:
  absl::StatusOr<store::AddSiteResult> AddSite(const std::string&,
                                               const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::SiteRecord>> ListSites(const std::string&, int,
                                                           const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<int64_t> RemoveSite(const std::string&, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::AddTargetsResult> AddTargets(absl::Span<const intake::TargetRule>,
                                                     const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::TargetRecord>> ListTargets(
      const std::string&, const std::optional<intake::TargetRule>&, int,
      const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::TargetRecord> RemoveTarget(const std::string&, intake::TargetKind,
                                                   const auth::SiteBinding&) override {
    return Unused();
  }
};

class NullBlocklistStore final : public store::BlocklistStore {
 public:
  absl::StatusOr<bool> AddBlock(const store::BlockEntry&, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::BlockRecord>> ListBlocks(const std::string&,
                                                             const std::string&,
                                                             const std::string&, int,
                                                             const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<bool> RemoveBlock(const store::BlockEntry&, const auth::SiteBinding&) override {
    return Unused();
  }
};

class NullModerationStore final : public store::ModerationStore {
 public:
  absl::StatusOr<store::SiteRecord> SetSiteSettings(const std::string&,
                                                    const store::SiteSettingsChange&,
                                                    const auth::SiteBinding&) override {
    return Unused();
  }
  absl::Status Review(absl::string_view, store::ReviewAction, const std::string&,
                      const std::string&, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::AddApprovalRuleResult> AddRule(const store::ApprovalRuleRecord&, bool,
                                                       const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::ApprovalRuleRecord>> ListRules(
      const std::string&, const auth::SiteBinding&) override {
    return Unused();
  }
  absl::StatusOr<store::ApprovalRuleRecord> RemoveRule(absl::string_view,
                                                       const auth::SiteBinding&) override {
    return Unused();
  }
};

class NullTokenStore final : public store::TokenStore {
 public:
  absl::StatusOr<std::vector<store::ActiveTokenRow>> ListActiveTokens() override {
    return std::vector<store::ActiveTokenRow>();
  }
  absl::StatusOr<store::TokenRecord> CreateToken(const std::string&,
                                                 const store::TokenHolder&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::TokenRecord>> ListTokens() override { return Unused(); }
  absl::StatusOr<store::TokenRecord> RevokeToken(const std::string&) override { return Unused(); }
};

class NullPublisherStore final : public store::PublisherStore {
 public:
  absl::StatusOr<std::optional<store::PublisherRecord>> GetPublisher(const std::string&) override {
    return Unused();
  }
  absl::StatusOr<store::AddPublisherResult> AddPublisher(const store::PublisherSettings&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::PublisherRecord>> ListPublishers(const std::string&,
                                                                     int) override {
    return Unused();
  }
  absl::StatusOr<store::PublisherRecord> SetEnabled(const std::string&, bool) override {
    return Unused();
  }
  absl::StatusOr<store::PublisherRecord> UpdateSettings(
      const std::string&, const store::PublisherSettingsChange&) override {
    return Unused();
  }
  absl::StatusOr<store::AddKeyResult> AddKey(const std::string&, const std::string&,
                                             const std::string&) override {
    return Unused();
  }
  absl::StatusOr<store::PublisherKeyRecord> RevokeKey(const std::string&,
                                                      const std::string&) override {
    return Unused();
  }
};

class NullIngestStore final : public store::IngestStore {
 public:
  absl::StatusOr<std::optional<store::DecisionRecord>> FindDecision(const std::string&,
                                                                    const std::string&,
                                                                    absl::Time) override {
    return Unused();
  }
  absl::StatusOr<store::RecordResult> Record(const store::NewDecision&, absl::Time) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::DeadLetterRecord>> ListDeadLetters(
      const std::string&, const std::optional<store::DeadLetterPosition>&, int) override {
    return Unused();
  }
  absl::StatusOr<std::optional<store::DeadLetterRecord>> GetDeadLetter(
      const std::string&) override {
    return Unused();
  }
  absl::Status DiscardDeadLetter(const std::string&) override { return Unused(); }
  absl::StatusOr<std::vector<store::AcceptedItemRecord>> ListAcceptedItems(int64_t,
                                                                           int) override {
    return Unused();
  }
  absl::StatusOr<std::vector<store::DroppedDeliveryRecord>> ListDrops(
      const store::DropFilter&, const std::optional<store::DropPosition>&, int) override {
    return Unused();
  }
};

class NullErasureStore final : public store::ErasureStore {
 public:
  absl::StatusOr<store::ErasureOutcome> Erase(const store::ErasureKey&, bool,
                                              const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<int64_t> Undo(const store::ErasureKey&, const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
};

class NullJobStore final : public store::JobStore {
 public:
  absl::StatusOr<std::vector<store::JobRecord>> Claim(const std::string&, int,
                                                      absl::Duration) override {
    return Unused();
  }
  absl::StatusOr<int> RenewLeases(const std::string&, absl::Span<const int64_t>,
                                  absl::Duration) override {
    return Unused();
  }
  absl::Status Finish(int64_t, const std::string&, const store::JobResult&) override {
    return Unused();
  }
  absl::Status ReleaseAll(const std::string&) override { return Unused(); }
  absl::StatusOr<std::optional<absl::Duration>> NextDueIn() override { return Unused(); }
  absl::StatusOr<store::MentionClaim> ClaimMention(const std::string&, const std::string&,
                                                   absl::Duration) override {
    return Unused();
  }
};

class NullVerifier final : public queue::MentionVerifier {
 public:
  queue::VerificationOutcome Verify(const store::JobRecord&) override {
    return {queue::VerificationOutcome::Kind::kRetry, "unused"};
  }
};

// Knows no host: NXDOMAIN.
class NullResolver final : public fetch::Resolver {
 public:
  void Resolve(absl::string_view host, Callback callback) override {
    std::move(callback)(absl::NotFoundError(absl::StrCat(host, ": NXDOMAIN")));
  }
};

// Reaches no server.
class NullHttpClient final : public fetch::HttpClient {
 public:
  void Fetch(fetch::HttpRequest, Callback callback) override {
    std::move(callback)(absl::UnavailableError("connection refused"));
  }
};

// SubmitMention's writes through whatever MentionStore `*store` points at when the call comes, on
// the caller's thread (the real service batches them: store/mention_writer.h).
class StoreSubmitter final : public store::MentionSubmitter {
 public:
  explicit StoreSubmitter(store::MentionStore* const* store) : store_(store) {}
  void Submit(store::NewMention mention, Done done) override {
    std::move(done)((*store_)->Submit(mention));
  }
  void SubmitAll(std::vector<Submission> submissions) override {
    for (Submission& submission : submissions) {
      Submit(std::move(submission.mention), std::move(submission.done));
    }
  }

 private:
  store::MentionStore* const* store_;
};

// The parts of a whole service. Point any of the pointers at another implementation, then
// Build(); the parts must outlive the service.
struct ServiceParts {
  ServiceParts() {
    deps.pool = &pool;
    deps.mentions = &mentions;
    deps.public_mentions = &public_mentions;
    deps.submissions = &submitter;
    deps.sites = &sites;
    deps.blocks = &blocks;
    deps.moderation = &moderation;
    deps.token_store = &token_store;
    deps.policy = &policy;
    deps.resolver = &resolver;
    deps.evaluator = &evaluator;
    deps.publishers = &publishers;
    deps.ingest = &ingest;
    deps.verify_now.jobs = &jobs;
    deps.verify_now.verifier = &verifier;
    deps.verify_now.pool = &verify_now_pool;
    deps.erasures = &erasures;
    deps.deliveries = &deliveries;
  }

  // The service over `deps` (a SafeFetcher over deps.resolver and `http` unless deps.fetcher is
  // set), ready.
  std::unique_ptr<server::VerifierService> Build(auth::TokenRegistry& tokens,
                                                 fetch::HttpClient* http_client = nullptr) {
    deps.tokens = &tokens;
    if (deps.fetcher == nullptr) {
      fetcher = *fetch::SafeFetcher::Create(fetch::SafeFetcherConfig(), deps.policy, deps.resolver,
                                            http_client != nullptr ? http_client : &http);
      deps.fetcher = fetcher.get();
    }
    absl::StatusOr<std::unique_ptr<server::VerifierService>> service =
        server::VerifierService::Create(deps);
    EXPECT_TRUE(service.ok()) << service.status();
    if (!service.ok()) {
      return nullptr;
    }
    (*service)->SetReady(true);
    return *std::move(service);
  }

  server::BlockingPool pool{2, 16};
  server::BlockingPool verify_now_pool{1, 4};
  NullMentionStore mentions;
  NullPublicMentionStore public_mentions;
  StoreSubmitter submitter{&deps.mentions};
  NullSiteStore sites;
  NullBlocklistStore blocks;
  NullModerationStore moderation;
  NullTokenStore token_store;
  fetch::EgressPolicy policy;
  NullResolver resolver;
  NullHttpClient http;
  std::unique_ptr<fetch::SafeFetcher> fetcher;
  NullPublisherStore publishers;
  NullIngestStore ingest;
  ingest::IngestEvaluator evaluator{publishers, ingest, ingest::IngestEvaluatorOptions()};
  NullJobStore jobs;
  NullVerifier verifier;
  NullErasureStore erasures;
  NullDeliveryStore deliveries;
  server::VerifierServiceDeps deps;
};

}  // namespace portcullis::verifier::test_service
