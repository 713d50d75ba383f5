// The drop ledger (issue 17) end to end: the real gateway and verifier binaries against a real
// PostgreSQL, publishers, keys, signatures and re-evaluation through the real `portcullis` CLI.
// What is kept for a drop (rows), what `drops list` shows, what `drops reevaluate` accepts (once,
// judged at the receive time), the per-publisher cap, and the sweeper's retention of the ledger.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
using Headers = std::map<std::string, std::string>;

constexpr char kPublisher[] = "feeds.example";

std::string Str(const json::value& value) { return std::string(value.as_string()); }

// A synthetic item (is_synthetic true), by id.
std::string SyntheticItem(const std::string& id) {
  return absl::StrCat(R"({"id":")", id,
                      R"(","content":"A picture of a lighthouse.","is_synthetic":true})");
}

class DropLedgerTest : public StackTest {
 protected:
  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    dir_ = absl::StrCat(::testing::TempDir(), "/drop-ledger-test-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    StackTest::TearDown();
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  // Restarts the verifier with `flags` (and waits until the gateway sees it ready).
  void RestartVerifier(const std::vector<std::string>& flags) {
    stack_->StopVerifier();
    ASSERT_TRUE(stack_->StartVerifier(flags).ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
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
  // `drops reevaluate` for kPublisher with `extra` flags: its output, verbatim (one line).
  std::string Reevaluate(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"drops", "reevaluate",
                                     absl::StrCat("--publisher=", kPublisher)};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing::CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return std::string(absl::StripSuffix(result.output, "\n"));
  }
  // `drops list` for kPublisher with `extra` flags: the drops.
  json::array ListDrops(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"drops", "list", absl::StrCat("--publisher=", kPublisher)};
    args.insert(args.end(), extra.begin(), extra.end());
    const json::value listed = CliJson(args);
    return listed.is_object() && listed.as_object().contains("drops")
               ? listed.at("drops").as_array()
               : json::array();
  }

  std::pair<std::string, std::string> Keygen() {
    const json::value pair = CliJson({"keygen"});
    return {Str(pair.at("signing_key")), Str(pair.at("public_key"))};
  }
  void AddKey(const std::string& key) { CliJson({"publisher", "key-add", kPublisher, key}); }

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

  testing::HttpResult Post(const std::string& body, Headers headers = {}) const {
    headers["X-Provenance-Source"] = kPublisher;
    return testing::SendHttp(stack_->http_port(), "POST", "/ingest", body, "application/json",
                             absl::Seconds(30), headers);
  }
  // The status, X-Ingest-Action, body status and reason, in one line.
  static std::string Outcome(const testing::HttpResult& result) {
    json::error_code ec;
    const json::value body = json::parse(result.body, ec);
    const auto member = [&](const char* name) -> std::string {
      if (ec || !body.is_object() || !body.as_object().contains(name)) {
        return "<absent>";
      }
      return Str(body.at(name));
    };
    return absl::StrCat(result.status, " ", result.Header("x-ingest-action"), " ", member("status"),
                        " ", member("reason"));
  }

  long long Count(const std::string& sql) { return QueryCount(*database_, sql); }
  void Exec(const std::string& sql) {
    pqxx::connection connection(database_->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0(sql);
    transaction.commit();
  }

  std::string dir_;
  int files_ = 0;
};

TEST_F(DropLedgerTest, AKeptDropIsAcceptedOnceTheKeyIsKnownAndOnlyOnce) {
  const json::value added = CliJson({"publisher", "add", kPublisher, "--keep-drops=7d"});
  EXPECT_EQ(Str(added.at("publisher").at("keep_drops_seconds")), "604800");
  const auto [signing_key, public_key] = Keygen();

  // Signed by a key the publisher has not registered yet: dropped (and kept).
  const std::string signed_item = SyntheticItem("signed");
  const Headers signed_headers = Sign(signing_key, signed_item);
  EXPECT_EQ(Outcome(Post(signed_item, signed_headers)),
            "200 drop dropped invalid_provenance_signature");
  // Unsigned synthetic: dropped, and no key will ever make it valid.
  EXPECT_EQ(Outcome(Post(SyntheticItem("unsigned"))),
            "200 drop dropped unverified_synthetic_content");
  // A body changed after signing: dropped, and stays so.
  const std::string original = SyntheticItem("tampered");
  const std::string tampered = SyntheticItem("tampered-and-changed");
  EXPECT_EQ(Outcome(Post(tampered, Sign(signing_key, original))),
            "200 drop dropped invalid_provenance_signature");

  // The ledger holds the three, oldest first, with the body and the provenance headers.
  json::array drops = ListDrops();
  ASSERT_EQ(drops.size(), 3u);
  const json::value& first = drops[0];
  EXPECT_EQ(Str(first.at("item_id")), "signed");
  EXPECT_EQ(Str(first.at("reason")), "invalid_provenance_signature");
  EXPECT_EQ(Str(first.at("provenance").at("message_id")), signed_headers.at("webhook-id"));
  EXPECT_EQ(Str(first.at("provenance").at("timestamp")), signed_headers.at("webhook-timestamp"));
  EXPECT_EQ(Str(first.at("provenance").at("signature")),
            signed_headers.at("X-Provenance-Signature"));
  EXPECT_EQ(Str(first.at("raw_body")), absl::Base64Escape(signed_item));
  EXPECT_EQ(ListDrops({"--reason=unverified_synthetic_content"}).size(), 1u);
  EXPECT_EQ(ListDrops({"--since=1h"}).size(), 3u);
  EXPECT_EQ(ListDrops({"--since=2099-01-01T00:00:00Z"}).size(), 0u);

  // Without the key nothing is valid yet.
  EXPECT_EQ(Reevaluate(), R"({"matched":3,"accepted":0,"still_dropped":3})");

  AddKey(public_key);
  // A dry run counts and changes nothing.
  EXPECT_EQ(Reevaluate({"--dry-run"}), R"({"matched":3,"accepted":1,"still_dropped":2})");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 3);

  EXPECT_EQ(Reevaluate(), R"({"matched":3,"accepted":1,"still_dropped":2})");
  // The item is readable as accepted, validly signed; it left the ledger; the other two stay.
  const json::value items = CliJson({"items", "list"});
  ASSERT_EQ(items.at("items").as_array().size(), 1u);
  EXPECT_EQ(Str(items.at("items").as_array()[0].at("item_id")), "signed");
  EXPECT_TRUE(items.at("items").as_array()[0].at("signature_valid").as_bool());
  drops = ListDrops();
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(Str(drops[0].at("item_id")), "unsigned");
  EXPECT_EQ(Str(drops[1].at("item_id")), "tampered-and-changed");

  // Again: nothing new is accepted.
  EXPECT_EQ(Reevaluate(), R"({"matched":2,"accepted":0,"still_dropped":2})");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
  // The broker's retry of the original delivery is now a duplicate of the acceptance.
  EXPECT_EQ(Outcome(Post(signed_item, signed_headers)),
            "200 duplicate acknowledged_duplicate accepted");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
  // The ledger's usage is what its rows hold.
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"),
            Count("SELECT sum(size_bytes) FROM dropped_deliveries"));
}

