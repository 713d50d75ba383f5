// The cluster's topology on loopback: two gateways and two verifiers on one PostgreSQL, every
// gateway dialing both verifiers (round_robin over an ipv4: list, as over the headless Service's
// DNS answer in a cluster). A bounded load of distinct webmentions through both gateways; one
// verifier is killed with SIGKILL mid-load and restarted. Checked against the database and the
// verifiers' own /metrics:
// - every submission is answered 202, or 503 with Retry-After (never 4xx or another 5xx); a
//   sender that honours Retry-After gets its 202 later;
// - every pair answered 202 has exactly one mention (lost = 0, duplicates = 0), with the
//   mention_id it was told, and exactly one queued verification job;
// - both verifiers answer a fair share of the calls before the kill and after the restart.
// A second test runs the verifiers' workers against a loopback page origin with ingest items in
// the load (see MultiInstanceWorkersTest below).
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/integration/metrics_support.h"
#include "tests/integration/stack.h"
#include "tests/support/ci.h"
#include "tools/portcullis/src/page_origin.h"

namespace portcullis::integration {
namespace {

constexpr int kSubmissions = 2000;
constexpr int kThreads = 8;
// Verifier 0 is killed once this many submissions were answered ...
constexpr int kKillAfter = 600;
// ... and restarted once submissions up to here were started (the rest wait for the restart).
constexpr int kRestartAt = 1200;
// No load step may take longer; the whole test is bounded by these.
constexpr absl::Duration kLoadDeadline = absl::Seconds(180);
constexpr int kMaxAttempts = 30;
// The gateway's reconnect backoff is at most 1 s (grpc_verifier_client.cc): a restarted verifier
// is connected again within it.
constexpr absl::Duration kReconnect = absl::Seconds(2);
// The gateway submits through the batch call (issue 21).
constexpr char kSubmitMethod[] = "method=\"/portcullis.verifier.v1.Verifier/SubmitMentions\"";

std::string Source(int i) { return absl::StrCat("https://sender", i % 97, ".example/reply/", i); }
std::string Target(int i) { return absl::StrCat("https://b.example/post/", i); }

// What one submission came to, as its sender saw it.
struct Outcome {
  int final_status = 0;
  int attempts = 0;
  int unavailable = 0;  // 503s with Retry-After before the 202.
  std::string mention_id;
  std::vector<std::string> bad;  // Answers outside the contract.
};

std::string MentionId(const std::string& body) {
  const std::string key = "\"mention_id\":\"";
  const size_t at = body.find(key);
  if (at == std::string::npos) {
    return "";
  }
  const size_t end = body.find('"', at + key.size());
  return body.substr(at + key.size(), end - at - key.size());
}

class MultiInstanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = testing::TestDatabase::Create();
    if (!database.ok()) {
      if (testing::RunningInCi()) {
        FAIL() << "CI=true but no test PostgreSQL: " << database.status();
      }
      GTEST_SKIP() << "SKIPPED, needs PostgreSQL (run through scripts/test): " << database.status();
    }
    database_ = std::move(database).value();
    // Two Stacks on one database: stack i runs verifier i and gateway i; both gateways are
    // pointed at both verifiers (a later --verifier wins over the Stack's own).
    for (int i = 0; i < 2; ++i) {
      stacks_[i] = std::make_unique<Stack>(*database_);
      verifier_admin_[i] = testing::FreeLoopbackPort();
    }
    stacks_[1]->UseTokensOf(*stacks_[0]);  // Each gateway calls both verifiers.
    const std::string both = absl::StrCat("--verifier=ipv4:127.0.0.1:", stacks_[0]->grpc_port(),
                                          ",127.0.0.1:", stacks_[1]->grpc_port());
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(StartVerifier(i).ok());
    }
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(stacks_[i]->StartGateway({both, "--retry_after_seconds=1"}).ok());
    }
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(stacks_[i]->WaitForReadyz(200, absl::Seconds(30)).ok());
      ASSERT_TRUE(WaitServing(i).ok());
    }
    ASSERT_TRUE(stacks_[0]->ServeTarget("https://b.example/post/*").ok());
  }

  void TearDown() override {
    for (auto& stack : stacks_) {
      stack.reset();
    }
  }

  // The verifier's flags besides its admin port. Here --workers=0: nothing verifies (no fetches
  // leave loopback); every job stays queued, so the queue can be counted exactly.
  virtual std::vector<std::string> VerifierArgs() const { return {"--workers=0"}; }

  absl::Status StartVerifier(int i) {
    std::vector<std::string> args = VerifierArgs();
    args.push_back(absl::StrCat("--admin_listen=127.0.0.1:", verifier_admin_[i]));
    return stacks_[i]->StartVerifier(args);
  }

  // Waits until verifier `i` answers grpc.health.v1 SERVING.
  absl::Status WaitServing(int i) {
    auto stub = grpc::health::v1::Health::NewStub(
        stacks_[i]->Channel(""));  // Health checks need no token.
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
      context.set_wait_for_ready(true);
      grpc::health::v1::HealthCheckRequest request;
      grpc::health::v1::HealthCheckResponse response;
      if (stub->Check(&context, request, &response).ok() &&
          response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
        return absl::OkStatus();
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::DeadlineExceededError(absl::StrCat("verifier ", i, " not SERVING"));
  }

  // SubmitMention calls verifier `i` answered (any code) since it started.
  double SubmitCalls(int i) const {
    const testing::HttpResult scrape =
        testing::SendHttp(verifier_admin_[i], "GET", "/metrics", "", "", absl::Seconds(5));
    return SumSamples(scrape.body, "portcullis_verifier_grpc_requests_total", {kSubmitMethod});
  }

  // One sender: submits pair `i` through gateway `i % 2` until a 202 (honouring Retry-After),
  // recording every answer.
  Outcome Submit(int i, absl::Time deadline) const {
    Outcome outcome;
    const Stack& gateway = *stacks_[i % 2];
    while (outcome.attempts < kMaxAttempts && absl::Now() < deadline) {
      ++outcome.attempts;
      const testing::HttpResult result = gateway.PostWebmention(Source(i), Target(i));
      outcome.final_status = result.status;
      if (result.status == 202) {
        outcome.mention_id = MentionId(result.body);
        return outcome;
      }
      int retry_after = 0;
      if (result.status == 503 && absl::SimpleAtoi(result.Header("retry-after"), &retry_after) &&
          retry_after > 0) {
        ++outcome.unavailable;
        absl::SleepFor(absl::Seconds(std::min(retry_after, 5)));
        continue;
      }
      outcome.bad.push_back(
          absl::StrCat(result.status, " ", result.error, " ", result.body.substr(0, 200)));
      return outcome;
    }
    return outcome;
  }

  std::unique_ptr<testing::TestDatabase> database_;
  std::unique_ptr<Stack> stacks_[2];
  int verifier_admin_[2] = {0, 0};
};

