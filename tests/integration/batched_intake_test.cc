// Issue 21: concurrent POST /webmention requests through the real gateway and verifier go to the
// verifier as SubmitMentions batch calls (coalesced in the gateway), and each request still gets
// its own answer: accepted ones their own mention, refusals (per item) their own status.
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/integration/metrics_support.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

class BatchedIntakeTest : public StackTest {
 protected:
  BatchedIntakeTest() { start_stack_ = false; }

  double VerifierCalls(absl::string_view method) const {
    const std::string scrape = testing::SendHttp(verifier_admin_port_, "GET", "/metrics").body;
    return SumSamples(scrape, "portcullis_verifier_grpc_requests_total",
                      {absl::StrCat("method=\"/portcullis.verifier.v1.Verifier/", method, "\"")});
  }

  const int verifier_admin_port_ = testing::FreeLoopbackPort();
};

// What one POST sent, and what it must get.
enum class IntakeKind { kNew, kUnknownSite, kSameAsTarget, kGreedyHost };

IntakeKind IntakeKindOf(int i) {
  if (i % 10 == 3) return IntakeKind::kUnknownSite;
  if (i % 10 == 6) return IntakeKind::kSameAsTarget;
  if (i % 20 == 9) return IntakeKind::kGreedyHost;
  return IntakeKind::kNew;
}

TEST_F(BatchedIntakeTest, ManyConcurrentPostsAreCoalescedAndEachIsAnsweredAsItsOwn) {
  // At most 3 PENDING mentions per source host: the "greedy" host's posts beyond it are 429.
  ASSERT_TRUE(stack_
                  ->StartVerifier({absl::StrCat("--admin_listen=127.0.0.1:", verifier_admin_port_),
                                   "--workers=0", "--max_pending_per_source_host=3"})
                  .ok());
  ASSERT_TRUE(stack_->StartGateway().ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  ASSERT_TRUE(stack_->ServeTarget("https://b.example/*").ok());

  constexpr int kThreads = 40;
  constexpr int kPerThread = 5;
  constexpr int kPosts = kThreads * kPerThread;
  std::mutex mu;
  std::map<int, testing::HttpResult> results;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int i = t * kPerThread + k;
        std::string source = absl::StrCat("https://s", i, ".example/post");
        std::string target = absl::StrCat("https://b.example/", i);
        switch (IntakeKindOf(i)) {
          case IntakeKind::kNew:
            break;
          case IntakeKind::kUnknownSite:
            target = absl::StrCat("https://unknown.example/", i);
            break;
          case IntakeKind::kSameAsTarget:
            source = target;
            break;
          case IntakeKind::kGreedyHost:
            source = absl::StrCat("https://greedy.example/", i);
            break;
        }
        testing::HttpResult result = stack_->PostWebmention(source, target);
        std::lock_guard<std::mutex> lock(mu);
        results[i] = std::move(result);
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  ASSERT_EQ(results.size(), static_cast<size_t>(kPosts));

  std::set<std::string> ids;
  int new_pairs = 0;
  int greedy_accepted = 0;
  int greedy_refused = 0;
  for (const auto& [i, result] : results) {
    switch (IntakeKindOf(i)) {
      case IntakeKind::kNew: {
        ASSERT_EQ(result.status, 202) << i << ": " << result.body << result.error;
        const json::object body = json::parse(result.body).as_object();
        EXPECT_EQ(body.at("state").as_string(), "PENDING");
        ids.insert(std::string(body.at("mention_id").as_string()));
        ++new_pairs;
        break;
      }
      case IntakeKind::kUnknownSite:
        EXPECT_EQ(result.status, 400) << i << ": " << result.body;
        EXPECT_EQ(json::parse(result.body).at("error").as_string(), "target_not_supported") << i;
        break;
      case IntakeKind::kSameAsTarget:
        EXPECT_EQ(result.status, 400) << i << ": " << result.body;
        EXPECT_EQ(json::parse(result.body).at("error").as_string(), "same_source_and_target")
            << i;
        break;
      case IntakeKind::kGreedyHost:
        if (result.status == 202) {
          ++greedy_accepted;
        } else {
          EXPECT_EQ(result.status, 429) << i << ": " << result.body;
          EXPECT_FALSE(result.Header("retry-after").empty()) << i;
          ++greedy_refused;
        }
        break;
    }
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(new_pairs)) << "each new pair its own mention";
  EXPECT_GE(greedy_accepted, 3);
  EXPECT_GE(greedy_refused, 1) << "the per-host limit refused the items over it, and only those";
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), new_pairs + greedy_accepted)
      << "every 202 is a stored row, nothing else was stored";

  // The proof of coalescing: fewer batch calls than posts, and no single-item calls at all.
  const double batch_calls = VerifierCalls("SubmitMentions");
  EXPECT_GT(batch_calls, 0);
  EXPECT_LT(batch_calls, kPosts) << "concurrent posts shared calls";
  EXPECT_EQ(VerifierCalls("SubmitMention"), 0);
  std::printf("[ batched ] %d posts in %.0f SubmitMentions calls\n", kPosts, batch_calls);
}