TEST_F(DropLedgerTest, ASignatureIsJudgedAtTheTimeItsDeliveryWasReceived) {
  CliJson({"publisher", "add", kPublisher, "--keep-drops=1d"});
  const auto [signing_key, public_key] = Keygen();
  const int64_t an_hour_ago = absl::ToUnixSeconds(absl::Now()) - 3600;
  // Two deliveries signed an hour ago (stale now, and the key unknown): both dropped.
  for (const char* id : {"arrived-on-time", "arrived-late"}) {
    const std::string item = SyntheticItem(id);
    EXPECT_EQ(
        Outcome(Post(item, Sign(signing_key, item, {absl::StrCat("--timestamp=", an_hour_ago)}))),
        "200 drop dropped invalid_provenance_signature");
  }
  // The first one really arrived an hour ago (a broker held the second one back).
  Exec(
      "UPDATE dropped_deliveries SET received_at = received_at - interval '1 hour' "
      "WHERE item_id = 'arrived-on-time'");
  AddKey(public_key);
  EXPECT_EQ(Reevaluate(), R"({"matched":2,"accepted":1,"still_dropped":1})");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items WHERE item_id = 'arrived-on-time'"), 1);
  const json::array drops = ListDrops();
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(Str(drops[0].at("item_id")), "arrived-late");
}

