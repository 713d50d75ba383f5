// POST /ingest end to end: the real gateway and verifier binaries against a real PostgreSQL, the
// publishers and keys registered and the deliveries signed with the real `portcullis` CLI. What a
// broker sees (status, X-Ingest-Action, body) and what is stored (rows) for every row of the
// DESIGN.md table, idempotency under reformatting and concurrency, rotation, replay, and a
// database that goes away mid-run.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tests/integration/private_cluster_fixture.h"
#include "tests/support/npm_oracle.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
using Headers = std::map<std::string, std::string>;

constexpr char kPublisher[] = "feeds.example";

std::string Str(const json::value& value) { return std::string(value.as_string()); }

// A synthetic item (is_synthetic true) and a plain one, by id.
std::string SyntheticItem(const std::string& id) {
  return absl::StrCat(R"({"id":")", id,
                      R"(","content":"A picture of a lighthouse.","is_synthetic":true,)"
                      R"("metadata":{"lang":"en","source":"model-x"}})");
}
std::string PlainItem(const std::string& id) {
  return absl::StrCat(R"({"id":")", id, R"(","content":"Written by a person."})");
}

class IngestTest : public StackTest {
 protected:
  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    dir_ = absl::StrCat(::testing::TempDir(), "/ingest-test-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    StackTest::TearDown();
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  testing::CommandResult Cli(std::vector<std::string> args) {
    args = stack_->CliArgs(std::move(args));
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, args);
  }
  // A CLI command that must succeed; its JSON output.
  json::value CliJson(const std::vector<std::string>& args) {
    const testing::CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 0) << absl::StrJoin(args, " ") << ": " << result.output;
    json::error_code ec;
    json::value value = json::parse(result.output, ec);
    EXPECT_FALSE(ec) << result.output;
    return value;
  }

  // `portcullis keygen`: {signing_key, public_key}.
  std::pair<std::string, std::string> Keygen() {
    const json::value pair = CliJson({"keygen"});
    return {Str(pair.at("signing_key")), Str(pair.at("public_key"))};
  }
  // `portcullis publisher key-add`: the key id.
  std::string AddKey(const std::string& publisher, const std::string& key) {
    return Str(CliJson({"publisher", "key-add", publisher, key}).at("key").at("key_id"));
  }

  // `portcullis sign` over `body`: the three headers it prints.
  Headers Sign(const std::string& key, const std::string& body,
               const std::vector<std::string>& extra = {}) {
    const std::string file = absl::StrCat(dir_, "/body-", ++files_, ".json");
    std::ofstream(file, std::ios::binary) << body;
    std::vector<std::string> args = {absl::StrCat("--key=", key)};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("sign");
    args.push_back(file);
    const testing::CommandResult result = testing::RunCommand(PORTCULLIS_CLI_BINARY, args);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    Headers headers;
    for (absl::string_view line : absl::StrSplit(result.output, '\n', absl::SkipEmpty())) {
      const size_t colon = line.find(": ");
      if (colon != absl::string_view::npos) {
        headers[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 2));
      }
    }
    EXPECT_EQ(headers.size(), 3u) << result.output;
    return headers;
  }

  testing::HttpResult Post(const std::string& body, Headers headers = {},
                           const std::string& publisher = kPublisher) const {
    if (!publisher.empty()) {
      headers["X-Provenance-Source"] = publisher;
    }
    return testing::SendHttp(stack_->http_port(), "POST", "/ingest", body, "application/json",
                             absl::Seconds(30), headers);
  }

  static std::string Member(const testing::HttpResult& result, const char* name) {
    json::error_code ec;
    const json::value body = json::parse(result.body, ec);
    if (ec || !body.is_object() || !body.as_object().contains(name)) {
      return "<absent>";
    }
    return Str(body.at(name));
  }

  // The status, X-Ingest-Action, body status (or error) and reason, in one line for EXPECT_EQ.
  static std::string Outcome(const testing::HttpResult& result) {
    const std::string status = Member(result, "status");
    return absl::StrCat(result.status, " ", result.Header("x-ingest-action"), " ",
                        status == "<absent>" ? Member(result, "error") : status, " ",
                        Member(result, "reason"));
  }

  long long Count(const std::string& sql) const { return QueryCount(*database_, sql); }

  std::string dir_;
  int files_ = 0;
};