TEST_F(BatchedIntakeTest, ManyConcurrentIngestDeliveriesAreCoalescedAndEachIsAnsweredAsItsOwn) {
  ASSERT_TRUE(stack_
                  ->StartVerifier({absl::StrCat("--admin_listen=127.0.0.1:", verifier_admin_port_),
                                   "--workers=0"})
                  .ok());
  ASSERT_TRUE(stack_->StartGateway().ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  {
    auto stub = verifier::v1::Verifier::NewStub(stack_->AdminChannel());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    verifier::v1::AddPublisherRequest request;
    request.mutable_publisher()->set_name("feeds.example");
    verifier::v1::AddPublisherResponse response;
    const grpc::Status added = stub->AddPublisher(&context, request, &response);
    ASSERT_TRUE(added.ok()) << added.error_message();
  }

  constexpr int kThreads = 30;
  constexpr int kPerThread = 4;
  constexpr int kPosts = kThreads * kPerThread;
  // i % 4: 0 a synthetic unsigned item (dropped, 200); 1 a copy of one shared item (one accepted,
  // the others its duplicates); 2 an unknown publisher (403); 3 an item of its own (accepted).
  std::mutex mu;
  std::map<int, testing::HttpResult> results;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int i = t * kPerThread + k;
        std::string body = absl::StrCat(R"({"id":"item-)", i, R"(","content":"by a person"})");
        std::string publisher = "feeds.example";
        if (i % 4 == 0) {
          body = absl::StrCat(R"({"id":"item-)", i, R"(","content":"x","is_synthetic":true})");
        } else if (i % 4 == 1) {
          body = R"({"id":"shared","content":"the same item"})";
        } else if (i % 4 == 2) {
          publisher = "nobody.example";
        }
        testing::HttpResult result =
            testing::SendHttp(stack_->http_port(), "POST", "/ingest", body, "application/json",
                              absl::Seconds(30), {{"X-Provenance-Source", publisher}});
        std::lock_guard<std::mutex> lock(mu);
        results[i] = std::move(result);
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  ASSERT_EQ(results.size(), static_cast<size_t>(kPosts));
  int own_accepted = 0;
  int shared_accepted = 0;
  int shared_duplicates = 0;
  for (const auto& [i, result] : results) {
    const std::string action = result.Header("x-ingest-action");
    switch (i % 4) {
      case 0:
        EXPECT_EQ(result.status, 200) << i << ": " << result.body;
        EXPECT_EQ(action, "drop") << i;
        break;
      case 1:
        if (action == "accept") {
          EXPECT_EQ(result.status, 202) << i;
          ++shared_accepted;
        } else {
          EXPECT_EQ(result.status, 200) << i << ": " << result.body;
          EXPECT_EQ(action, "duplicate") << i;
          ++shared_duplicates;
        }
        break;
      case 2:
        EXPECT_EQ(result.status, 403) << i << ": " << result.body;
        break;
      case 3:
        EXPECT_EQ(result.status, 202) << i << ": " << result.body;
        EXPECT_EQ(action, "accept") << i;
        EXPECT_EQ(json::parse(result.body).at("item_id").as_string(), absl::StrCat("item-", i));
        ++own_accepted;
        break;
    }
  }
  EXPECT_EQ(shared_accepted, 1) << "copies of one item in concurrent batches: one decision";
  EXPECT_EQ(shared_duplicates, kPosts / 4 - 1);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM ingest_items"), own_accepted + 1)
      << "every 202 is an outbox item, nothing else is";

  const double batch_calls = VerifierCalls("EvaluateIngestBatch");
  EXPECT_GT(batch_calls, 0);
  EXPECT_LT(batch_calls, kPosts) << "concurrent deliveries shared calls";
  EXPECT_EQ(VerifierCalls("EvaluateIngest"), 0);
  std::printf("[ batched ] %d deliveries in %.0f EvaluateIngestBatch calls\n", kPosts,
              batch_calls);
}

}  // namespace
}  // namespace portcullis::integration
