// webmention.io's read API end to end (issue 18): mentions submitted through the real gateway,
// their verification outcomes recorded through the real job store (the verifier runs without
// workers), read back over real HTTP from /api/mentions.jf2, /api/count.json and /api/changes.
#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/integration/fixture.h"
#include "tests/support/temp_path.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

class WebmentionIoApiStackTest : public StackTest {
 protected:
  void SetUp() override {
    StackTest::SetUp();
    if (stack_ != nullptr && !IsSkipped()) {
      ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
    }
  }

  // Submits source -> target through the gateway and records `type` as its verification.
  void Mention(const std::string& source, const std::string& type,
               const std::string& text = "hello",
               const std::string& target = "https://bob.example/post") {
    const testing::HttpResult accepted = stack_->PostWebmention(source, target);
    ASSERT_EQ(accepted.status, 202) << accepted.body << accepted.error;
    FinishAll(Verified(type, text));
  }

  // Claims every queued job and records `result` for it, as a verification worker would.
  void FinishAll(const verifier::store::JobResult& result) {
    auto pool = verifier::store::PgConnectionPool::Create(
        {database_->connection_string(), 1, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    verifier::store::PgJobStore jobs(**pool);
    auto claimed = jobs.Claim("api-test", 100, absl::Seconds(30));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    for (const verifier::store::JobRecord& job : *claimed) {
      ASSERT_TRUE(jobs.Finish(job.job_id, "api-test", result).ok());
    }
  }

  static verifier::store::JobResult Verified(const std::string& type, const std::string& text) {
    verifier::store::JobResult result;
    result.kind = verifier::store::JobResult::Kind::kVerified;
    result.content.type = type;
    result.content.author_name = "Alice";
    result.content.content_text = text;
    result.content.content_html = "<p>" + text + "</p>";
    return result;
  }

  json::object GetJson(const std::string& path, int expect_status = 200) {
    const testing::HttpResult got =
        testing::SendHttp(stack_->http_port(), "GET", path, "", "", absl::Seconds(10));
    EXPECT_EQ(got.status, expect_status) << path << " " << got.body << got.error;
    EXPECT_EQ(got.Header("access-control-allow-origin"), "*");
    if (got.status != 200) {
      return {};
    }
    return json::parse(got.body).as_object();
  }

  long long Query(const std::string& sql) {
    pqxx::connection connection(database_->connection_string());
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<long long>();
  }
};

TEST_F(WebmentionIoApiStackTest, NumericPagesAreStableWhileMentionsArrive) {
  for (int i = 0; i < 12; ++i) {
    Mention(absl::StrCat("https://alice.example/", i), "like");
  }
  std::set<int64_t> existing;
  const json::object first = GetJson("/api/mentions.jf2?domain=bob.example&per-page=100");
  for (const json::value& child : first.at("children").as_array()) {
    existing.insert(child.at("wm-id").as_int64());
  }
  ASSERT_EQ(existing.size(), 12u);
  // webmention.js's order (sort-dir=up, see tests/ingest-gateway/webmention_io_api_test.cc),
  // walked by page number as a pager does, while new mentions arrive between its pages.
  std::vector<int64_t> seen;
  int late = 0;
  for (int page = 0; page < 20; ++page) {
    const json::object body = GetJson(absl::StrCat(
        "/api/mentions.jf2?domain=bob.example&sort-dir=up&per-page=5&page=", page));
    const json::array& children = body.at("children").as_array();
    if (children.empty()) {
      break;
    }
    for (const json::value& child : children) {
      seen.push_back(child.at("wm-id").as_int64());
    }
    for (int k = 0; k < 2; ++k) {
      Mention(absl::StrCat("https://late.example/", late++), "reply");
    }
  }
  // No mention twice, in received order, none of those there when the walk began missed (late
  // ones are appended after the pages already read: the walk reaches those it reaches).
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  for (const int64_t id : existing) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), id), 1) << id;
  }
  EXPECT_GT(seen.size(), existing.size());

  // Newest first (the default), the same walk: nothing that was there before is missed.
  const std::set<int64_t> before(seen.begin(), seen.end());
  std::set<int64_t> seen_down;
  for (int page = 0; page < 40; ++page) {
    const json::object body =
        GetJson(absl::StrCat("/api/mentions.jf2?domain=bob.example&per-page=5&page=", page));
    const json::array& children = body.at("children").as_array();
    if (children.empty()) {
      break;
    }
    for (const json::value& child : children) {
      seen_down.insert(child.at("wm-id").as_int64());
    }
    Mention(absl::StrCat("https://later.example/", page), "repost");
  }
  for (const int64_t id : before) {
    EXPECT_EQ(seen_down.count(id), 1u) << id;
  }
  // since_id reads what is new since a known mention.
  const json::object newer = GetJson(absl::StrCat(
      "/api/mentions.jf2?domain=bob.example&per-page=100&since_id=", *before.rbegin()));
  EXPECT_EQ(static_cast<long long>(newer.at("children").as_array().size()),
            Query(absl::StrCat("SELECT count(*) FROM mentions WHERE state = 'VERIFIED' AND "
                               "wm_id > ", *before.rbegin())));
}