TEST_F(IngestTest, EveryRowOfTheTable) {
  CliJson({"publisher", "add", kPublisher, "--verified"});
  CliJson({"publisher", "add", "strict.example", "--require-signature"});
  const auto [signing_key, public_key] = Keygen();
  AddKey(kPublisher, public_key);

  // accepted: a validly signed synthetic item.
  const std::string signed_item = SyntheticItem("s1");
  testing::HttpResult result = Post(signed_item, Sign(signing_key, signed_item));
  EXPECT_EQ(Outcome(result), "202 accept accepted <absent>") << result.body;
  EXPECT_EQ(Member(result, "item_id"), "s1");
  const std::string hash = Member(result, "content_hash");
  EXPECT_EQ(hash.size(), 64u);
  // accepted: a plain item, unsigned.
  EXPECT_EQ(Outcome(Post(PlainItem("p1"))), "202 accept accepted <absent>");

  // dropped: synthetic without a signature; with a signature by a key not on the list.
  EXPECT_EQ(Outcome(Post(SyntheticItem("u1"))),
            "200 drop dropped unverified_synthetic_content");
  const std::string forged = SyntheticItem("f1");
  EXPECT_EQ(Outcome(Post(forged, Sign(Keygen().first, forged))),
            "200 drop dropped invalid_provenance_signature");
  // dropped: a publisher that requires signatures, unsigned plain item.
  EXPECT_EQ(Outcome(Post(PlainItem("r1"), {}, "strict.example")),
            "200 drop dropped signature_required");

  // duplicate: the accepted item again, keys reordered and reformatted (so unsigned: the
  // signature covered other bytes) — never evaluated again.
  const std::string reformatted =
      "{\n  \"metadata\": { \"source\": \"model-x\", \"lang\": \"en\" },\n"
      "  \"is_synthetic\": true,\n  \"content\": \"A picture of a lighthouse.\",\n"
      "  \"id\": \"s1\"\n}\n";
  result = Post(reformatted);
  EXPECT_EQ(Outcome(result), "200 duplicate acknowledged_duplicate accepted") << result.body;
  EXPECT_EQ(Member(result, "content_hash"), hash);
  EXPECT_EQ(Member(result, "item_id"), "s1");
  // A duplicate of a drop names the drop.
  EXPECT_EQ(Outcome(Post(SyntheticItem("u1"))),
            "200 duplicate acknowledged_duplicate dropped:unverified_synthetic_content");

  // quarantined: a verified publisher's malformed provenance metadata.
  Headers malformed = Sign(signing_key, PlainItem("q1"));
  malformed["webhook-timestamp"] = "yesterday";
  EXPECT_EQ(Outcome(Post(PlainItem("q1"), malformed)),
            "202 quarantine quarantined malformed_provenance_timestamp");

  // unknown publisher.
  result = Post(PlainItem("x1"), {}, "nobody.example");
  EXPECT_EQ(Outcome(result), "403  unknown_publisher <absent>");
  EXPECT_EQ(result.Header("retry-after"), "");

  // The request itself is wrong.
  EXPECT_EQ(Outcome(Post("{\"id\": ")), "400  malformed_json <absent>");
  EXPECT_EQ(Outcome(Post("{\"id\":\"\xff\"}")), "400  malformed_json <absent>");
  result = Post(R"({"id":"a","id":"b"})");
  EXPECT_EQ(Outcome(result), "422  schema_violation <absent>");
  EXPECT_EQ(Member(result, "field"), "/id");
  result = Post(PlainItem("h1"), {}, "");
  EXPECT_EQ(Outcome(result), "422  schema_violation <absent>");
  EXPECT_EQ(Member(result, "field"), "X-Provenance-Source");
  EXPECT_EQ(Member(Post(R"({"id":"n","n":1e400})"), "field"), "/n");
  EXPECT_EQ(Member(Post(R"({"id":"m","metadata":{"k":1}})"), "field"), "/metadata/k");
  EXPECT_EQ(Post(absl::StrCat(R"({"id":"big","content":")", std::string(1024 * 1024, 'a'), "\"}"))
                .status,
            413);
  EXPECT_EQ(testing::SendHttp(stack_->http_port(), "POST", "/ingest", PlainItem("t"),
                              "text/plain", absl::Seconds(10),
                              {{"X-Provenance-Source", kPublisher}})
                .status,
            415);

  // What was stored: one decision per distinct item, accepted items in the outbox, the dead
  // letter; nothing for the refusals.
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 6);  // s1 p1 u1 f1 r1 q1
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 1);
  const json::value items = CliJson({"items", "list"});
  ASSERT_EQ(items.at("items").as_array().size(), 2u);
  EXPECT_EQ(Str(items.at("items").as_array()[0].at("item_id")), "s1");
  EXPECT_TRUE(items.at("items").as_array()[0].at("signature_valid").as_bool());
  EXPECT_EQ(CliJson({"--after=1", "items", "list"}).at("items").as_array().size(), 1u);

  // transient: the verifier is gone → 503, Retry-After, retry; never a drop.
  stack_->StopVerifier();
  result = Post(PlainItem("late"));
  EXPECT_EQ(Outcome(result), "503 retry unavailable <absent>");
  int retry_after = 0;
  EXPECT_TRUE(absl::SimpleAtoi(result.Header("retry-after"), &retry_after)) << result.body;
  EXPECT_GE(retry_after, 1);
  EXPECT_EQ(Member(result, "item_id"), "late");
}