TEST_F(MultiInstanceTest, NothingLostOrDuplicatedWhenAVerifierIsKilledUnderLoad) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + kLoadDeadline;
  std::vector<Outcome> outcomes(kSubmissions);
  std::atomic<int> next{0};
  std::atomic<int> answered{0};
  absl::Mutex mu;
  bool restarted = false;

  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&] {
      while (true) {
        const int i = next.fetch_add(1);
        if (i >= kSubmissions) {
          return;
        }
        if (i >= kRestartAt) {
          absl::MutexLock lock(&mu);
          mu.AwaitWithDeadline(absl::Condition(&restarted), deadline);
        }
        outcomes[i] = Submit(i, deadline);
        answered.fetch_add(1);
      }
    });
  }

  // Phase 1: both verifiers up. Then SIGKILL verifier 0 by its PID.
  while (answered.load() < kKillAfter && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  const double before_kill[2] = {SubmitCalls(0), SubmitCalls(1)};
  const absl::Time killed_at = absl::Now();
  stacks_[0]->verifier().Signal(SIGKILL);
  const absl::StatusOr<int> exit_code = stacks_[0]->verifier().Wait(absl::Seconds(10));
  EXPECT_TRUE(exit_code.ok() && *exit_code == 128 + SIGKILL) << exit_code.status();

  // Phase 2: verifier 0 is dead; the load goes on until kRestartAt submissions were started.
  while (next.load() < kRestartAt + kThreads && absl::Now() < deadline &&
         answered.load() < kSubmissions) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  const int answered_while_down = answered.load();
  ASSERT_TRUE(StartVerifier(0).ok());
  ASSERT_TRUE(WaitServing(0).ok());
  const absl::Duration down = absl::Now() - killed_at;
  absl::SleepFor(kReconnect);
  const double after_restart[2] = {SubmitCalls(0), SubmitCalls(1)};

  // Phase 3: both up again for the rest of the load.
  {
    absl::MutexLock lock(&mu);
    restarted = true;
  }
  for (std::thread& sender : senders) {
    sender.join();
  }
  const absl::Duration elapsed = absl::Now() - start;
  const double at_end[2] = {SubmitCalls(0), SubmitCalls(1)};

  // What the senders saw.
  int accepted = 0;
  int unavailable_answers = 0;
  int submissions_with_503 = 0;
  int max_attempts = 0;
  std::vector<std::string> bad;
  for (int i = 0; i < kSubmissions; ++i) {
    const Outcome& o = outcomes[i];
    accepted += o.final_status == 202 ? 1 : 0;
    unavailable_answers += o.unavailable;
    submissions_with_503 += o.unavailable > 0 ? 1 : 0;
    max_attempts = std::max(max_attempts, o.attempts);
    for (const std::string& answer : o.bad) {
      bad.push_back(absl::StrCat("#", i, ": ", answer));
    }
    if (o.final_status != 202 && o.bad.empty()) {
      bad.push_back(absl::StrCat("#", i, ": no 202 after ", o.attempts, " attempts"));
    }
  }

  // What the database holds.
  pqxx::connection connection(database_->connection_string());
  pqxx::nontransaction work(connection);
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> rows;
  for (const pqxx::row& row : work.exec("SELECT source, target, id::text FROM mentions")) {
    rows[{row[0].as<std::string>(), row[1].as<std::string>()}].push_back(row[2].as<std::string>());
  }
  int lost = 0;
  int duplicates = 0;
  int wrong_id = 0;
  for (int i = 0; i < kSubmissions; ++i) {
    if (outcomes[i].final_status != 202) {
      continue;
    }
    const auto it = rows.find({Source(i), Target(i)});
    if (it == rows.end()) {
      ++lost;
      continue;
    }
    duplicates += static_cast<int>(it->second.size()) - 1;
    wrong_id += it->second.front() != outcomes[i].mention_id ? 1 : 0;
  }
  const long long mentions = work.exec1("SELECT count(*) FROM mentions")[0].as<long long>();
  const long long jobs = work.exec1("SELECT count(*) FROM verification_jobs")[0].as<long long>();
  const long long mentions_without_job =
      work.exec1(
              "SELECT count(*) FROM mentions m WHERE NOT EXISTS "
              "(SELECT 1 FROM verification_jobs j WHERE j.mention_id = m.id)")[0]
          .as<long long>();

  // Spread: SubmitMention calls each verifier answered, per phase (verifier 0's counter starts
  // over with its restart).
  const std::array<double, 2> phase1 = {before_kill[0], before_kill[1]};
  const std::array<double, 2> phase3 = {at_end[0] - after_restart[0], at_end[1] - after_restart[1]};
  const auto share = [](const std::array<double, 2>& calls) {
    const double total = calls[0] + calls[1];
    return total > 0 ? 100.0 * calls[0] / total : 0.0;
  };

  std::cout << "multi-instance: submissions=" << kSubmissions << " threads=" << kThreads
            << " accepted=" << accepted << " answers_503=" << unavailable_answers
            << " submissions_with_503=" << submissions_with_503 << " max_attempts=" << max_attempts
            << " other_answers=" << bad.size() << " lost=" << lost << " duplicates=" << duplicates
            << " wrong_id=" << wrong_id << " mentions=" << mentions << " jobs=" << jobs << "\n"
            << "multi-instance: kill after " << kKillAfter << " answers, verifier 0 down "
            << absl::FormatDuration(down) << ", submissions answered meanwhile "
            << answered_while_down - kKillAfter << ", total " << absl::FormatDuration(elapsed)
            << "\n"
            << "multi-instance: SubmitMention calls before kill v0=" << phase1[0]
            << " v1=" << phase1[1] << " (v0 " << share(phase1)
            << "%); after restart v0=" << phase3[0] << " v1=" << phase3[1] << " (v0 "
            << share(phase3) << "%); v1 total=" << at_end[1] << "\n";
  RecordProperty("accepted", accepted);
  RecordProperty("answers_503", unavailable_answers);
  RecordProperty("lost", lost);
  RecordProperty("duplicates", duplicates);

  EXPECT_LT(elapsed, kLoadDeadline);
  EXPECT_TRUE(bad.empty()) << bad.size()
                           << " answers outside 202/503+Retry-After, first: " << bad.front();
  EXPECT_EQ(accepted, kSubmissions);
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(wrong_id, 0) << "a retried submission got another mention_id than its row";
  EXPECT_EQ(mentions, kSubmissions);
  EXPECT_EQ(jobs, kSubmissions) << "every mention queued exactly once";
  EXPECT_EQ(mentions_without_job, 0);
  // The gateway spreads calls over both verifiers, and the restarted one gets calls again.
  for (const std::array<double, 2>& calls : {phase1, phase3}) {
    const double percent = share(calls);
    EXPECT_GT(percent, 30.0) << calls[0] << " vs " << calls[1];
    EXPECT_LT(percent, 70.0) << calls[0] << " vs " << calls[1];
  }
}