TEST_F(WebmentionIoApiStackTest, CountsEqualAQueryOfTheTable) {
  Mention("https://alice.example/1", "like");
  Mention("https://alice.example/2", "like");
  Mention("https://alice.example/3", "reply");
  Mention("https://alice.example/4", "repost", "x", "https://bob.example/other");
  ASSERT_EQ(stack_->PostWebmention("https://alice.example/pending", "https://bob.example/post")
                .status,
            202);  // PENDING: not counted.
  const json::object count = GetJson(
      "/api/count.json?target[]=https%3A%2F%2Fbob.example%2Fpost"
      "&target[]=https%3A%2F%2Fbob.example%2Fother");
  EXPECT_EQ(count.at("count").as_int64(),
            Query("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'"));
  const json::object& by_type = count.at("type").as_object();
  for (const char* type : {"like", "reply", "repost", "mention", "bookmark", "rsvp"}) {
    EXPECT_EQ(by_type.at(type).as_int64(),
              Query(absl::StrCat("SELECT count(*) FROM mentions WHERE state = 'VERIFIED' "
                                 "AND type = '", type, "'")))
        << type;
  }
  const json::object one = GetJson("/api/count.json?target=https%3A%2F%2Fbob.example%2Fpost");
  EXPECT_EQ(one.at("count").as_int64(), 3);
}

// A cache that applies /api/changes: an entry replaces what it has under that wm-id, a deleted
// one removes it.
struct ChangesFollower {
  std::map<int64_t, std::string> cache;
  std::string cursor;
};

TEST_F(WebmentionIoApiStackTest, ACacheFollowingTheChangeFeedEqualsTheFeed) {
  ChangesFollower follower;
  auto follow = [&] {
    for (int round = 0; round < 50; ++round) {
      const json::object body = GetJson(absl::StrCat(
          "/api/changes?domain=bob.example&limit=3&after=", testing::FormEncode(follower.cursor)));
      const json::array& children = body.at("children").as_array();
      follower.cursor = std::string(body.at("next").as_string());
      if (children.empty()) {
        return;
      }
      for (const json::value& child : children) {
        const int64_t id = child.at("wm-id").as_int64();
        if (child.as_object().contains("deleted")) {
          follower.cache.erase(id);
        } else {
          follower.cache[id] = json::serialize(child);
        }
      }
    }
    ADD_FAILURE() << "the change feed did not end";
  };
  auto feed = [&] {
    std::map<int64_t, std::string> entries;
    const json::object body =
        GetJson("/api/mentions.jf2?domain=bob.example&per-page=100&sort-dir=up");
    for (const json::value& child : body.at("children").as_array()) {
      entries[child.at("wm-id").as_int64()] = json::serialize(child);
    }
    return entries;
  };
  // A cache polls: /api/changes hands out only changes older than every transaction running in
  // the cluster (other tests' too), so one pass may end before the newest; poll until equal.
  auto catch_up = [&](const std::map<int64_t, std::string>& expected) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    follow();
    while (follower.cache != expected && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
      follow();
    }
  };

  for (int i = 0; i < 5; ++i) {
    Mention(absl::StrCat("https://alice.example/", i), "reply", absl::StrCat("first ", i));
  }
  const std::map<int64_t, std::string> first = feed();
  catch_up(first);
  EXPECT_EQ(follower.cache, first);
  EXPECT_EQ(follower.cache.size(), 5u);

  // An update: sent again, verified with new content.
  ASSERT_EQ(stack_->PostWebmention("https://alice.example/0", "https://bob.example/post").status,
            202);
  FinishAll(Verified("reply", "edited"));
  // An unmention: sent again, the link is gone.
  ASSERT_EQ(stack_->PostWebmention("https://alice.example/1", "https://bob.example/post").status,
            202);
  verifier::store::JobResult gone;
  gone.kind = verifier::store::JobResult::Kind::kFailed;
  gone.reason = "no_link";
  FinishAll(gone);
  // A removal by DELETE (how RemoveSite, erasure and the retention sweeper remove rows).
  ASSERT_EQ(Query("WITH d AS (DELETE FROM mentions WHERE source = 'https://alice.example/2' "
                  "RETURNING 1) SELECT count(*) FROM d"),
            1);
  // And a new one.
  Mention("https://carol.example/new", "like");
  const std::map<int64_t, std::string> now = feed();
  catch_up(now);
  EXPECT_EQ(follower.cache, now);
  EXPECT_EQ(now.size(), 4u);

  // A follower from the start ends equal too; a caught-up follower reads nothing new.
  ChangesFollower fresh;
  std::swap(fresh, follower);
  catch_up(now);
  EXPECT_EQ(follower.cache, now);
  const std::string cursor = follower.cursor;
  const json::object idle =
      GetJson(absl::StrCat("/api/changes?domain=bob.example&after=", testing::FormEncode(cursor)));
  EXPECT_TRUE(idle.at("children").as_array().empty());
  EXPECT_EQ(idle.at("next").as_string(), cursor);
  GetJson("/api/changes?domain=bob.example&after=not-a-cursor", 400);
}