TEST_F(IngestTest, AnUnsignedCopyDoesNotSuppressTheSignedDelivery) {
  CliJson({"publisher", "add", kPublisher});
  const auto [signing_key, public_key] = Keygen();
  AddKey(kPublisher, public_key);
  const std::string item = SyntheticItem("same");
  EXPECT_EQ(Outcome(Post(item)), "200 drop dropped unverified_synthetic_content");
  EXPECT_EQ(Outcome(Post(item, Sign(signing_key, item))), "202 accept accepted <absent>");
  // From now on every copy, signed or not, is a duplicate of the acceptance.
  EXPECT_EQ(Outcome(Post(item)), "200 duplicate acknowledged_duplicate accepted");
  EXPECT_EQ(Outcome(Post(item, Sign(signing_key, item))),
            "200 duplicate acknowledged_duplicate accepted");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE decision = 'accepted'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
}

TEST_F(IngestTest, KeyRotationAndRevocation) {
  CliJson({"publisher", "add", kPublisher});
  const auto [old_signing, old_public] = Keygen();
  const auto [new_signing, new_public] = Keygen();
  const std::string old_id = AddKey(kPublisher, old_public);
  AddKey(kPublisher, new_public);
  // An HMAC secret as a third key.
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  AddKey(kPublisher, secret);

  // Overlap: both Ed25519 keys and the secret are valid.
  for (const auto& [name, key] : std::vector<std::pair<std::string, std::string>>{
           {"old", old_signing}, {"new", new_signing}, {"hmac", secret}}) {
    const std::string item = SyntheticItem("overlap-" + name);
    EXPECT_EQ(Outcome(Post(item, Sign(key, item))), "202 accept accepted <absent>") << name;
  }
  const json::value listed = CliJson({"publisher", "list"});
  ASSERT_EQ(listed.at("publishers").as_array().size(), 1u);
  EXPECT_EQ(listed.at("publishers").as_array()[0].at("keys").as_array().size(), 3u);

  // The old key is revoked: its signatures no longer verify; the new one still does.
  const json::value revoked = CliJson({"publisher", "key-revoke", kPublisher, old_id});
  EXPECT_TRUE(revoked.at("key").at("revoked").as_bool());
  const std::string after_old = SyntheticItem("after-old");
  EXPECT_EQ(Outcome(Post(after_old, Sign(old_signing, after_old))),
            "200 drop dropped invalid_provenance_signature");
  const std::string after_new = SyntheticItem("after-new");
  EXPECT_EQ(Outcome(Post(after_new, Sign(new_signing, after_new))),
            "202 accept accepted <absent>");

  // A disabled publisher is unknown; enabled again, it is back.
  CliJson({"publisher", "disable", kPublisher});
  EXPECT_EQ(Post(PlainItem("while-disabled")).status, 403);
  CliJson({"publisher", "enable", kPublisher});
  EXPECT_EQ(Post(PlainItem("while-disabled")).status, 202);
}