// The same topology with the verifiers' workers on, fetching every source from a page origin on
// 127.0.0.1 (the egress allow list holds exactly 127.0.0.1/32 and the origin's port, as
// SSRF-POLICY.md permits for tests only), and a mixed load: webmentions and ingest items (plain
// ones, accepted; unsigned synthetic ones, dropped with 200) through both gateways. Verifier 0 is
// SIGKILLed while it holds leased verification jobs, and restarted. Afterwards:
// - every answer was 2xx, or 503 with Retry-After; every delivery ends 2xx;
// - every mention is VERIFIED, exactly one row per pair, and the queue is empty: every queued
//   job completed exactly once, those leased by the killed verifier by a worker after their lease;
// - every ingest item answered 2xx has exactly one ingest_decisions row with the decision it was
//   told, and each accepted one exactly one ingest_items row.
constexpr int kMixedDeliveries = 800;  // Even: webmentions; odd: ingest items.
constexpr int kMixedKillAfter = 250;
constexpr int kMixedRestartAt = 500;
constexpr char kPublisher[] = "feeds.example";
constexpr absl::Duration kMixedDeadline = absl::Seconds(60);

bool IsMention(int i) { return i % 2 == 0; }
// Every fourth ingest item is synthetic and unsigned: dropped, acknowledged with 200.
bool IsDropped(int i) { return !IsMention(i) && i % 4 == 3; }
std::string ItemId(int i) { return absl::StrCat("item-", i); }
std::string Item(int i) {
  return absl::StrCat(R"({"id":")", ItemId(i), R"(","content":"Item )", i, R"(.")",
                      IsDropped(i) ? R"(,"is_synthetic":true})" : "}");
}