// Proto3 JSON writes 64-bit integers as strings.
long long ImportCount(const json::object& answer, const char* key) {
  const json::value* value = answer.if_contains(key);
  if (value == nullptr) {
    return 0;
  }
  return value->is_string() ? std::stoll(std::string(value->as_string()))
                            : value->to_number<long long>();
}

TEST_F(WebmentionIoApiStackTest, ExportThenImportRoundTripsAndAWebmentionIoPageImportsOnce) {
  Mention("https://alice.example/1", "reply", "first");
  Mention("https://alice.example/2", "like", "second");
  auto cli = [&](std::vector<std::string> args) {
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, stack_->CliArgs(std::move(args)));
  };
  auto snapshot = [&] {
    pqxx::connection connection(database_->connection_string());
    pqxx::nontransaction transaction(connection);
    std::string rows;
    for (const pqxx::row& row : transaction.exec(
             "SELECT source, target, state, type, content_text, content_html, author_name, "
             "(extract(epoch FROM created_at) * 1000000)::bigint FROM mentions ORDER BY source")) {
      for (const pqxx::field& field : row) {
        rows += field.is_null() ? "NULL" : field.c_str();
        rows += "|";
      }
      rows += "\n";
    }
    return rows;
  };
  const std::string before = snapshot();

  // portcullis export, every row removed, portcullis import: the same mentions, same times.
  const testing::CommandResult exported = cli({"export", "--site", "bob.example"});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const std::string export_file = portcullis::testing::PrivateTempPath("h18-export.jsonl");
  std::ofstream(export_file) << exported.output;
  Query("WITH d AS (DELETE FROM mentions RETURNING 1) SELECT count(*) FROM d");
  testing::CommandResult imported = cli({"import", export_file});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "created"), 2);
  EXPECT_EQ(snapshot(), before);
  imported = cli({"import", export_file});  // Twice: nothing changes.
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "created"), 0);
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "unchanged"), 2);
  EXPECT_EQ(snapshot(), before);

  // A page in webmention.io's shape (this API's own answer is that shape) imports the same pairs.
  const testing::HttpResult page = testing::SendHttp(
      stack_->http_port(), "GET", "/api/mentions.jf2?domain=bob.example", "", "",
      absl::Seconds(10));
  ASSERT_EQ(page.status, 200);
  const std::string page_file = portcullis::testing::PrivateTempPath("h18-webmention-io.json");
  std::ofstream(page_file) << page.body << "\n" << page.body;  // Two saved pages, one repeated.
  Query("WITH d AS (DELETE FROM mentions RETURNING 1) SELECT count(*) FROM d");
  imported = cli({"import", page_file, "--format=webmention-io"});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "created"), 2);
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "unchanged"), 2);
  EXPECT_EQ(Query("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'"), 2);
  const long long rows = Query("SELECT count(*) FROM mentions");
  imported = cli({"import", page_file, "--format=webmention-io"});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_EQ(ImportCount(json::parse(imported.output).as_object(), "created"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM mentions"), rows);
  // What the feed shows again is what it showed, in the same order: the received times were
  // kept, and new numeric ids follow them (the import stores a file in received order).
  const json::object again = GetJson("/api/mentions.jf2?domain=bob.example");
  const json::object original = json::parse(page.body).as_object();
  ASSERT_EQ(again.at("children").as_array().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json::value& now = again.at("children").as_array()[i];
    const json::value& then = original.at("children").as_array()[i];
    for (const char* field : {"wm-source", "wm-received", "content", "wm-property", "author"}) {
      EXPECT_EQ(now.at(field), then.at(field)) << field;
    }
  }
}

}  // namespace
}  // namespace portcullis::integration