TEST_F(IngestTest, StaleAndFutureTimestampsAreNotValidSignatures) {
  CliJson({"publisher", "add", kPublisher});
  const auto [signing_key, public_key] = Keygen();
  AddKey(kPublisher, public_key);
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  const std::string stale = SyntheticItem("stale");
  EXPECT_EQ(Outcome(Post(stale, Sign(signing_key, stale,
                                     {absl::StrCat("--timestamp=", now - 3600)}))),
            "200 drop dropped invalid_provenance_signature");
  const std::string future = SyntheticItem("future");
  EXPECT_EQ(Outcome(Post(future, Sign(signing_key, future,
                                      {absl::StrCat("--timestamp=", now + 3600)}))),
            "200 drop dropped invalid_provenance_signature");
  // Within the window (a minute old) it is fine; the X-Provenance-* spellings work too.
  const std::string recent = SyntheticItem("recent");
  Headers headers = Sign(signing_key, recent, {absl::StrCat("--timestamp=", now - 60)});
  Headers renamed = {{"X-Provenance-Id", headers["webhook-id"]},
                     {"X-Provenance-Timestamp", headers["webhook-timestamp"]},
                     {"X-Provenance-Signature", headers["X-Provenance-Signature"]}};
  EXPECT_EQ(Outcome(Post(recent, renamed)), "202 accept accepted <absent>");
}

TEST_F(IngestTest, QuarantineAndReplay) {
  CliJson({"publisher", "add", kPublisher, "--verified"});
  const auto [first_signing, first_public] = Keygen();
  const auto [second_signing, second_public] = Keygen();
  AddKey(kPublisher, first_public);
  // A broken token next to a signature by a key the publisher has not registered yet.
  const std::string item = SyntheticItem("q1");
  Headers headers = Sign(second_signing, item);
  headers["X-Provenance-Signature"] = "v1,*** " + headers["X-Provenance-Signature"];
  testing::HttpResult result = Post(item, headers);
  EXPECT_EQ(Outcome(result), "202 quarantine quarantined malformed_provenance_signature");

  json::value letters = CliJson({"deadletter", "list"});
  ASSERT_EQ(letters.at("dead_letters").as_array().size(), 1u);
  const json::value& letter = letters.at("dead_letters").as_array()[0];
  const std::string id = Str(letter.at("dead_letter_id"));
  EXPECT_EQ(Str(letter.at("item_id")), "q1");
  EXPECT_EQ(Str(letter.at("reason")), "malformed_provenance_signature");

  // Replayed before the key is registered: quarantined again, still listed.
  EXPECT_EQ(Str(CliJson({"deadletter", "replay", id}).at("result").at("decision")),
            "INGEST_DECISION_QUARANTINED");
  EXPECT_EQ(CliJson({"deadletter", "list"}).at("dead_letters").as_array().size(), 1u);
  // The publisher registers the key it signs with: the replay accepts the item.
  AddKey(kPublisher, second_public);
  EXPECT_EQ(Str(CliJson({"deadletter", "replay", id}).at("result").at("decision")),
            "INGEST_DECISION_ACCEPTED");
  EXPECT_EQ(CliJson({"deadletter", "list"}).at("dead_letters").as_array().size(), 0u);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items WHERE item_id = 'q1'"), 1);
  // The sender's retry is now a duplicate of the acceptance.
  EXPECT_EQ(Outcome(Post(item, headers)), "200 duplicate acknowledged_duplicate accepted");
  EXPECT_EQ(Cli({"deadletter", "replay", id}).exit_code, 1);  // Gone.

  // Discard: another quarantined delivery, deleted without evaluation.
  Headers bad = Sign(first_signing, PlainItem("q2"));
  bad.erase("webhook-id");
  EXPECT_EQ(Outcome(Post(PlainItem("q2"), bad)),
            "202 quarantine quarantined missing_provenance_id");
  letters = CliJson({"deadletter", "list", kPublisher});
  ASSERT_EQ(letters.at("dead_letters").as_array().size(), 1u);
  CliJson({"deadletter", "discard", Str(letters.at("dead_letters").as_array()[0].at(
                                        "dead_letter_id"))});
  EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 0);
}