class MultiInstanceWorkersTest : public MultiInstanceTest {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    for (int i = 0; i < kMixedDeliveries; i += 2) {
      origin_->SetRoute(
          absl::StrCat("/m/", i),
          cli::PageResponse::Html(absl::StrCat(
              "<!doctype html><html><body><article class=\"h-entry\"><a class=\"u-in-reply-to\" "
              "href=\"",
              Target(i), "\">re</a><div class=\"e-content\">Reply ", i,
              "</div></article></body></html>")));
    }
    MultiInstanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    const testing::CommandResult added = testing::RunCommand(
        PORTCULLIS_CLI_BINARY, stacks_[1]->CliArgs({"publisher", "add", kPublisher}));
    ASSERT_EQ(added.exit_code, 0) << added.output;
  }

  void TearDown() override {
    MultiInstanceTest::TearDown();  // The verifiers stop fetching before their origin goes away.
    origin_.reset();
  }

  std::vector<std::string> VerifierArgs() const override {
    return {
        "--workers=4",
        "--egress_allow_cidrs=127.0.0.1/32",
        absl::StrCat("--fetch_allowed_ports=", origin_->port()),
        "--fetch_timeout=3s",
        "--retry_base=200ms",
        "--retry_cap=400ms",
        "--retry_max_attempts=100",
        "--worker_poll_interval=200ms",
        "--worker_lease=1s",
    };
  }

  // Delivery `i` through gateway `(i / 2) % 2` until a 2xx, honouring Retry-After.
  Outcome Deliver(int i, absl::Time deadline) const {
    Outcome outcome;
    const Stack& gateway = *stacks_[(i / 2) % 2];
    while (outcome.attempts < kMaxAttempts && absl::Now() < deadline) {
      ++outcome.attempts;
      const testing::HttpResult result =
          IsMention(i)
              ? gateway.PostWebmention(absl::StrCat(origin_->origin(), "/m/", i), Target(i))
              : testing::SendHttp(gateway.http_port(), "POST", "/ingest", Item(i),
                                  "application/json", absl::Seconds(30),
                                  {{"X-Provenance-Source", kPublisher}});
      outcome.final_status = result.status;
      if (result.status >= 200 && result.status < 300) {
        outcome.mention_id = IsMention(i) ? MentionId(result.body) : result.body;
        return outcome;
      }
      int retry_after = 0;
      if (result.status == 503 && absl::SimpleAtoi(result.Header("retry-after"), &retry_after) &&
          retry_after > 0) {
        ++outcome.unavailable;
        absl::SleepFor(absl::Seconds(std::min(retry_after, 5)));
        continue;
      }
      outcome.bad.push_back(
          absl::StrCat(result.status, " ", result.error, " ", result.body.substr(0, 200)));
      return outcome;
    }
    return outcome;
  }

  std::unique_ptr<cli::PageOrigin> origin_;
};

