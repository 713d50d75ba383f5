// pg_floor: what PostgreSQL alone costs per durable row on the real schema and the verifier's own
// batch statements (issue 21's floor, beside bench/load's table). No HTTP, no gRPC: `--threads`
// connections, each set up as a writer's (OpenWriterConnections), write batches of `--batch`
// items through PgMentionStore::SubmitBatch (new pairs with their jobs) or
// PgIngestStore::RecordBatch (unsigned accepted items), for `--seconds`. Prints one line: kind,
// batch, threads, rows, seconds, rows/s. bench/floor runs it beside a private PostgreSQL and adds
// the server's CPU per row.
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/crypto/sha256.h"
#include "pqxx/pqxx"
#include "verifier-service/src/store/migrations.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_ingest_store.h"
#include "verifier-service/src/store/pg_mention_store.h"

ABSL_FLAG(std::string, database_url, "", "libpq connection string of an empty database");
ABSL_FLAG(std::string, kind, "mentions", "mentions (new pairs) or ingest (accepted items)");
ABSL_FLAG(int, batch, 64, "items per transaction");
ABSL_FLAG(int, threads, 2, "writer connections");
ABSL_FLAG(int, seconds, 8, "how long to write");

namespace {

namespace store = portcullis::verifier::store;

store::NewMention Pair(int thread, int64_t n) {
  store::NewMention mention;
  mention.source = absl::StrCat("https://s", thread, "-", n, ".example/post");
  mention.target = absl::StrCat("https://example.com/notes/", thread, "-", n);
  mention.source_hash = portcullis::crypto::Sha256(mention.source);
  mention.target_hash = portcullis::crypto::Sha256(mention.target);
  mention.target_domain = "example.com";
  mention.normalized_target = mention.target;
  mention.normalized_source = mention.source;
  return mention;
}

store::DecisionAt Item(int thread, int64_t n, absl::Time now) {
  store::DecisionAt item;
  store::NewDecision& next = item.next;
  next.decision.publisher = "bench";
  next.decision.content_hash = portcullis::crypto::ToHex(
      portcullis::crypto::Sha256(absl::StrCat("item-", thread, "-", n)));
  next.decision.item_id = absl::StrCat("item-", thread, "-", n);
  next.decision.decision = store::StoredDecision::kAccepted;
  next.decision.decided_at = now;
  next.decision.expires_at = now + absl::Hours(24);
  next.delivery.publisher = "bench";
  next.delivery.item_id = next.decision.item_id;
  next.delivery.content_hash = next.decision.content_hash;
  next.delivery.canonical_body =
      absl::StrCat("{\"id\":\"", next.decision.item_id, "\",\"title\":\"", std::string(200, 'x'),
                   "\"}");
  item.now = now;
  return item;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string url = absl::GetFlag(FLAGS_database_url);
  const std::string kind = absl::GetFlag(FLAGS_kind);
  const int batch = absl::GetFlag(FLAGS_batch);
  const int threads = absl::GetFlag(FLAGS_threads);
  if (url.empty() || (kind != "mentions" && kind != "ingest") || batch < 1 || threads < 1) {
    std::fprintf(stderr, "pg_floor: --database_url, --kind=mentions|ingest, --batch>0, "
                         "--threads>0\n");
    return 2;
  }
  absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
  if (!migrations.ok() || !store::Migrator(*migrations).Apply(url).ok()) {
    std::fprintf(stderr, "pg_floor: migrating %s failed\n", url.c_str());
    return 1;
  }
  {
    pqxx::connection connection(url);
    pqxx::work setup(connection);
    setup.exec0("INSERT INTO sites (domain) VALUES ('example.com') ON CONFLICT DO NOTHING");
    setup.exec0("INSERT INTO targets (site_id, url, kind) SELECT id, "
                "'https://example.com/notes/', 'PREFIX' FROM sites ON CONFLICT DO NOTHING");
    setup.exec0("INSERT INTO publishers (name) VALUES ('bench') ON CONFLICT DO NOTHING");
    setup.commit();
  }
  absl::StatusOr<std::unique_ptr<store::PgConnectionPool>> pool =
      store::PgConnectionPool::Create({url, 2, absl::Seconds(5), absl::Seconds(30)});
  absl::StatusOr<std::vector<std::unique_ptr<store::PgConnectionPool>>> writers =
      store::OpenWriterConnections({url, 1, absl::Seconds(5), absl::Seconds(30)}, threads);
  if (!pool.ok() || !writers.ok()) {
    std::fprintf(stderr, "pg_floor: cannot connect\n");
    return 1;
  }
  // No admission limits: the floor is the statements' cost (the counters behind the limits read
  // the database at most once a second, apart from the writes).
  store::PgMentionStore mentions(**pool);
  store::PgIngestStore ingest(**pool);

  std::atomic<int64_t> rows{0};
  std::atomic<bool> failed{false};
  const absl::Time start = absl::Now();
  const absl::Time end = start + absl::Seconds(absl::GetFlag(FLAGS_seconds));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      store::PgConnectionPool& connection = *(*writers)[t];
      for (int64_t n = 0; absl::Now() < end && !failed.load();) {
        int64_t written = 0;
        absl::Status status;
        if (kind == "mentions") {
          std::vector<store::NewMention> items;
          for (int i = 0; i < batch; ++i) {
            items.push_back(Pair(t, n++));
          }
          status = connection.Run("pg_floor", [&](pqxx::connection& c) {
            for (const auto& result : mentions.SubmitBatch(c, items)) {
              written += result.ok() && result->created ? 1 : 0;
            }
          });
        } else {
          std::vector<store::DecisionAt> items;
          const absl::Time now = absl::Now();
          for (int i = 0; i < batch; ++i) {
            items.push_back(Item(t, n++, now));
          }
          status = connection.Run("pg_floor", [&](pqxx::connection& c) {
            for (const auto& result : ingest.RecordBatch(c, items)) {
              written += result.ok() && result->recorded ? 1 : 0;
            }
          });
        }
        if (!status.ok() || written != batch) {
          std::fprintf(stderr, "pg_floor: a batch wrote %lld of %d rows: %s\n",
                       static_cast<long long>(written), batch, status.ToString().c_str());
          failed = true;
        }
        rows += written;
      }
    });
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (failed.load()) {
    return 1;
  }
  std::printf("%s batch=%d threads=%d rows=%lld seconds=%.2f rows_per_s=%.0f\n", kind.c_str(),
              batch, threads, static_cast<long long>(rows.load()), seconds, rows.load() / seconds);
  return 0;
}