TEST_F(DropLedgerTest, KeepDropsOffKeepsNothingAndPublisherSetChangesOnlyIt) {
  CliJson({"publisher", "add", kPublisher, "--require-signature"});
  EXPECT_EQ(Outcome(Post(SyntheticItem("not-kept"))), "200 drop dropped signature_required");
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 0);
  EXPECT_TRUE(ListDrops().empty());

  const json::value set = CliJson({"publisher", "set", kPublisher, "--keep-drops=36h"});
  EXPECT_EQ(Str(set.at("publisher").at("keep_drops_seconds")), "129600");
  EXPECT_TRUE(set.at("publisher").at("require_signature").as_bool());  // Unchanged.
  // The evaluator's cache of the publisher was dropped by the admin call in this process.
  EXPECT_EQ(Outcome(Post(SyntheticItem("kept"))), "200 drop dropped signature_required");
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'kept' AND "
                  "expires_at - received_at = interval '36 hours'"),
            1);

  CliJson({"publisher", "set", kPublisher, "--keep-drops=off"});
  EXPECT_EQ(Outcome(Post(SyntheticItem("off-again"))), "200 drop dropped signature_required");
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 1);

  // Usage errors: nothing to set, a bad duration.
  EXPECT_EQ(Cli({"publisher", "set", kPublisher}).exit_code, 2);
  EXPECT_EQ(Cli({"publisher", "set", kPublisher, "--keep-drops=soon"}).exit_code, 2);
  EXPECT_EQ(Cli({"publisher", "set", "nobody.example", "--keep-drops=1h"}).exit_code, 1);
}

TEST_F(DropLedgerTest, ThePerPublisherCapKeepsTheOldestDrops) {
  RestartVerifier({"--drop_ledger_max_bytes=2000"});
  if (HasFatalFailure()) {
    return;
  }
  CliJson({"publisher", "add", kPublisher, "--keep-drops=7d"});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Outcome(Post(SyntheticItem(absl::StrCat("capped-", 100 + i)))),
              "200 drop dropped unverified_synthetic_content");
  }
  const long long kept = Count("SELECT count(*) FROM dropped_deliveries");
  const long long bytes = Count("SELECT sum(size_bytes) FROM dropped_deliveries");
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 20);
  EXPECT_LE(bytes, 2000);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"), bytes);
  // The first ones are kept, the later ones were not.
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'capped-100'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'capped-119'"), 0);
  // Every drop was still recorded as a decision (the cap limits the ledger, not the answers).
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE decision = 'dropped'"), 20);

  // Room comes back when rows leave: delete the kept ones, and the next drop is kept.
  Exec("DELETE FROM dropped_deliveries");
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"), 0);
  EXPECT_EQ(Outcome(Post(SyntheticItem("after-room"))),
            "200 drop dropped unverified_synthetic_content");
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'after-room'"), 1);

  // Concurrent drops (several batches, both ingest writers) never take the ledger over the cap.
  Exec("DELETE FROM dropped_deliveries");
  std::atomic<int> next{0};
  std::atomic<int> answered{0};
  std::vector<std::thread> senders;
  for (int t = 0; t < 8; ++t) {
    senders.emplace_back([&] {
      for (int i = next++; i < 200; i = next++) {
        if (Post(SyntheticItem(absl::StrCat("concurrent-", i))).status == 200) {
          ++answered;
        }
      }
    });
  }
  for (std::thread& sender : senders) {
    sender.join();
  }
  EXPECT_EQ(answered.load(), 200);
  EXPECT_GT(Count("SELECT count(*) FROM dropped_deliveries"), 0);
  EXPECT_LE(Count("SELECT coalesce(sum(size_bytes), 0) FROM dropped_deliveries"), 2000);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"),
            Count("SELECT coalesce(sum(size_bytes), 0) FROM dropped_deliveries"));
}

TEST_F(DropLedgerTest, TheSweeperRemovesExpiredDrops) {
  RestartVerifier({"--drop_retention=2h", "--retention_sweep_interval=200ms"});
  if (HasFatalFailure()) {
    return;
  }
  CliJson({"publisher", "add", kPublisher, "--keep-drops=7d"});
  for (const char* id : {"past-retention", "past-keep-drops", "young"}) {
    EXPECT_EQ(Outcome(Post(SyntheticItem(id))), "200 drop dropped unverified_synthetic_content");
  }
  ASSERT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 3);
  // One received three hours ago (past --drop_retention), one past its own keep_drops.
  Exec(
      "UPDATE dropped_deliveries SET received_at = now() - interval '3 hours' "
      "WHERE item_id = 'past-retention'; "
      "UPDATE dropped_deliveries SET expires_at = now() - interval '1 second' "
      "WHERE item_id = 'past-keep-drops'");
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Count("SELECT count(*) FROM dropped_deliveries") > 1 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'young'"), 1);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"),
            Count("SELECT sum(size_bytes) FROM dropped_deliveries"));
}

}  // namespace
}  // namespace portcullis::integration