// Polls `done` every 20 ms until it holds or `timeout` passes.
template <typename Predicate>
bool WaitUntil(Predicate done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() >= deadline) {
      return false;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

TEST_F(MultiInstanceWorkersTest, EveryJobCompletesOnceAndEveryItemIsDecidedOnceAcrossAKill) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + kMixedDeadline;
  std::vector<Outcome> outcomes(kMixedDeliveries);
  std::atomic<int> next{0};
  std::atomic<int> answered{0};
  absl::Mutex mu;
  bool restarted = false;

  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&] {
      while (true) {
        const int i = next.fetch_add(1);
        if (i >= kMixedDeliveries) {
          return;
        }
        if (i >= kMixedRestartAt) {
          absl::MutexLock lock(&mu);
          mu.AwaitWithDeadline(absl::Condition(&restarted), deadline);
        }
        outcomes[i] = Deliver(i, deadline);
        answered.fetch_add(1);
      }
    });
  }

  // Verifier 0's lease owner is "<host>/<pid>/<hex>": its leased jobs, by mention, with the
  // lease's end.
  const std::string owner = absl::StrCat("%/", stacks_[0]->verifier().pid(), "/%");
  const auto leased_by_v0 = [&] {
    std::map<std::string, std::string> leased;
    pqxx::connection connection(database_->connection_string());
    pqxx::nontransaction work(connection);
    for (const pqxx::row& row :
         work.exec_params("SELECT mention_id::text, lease_expires_at::text FROM verification_jobs "
                          "WHERE lease_owner LIKE $1",
                          owner)) {
      leased[row[0].as<std::string>()] = row[1].as<std::string>();
    }
    return leased;
  };
  while (answered.load() < kMixedKillAfter && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  // Kill it while it holds leased jobs: stop it (SIGSTOP), let its statements already sent land,
  // and kill it only if it still holds a lease; otherwise let it go on (SIGCONT) and try again.
  bool holds_lease = false;
  while (!holds_lease && absl::Now() < deadline) {
    stacks_[0]->verifier().Signal(SIGSTOP);
    absl::SleepFor(absl::Milliseconds(100));
    holds_lease = !leased_by_v0().empty();
    if (!holds_lease) {
      stacks_[0]->verifier().Signal(SIGCONT);
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  EXPECT_TRUE(holds_lease) << "verifier 0 never held a leased job";
  stacks_[0]->verifier().Signal(SIGKILL);
  const absl::StatusOr<int> exit_code = stacks_[0]->verifier().Wait(absl::Seconds(10));
  EXPECT_TRUE(exit_code.ok() && *exit_code == 128 + SIGKILL) << exit_code.status();
  const std::map<std::string, std::string> leased_at_kill = leased_by_v0();
  const int answered_at_kill = answered.load();

  while (next.load() < kMixedRestartAt + kThreads && absl::Now() < deadline &&
         answered.load() < kMixedDeliveries) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  const int answered_while_down = answered.load() - answered_at_kill;
  ASSERT_TRUE(StartVerifier(0).ok());
  ASSERT_TRUE(WaitServing(0).ok());
  {
    absl::MutexLock lock(&mu);
    restarted = true;
  }
  for (std::thread& sender : senders) {
    sender.join();
  }
  const absl::Duration load_time = absl::Now() - start;
  const bool drained = WaitUntil(
      [&] { return QueryCount(*database_, "SELECT count(*) FROM verification_jobs") == 0; },
      absl::Seconds(20));
  const absl::Duration elapsed = absl::Now() - start;

  // What the senders saw.
  int mentions_sent = 0;
  int items_sent = 0;
  int answers_503 = 0;
  std::vector<std::string> bad;
  for (int i = 0; i < kMixedDeliveries; ++i) {
    const Outcome& o = outcomes[i];
    (IsMention(i) ? mentions_sent : items_sent) += 1;
    answers_503 += o.unavailable;
    for (const std::string& answer : o.bad) {
      bad.push_back(absl::StrCat("#", i, ": ", answer));
    }
    if ((o.final_status < 200 || o.final_status >= 300) && o.bad.empty()) {
      bad.push_back(absl::StrCat("#", i, ": no 2xx after ", o.attempts, " attempts"));
    }
    // The first answer is 202 accept or 200 drop; a retried 503 may have been decided already,
    // then its 2xx is the duplicate acknowledgement of that decision.
    if (!IsMention(i) && o.unavailable == 0 && o.final_status != (IsDropped(i) ? 200 : 202)) {
      bad.push_back(absl::StrCat("#", i, ": ", o.final_status, " ", o.mention_id));
    }
  }

  // What the database holds.
  pqxx::connection connection(database_->connection_string());
  pqxx::nontransaction work(connection);
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> mention_rows;
  for (const pqxx::row& row : work.exec("SELECT source, target, state FROM mentions")) {
    mention_rows[{row[0].as<std::string>(), row[1].as<std::string>()}].push_back(
        row[2].as<std::string>());
  }
  std::map<std::string, std::vector<std::string>> decisions;
  for (const pqxx::row& row : work.exec_params(
           "SELECT item_id, decision FROM ingest_decisions WHERE publisher = $1", kPublisher)) {
    decisions[row[0].as<std::string>()].push_back(row[1].as<std::string>());
  }
  std::map<std::string, int> items;
  for (const pqxx::row& row :
       work.exec_params("SELECT item_id FROM ingest_items WHERE publisher = $1", kPublisher)) {
    ++items[row[0].as<std::string>()];
  }
  int lost = 0;
  int duplicates = 0;
  int not_verified = 0;
  int wrong_decision = 0;
  for (int i = 0; i < kMixedDeliveries; ++i) {
    if (outcomes[i].final_status < 200 || outcomes[i].final_status >= 300) {
      continue;
    }
    if (IsMention(i)) {
      const auto it = mention_rows.find({absl::StrCat(origin_->origin(), "/m/", i), Target(i)});
      if (it == mention_rows.end()) {
        ++lost;
        continue;
      }
      duplicates += static_cast<int>(it->second.size()) - 1;
      not_verified += it->second.front() != "VERIFIED" ? 1 : 0;
      continue;
    }
    const auto it = decisions.find(ItemId(i));
    if (it == decisions.end()) {
      ++lost;
      continue;
    }
    duplicates += static_cast<int>(it->second.size()) - 1;
    wrong_decision += it->second.front() != (IsDropped(i) ? "dropped" : "accepted") ? 1 : 0;
    const int outbox = items.count(ItemId(i)) ? items.at(ItemId(i)) : 0;
    if (IsDropped(i)) {
      wrong_decision += outbox != 0 ? 1 : 0;
    } else {
      lost += outbox == 0 ? 1 : 0;
      duplicates += outbox > 1 ? outbox - 1 : 0;
    }
  }
  const long long mentions = work.exec1("SELECT count(*) FROM mentions")[0].as<long long>();
  const long long verified =
      work.exec1("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'")[0].as<long long>();
  const long long jobs = work.exec1("SELECT count(*) FROM verification_jobs")[0].as<long long>();
  const long long decision_rows =
      work.exec1("SELECT count(*) FROM ingest_decisions")[0].as<long long>();
  const long long item_rows = work.exec1("SELECT count(*) FROM ingest_items")[0].as<long long>();
  // The jobs verifier 0 held when it died: each finished once by a live worker, after its lease
  // ran out (verified_at past lease_expires_at), on a second claim (attempts >= 2). A sender
  // that got a 503 from the dying verifier re-sends its pair; a repeat of a pair whose job is
  // leased queues one more run, which starts the attempt count again: for those pairs the
  // verification after the lease is the evidence.
  std::set<std::string> resent_after_503;
  for (int i = 0; i < kMixedDeliveries; ++i) {
    if (IsMention(i) && outcomes[i].unavailable > 0) {
      resent_after_503.insert(outcomes[i].mention_id);
    }
  }
  int finished_after_lease = 0;
  for (const auto& [mention_id, lease_expires_at] : leased_at_kill) {
    const pqxx::row row = work.exec_params1(
        "SELECT count(*) FROM mentions WHERE id = $1::uuid AND state = 'VERIFIED' "
        "AND verified_at >= $2::timestamptz AND (attempts >= 2 OR $3)",
        mention_id, lease_expires_at, resent_after_503.contains(mention_id));
    finished_after_lease += row[0].as<int>();
  }
  const double calls[2] = {SubmitCalls(0), SubmitCalls(1)};

  std::cout << "multi-instance workers: deliveries=" << kMixedDeliveries
            << " mentions=" << mentions_sent << " items=" << items_sent
            << " answers_503=" << answers_503 << " other_answers=" << bad.size() << " lost=" << lost
            << " duplicates=" << duplicates << " kills=1"
            << " answered_while_down=" << answered_while_down << "\n"
            << "multi-instance workers: mention_rows=" << mentions << " verified=" << verified
            << " jobs_left=" << jobs << " leased_by_killed=" << leased_at_kill.size()
            << " finished_after_lease=" << finished_after_lease
            << " decision_rows=" << decision_rows << " item_rows=" << item_rows
            << " wrong_decision=" << wrong_decision << "\n"
            << "multi-instance workers: SubmitMention since restart v0=" << calls[0]
            << " v1 total=" << calls[1] << "; load " << absl::FormatDuration(load_time)
            << ", queue drained after " << absl::FormatDuration(elapsed) << "\n";
  RecordProperty("lost", lost);
  RecordProperty("duplicates", duplicates);
  RecordProperty("jobs_completed", static_cast<int>(verified));

  EXPECT_TRUE(bad.empty()) << bad.size() << " answers outside the contract, first: "
                           << (bad.empty() ? "" : bad.front());
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(wrong_decision, 0);
  EXPECT_TRUE(drained) << jobs << " verification jobs left";
  EXPECT_EQ(jobs, 0);
  EXPECT_EQ(mentions, mentions_sent);
  EXPECT_EQ(verified, mentions_sent) << "every mention VERIFIED";
  EXPECT_EQ(not_verified, 0);
  EXPECT_EQ(decision_rows, items_sent);
  EXPECT_EQ(item_rows, items_sent - items_sent / 2);  // Half the items (i % 4 == 3) dropped.
  EXPECT_FALSE(leased_at_kill.empty());
  EXPECT_EQ(finished_after_lease, static_cast<int>(leased_at_kill.size()));
  // Every page was fetched (no verification without a fetch).
  int fetches = 0;
  for (int i = 0; i < kMixedDeliveries; i += 2) {
    const int requests = origin_->requests(absl::StrCat("/m/", i));
    EXPECT_GE(requests, 1) << i;
    fetches += requests;
  }
  std::cout << "multi-instance workers: source fetches=" << fetches << "\n";
}

}  // namespace
}  // namespace portcullis::integration