TEST_F(IngestTest, ConcurrentIdenticalDeliveriesMakeOneDecision) {
  // Let a slow moment under load answer late rather than 503 (a later flag wins).
  stack_.reset();
  stack_ = std::make_unique<Stack>(*database_);
  ASSERT_TRUE(stack_->StartVerifier().ok());
  ASSERT_TRUE(stack_->StartGateway({"--verifier_timeout=30s"}).ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  CliJson({"publisher", "add", kPublisher});

  constexpr int kDeliveries = 500;
  const std::string item = PlainItem("burst");
  std::vector<testing::HttpResult> results(kDeliveries);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  threads.reserve(kDeliveries);
  for (int i = 0; i < kDeliveries; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      const absl::Time deadline = absl::Now() + absl::Seconds(10);
      while (ready.load() < kDeliveries && absl::Now() < deadline) {
        std::this_thread::yield();
      }
      results[i] = Post(item);
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  std::map<std::string, int> outcomes;
  for (const testing::HttpResult& result : results) {
    ++outcomes[result.status == 0 ? "no answer: " + result.error : Outcome(result)];
  }
  std::string summary;
  for (const auto& [outcome, count] : outcomes) {
    absl::StrAppend(&summary, count, " x ", outcome, "\n");
  }
  std::cout << kDeliveries << " concurrent identical deliveries:\n" << summary;
  EXPECT_EQ(outcomes["202 accept accepted <absent>"], 1) << summary;
  EXPECT_EQ(outcomes["200 duplicate acknowledged_duplicate accepted"], kDeliveries - 1)
      << summary;
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
}

// PostgreSQL stops mid-run, on a cluster of the test's own.
class IngestDatabaseOutageTest : public PrivateClusterStackTest {
 protected:
  testing::HttpResult Post(const std::string& body) const {
    return testing::SendHttp(stack_->http_port(), "POST", "/ingest", body, "application/json",
                             absl::Seconds(30), {{"X-Provenance-Source", kPublisher}});
  }
};

TEST_F(IngestDatabaseOutageTest, OnlyRetryWhileDownThenExactlyOnce) {
  {
    auto stub = verifier::v1::Verifier::NewStub(
        stack_->AdminChannel());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    verifier::v1::AddPublisherRequest request;
    request.mutable_publisher()->set_name(kPublisher);
    verifier::v1::AddPublisherResponse response;
    ASSERT_TRUE(stub->AddPublisher(&context, request, &response).ok());
  }
  ASSERT_EQ(Post(PlainItem("before")).status, 202);

  ASSERT_TRUE(Pg("pg_stop").has_value());
  // While the database is down: only 503 + Retry-After + retry, never a 2xx or 4xx.
  const std::string item = PlainItem("during");
  int answers = 0;
  for (const absl::Time until = absl::Now() + absl::Seconds(6);
       absl::Now() < until && answers < 20; ++answers) {
    const testing::HttpResult result = Post(item);
    ASSERT_EQ(result.status, 503) << result.body;
    EXPECT_EQ(result.Header("x-ingest-action"), "retry");
    EXPECT_NE(result.Header("retry-after"), "");
    absl::SleepFor(absl::Milliseconds(250));
  }
  EXPECT_GT(answers, 3);

  ASSERT_TRUE(Pg("pg_start").has_value());
  // The broker's retries: 503 until the verifier reconnects, then exactly one acceptance.
  int accepted = 0;
  int retries = 0;
  for (const absl::Time until = absl::Now() + absl::Seconds(60);
       absl::Now() < until && accepted == 0 && retries < 300;) {
    const testing::HttpResult result = Post(item);
    if (result.status == 202) {
      ++accepted;
      break;
    }
    ASSERT_EQ(result.status, 503) << result.body;
    ++retries;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_EQ(accepted, 1) << "no acceptance after " << retries << " retries";
  std::cout << "database down: " << answers << " answers, all 503 + Retry-After; after restart "
            << retries << " more 503 before the one acceptance\n";
  const testing::HttpResult again = Post(item);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.Header("x-ingest-action"), "duplicate");
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM ingest_items WHERE item_id = 'during'"),
            1);
  EXPECT_EQ(QueryCount(*database_,
                       "SELECT count(*) FROM ingest_decisions WHERE item_id = 'during'"),
            1);
}

}  // namespace
}  // namespace portcullis::integration
