#include "verifier-service/src/store/pg_connection_pool.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/logging/log.h"
#include "pqxx/except"
#include "pqxx/nontransaction"

namespace portcullis::verifier::store {
namespace {

// Run once on every new connection, so that its backend keeps its heap between statements.
// glibc's free() gives the top of the heap back to the kernel whenever more than
// M_TRIM_THRESHOLD is free there (128 KiB until the process frees a block it had mmap'ed; then
// twice that block's size, mallopt(3)). A statement writing a verified mention (its content
// twice, the new row, TOAST's compression buffers) frees more than 128 KiB when it ends, so
// every such statement shrank the backend's heap with brk() — a TLB flush on every core — and
// faulted the same pages back in on the next one: a quarter of PostgreSQL's CPU in bench/verify.
// Allocating and freeing one 1 MiB value raises the backend's trim threshold to 2 MiB (its
// mmap threshold to 1 MiB) for the life of the connection: at most 2 MiB more kept per
// connection. Harmless where the server's allocator is not glibc's.
constexpr char kKeepHeapStatement[] = "SELECT length(repeat('x', 1048576))";

// SQLSTATE classes and codes that mean "try again later" rather than "this request is wrong".
bool IsTransientSqlState(absl::string_view state) {
  return absl::StartsWith(state, "08") ||   // connection exception
         absl::StartsWith(state, "40") ||   // serialization failure, deadlock
         absl::StartsWith(state, "53") ||   // insufficient resources (too many connections, ...)
         absl::StartsWith(state, "57P") ||  // admin / crash shutdown, cannot connect now
         state == "55P03";                  // lock not available
}

// States after which the server has closed (or is closing) the session.
bool IsSessionEndingSqlState(absl::string_view state) {
  return absl::StartsWith(state, "08") || absl::StartsWith(state, "57P");
}

// libpq messages span lines ("ERROR: ...\nLINE 1: ..."); logs have one line per event.
std::string OneLine(const char* text) {
  std::string line =
      absl::StrReplaceAll(absl::StripAsciiWhitespace(text), {{"\n", " | "}, {"\t", " "}});
  return line;
}

// The pooled connection Run() is running work on in this thread (libpqxx's connection has no
// virtual functions, so PrepareOnce cannot ask the connection itself whether it is pooled).
thread_local PgPooledConnection* current_pooled_connection = nullptr;

}  // namespace

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  size_t size = 2;
  for (const std::string& value : values) {
    size += value.size() + 3;
  }
  std::string literal;
  literal.reserve(size);
  literal += '{';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      literal += ',';
    }
    literal += '"';
    // Runs without a character to escape or drop are copied whole.
    absl::string_view rest = values[i];
    while (!rest.empty()) {
      const size_t special = rest.find_first_of(absl::string_view("\"\\\0", 3));
      literal.append(rest.data(), std::min(special, rest.size()));
      if (special == absl::string_view::npos) {
        break;
      }
      if (rest[special] != '\0') {
        literal += '\\';
        literal += rest[special];
      }
      rest.remove_prefix(special + 1);
    }
    literal += '"';
  }
  literal += '}';
  return literal;
}

absl::Status StatusFromCurrentDatabaseException(absl::string_view operation_name,
                                                bool* connection_unusable) {
  *connection_unusable = true;
  const std::string operation(operation_name);
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    logging::Warn("database connection failed operation={} error={}", operation, OneLine(e.what()));
    return absl::UnavailableError("database unavailable");
  } catch (const pqxx::sql_error& e) {
    const std::string& state = e.sqlstate();
    *connection_unusable = IsSessionEndingSqlState(state);
    logging::Warn("database error operation={} sqlstate={} error={}", operation, state,
                  OneLine(e.what()));
    if (state == "57014") {
      return absl::DeadlineExceededError("database statement timed out");
    }
    if (IsTransientSqlState(state)) {
      return absl::UnavailableError("database temporarily unavailable");
    }
    return absl::InternalError("database error");
  } catch (const pqxx::in_doubt_error& e) {
    logging::Warn("database commit outcome unknown operation={} error={}", operation,
                  OneLine(e.what()));
    return absl::UnavailableError("database unavailable");
  } catch (const std::exception& e) {
    logging::Error("database client error operation={} error={}", operation, OneLine(e.what()));
    return absl::InternalError("database error");
  } catch (...) {
    logging::Error("database client error operation={} error=unknown exception", operation);
    return absl::InternalError("database error");
  }
}

absl::StatusOr<std::vector<std::unique_ptr<PgConnectionPool>>> OpenWriterConnections(
    PgPoolOptions options, int writers) {
  options.size = 1;
  options.keyed_statements_only = true;
  std::vector<std::unique_ptr<PgConnectionPool>> connections;
  for (int i = 0; i < writers; ++i) {
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool = PgConnectionPool::Create(options);
    if (!pool.ok()) {
      return pool.status();
    }
    connections.push_back(*std::move(pool));
  }
  return connections;
}

absl::StatusOr<std::unique_ptr<PgConnectionPool>> PgConnectionPool::Create(PgPoolOptions options) {
  if (options.database_url.empty()) {
    return absl::InvalidArgumentError("database url is empty");
  }
  if (options.size <= 0) {
    return absl::InvalidArgumentError("pool size must be positive");
  }
  if (options.acquire_timeout <= absl::ZeroDuration() ||
      options.statement_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("pool timeouts must be positive");
  }
  return std::unique_ptr<PgConnectionPool>(new PgConnectionPool(std::move(options)));
}

int PgConnectionPool::open_connections() const {
  absl::MutexLock lock(&mu_);
  return open_;
}

void PrepareOnce(pqxx::transaction_base& transaction, const PgStatement& statement) {
  pqxx::connection_base& connection = transaction.conn();
  // libpqxx's prepare() only records the definition (the server sees it with the first
  // execution); a name it already has with the same text is a no-op, with another text it
  // throws (INTERNAL). A pooled connection skips even that after the first time; one from
  // elsewhere (tests) goes through it every time.
  PgPooledConnection* pooled = current_pooled_connection;
  if (pooled != nullptr && static_cast<pqxx::connection_base*>(pooled) != &connection) {
    pooled = nullptr;
  }
  if (pooled != nullptr && pooled->IsPrepared(statement)) {
    return;
  }
  connection.prepare(statement.name, statement.sql);
  if (pooled != nullptr) {
    pooled->SetPrepared(statement);
  }
}

absl::StatusOr<std::unique_ptr<PgPooledConnection>> PgConnectionPool::Acquire(
    absl::string_view operation) {
  {
    absl::MutexLock lock(&mu_);
    const auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < options_.size;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&available), options_.acquire_timeout)) {
      logging::Warn("database pool exhausted operation={} size={}", std::string(operation),
                    options_.size);
      return absl::UnavailableError("database busy: no free connection");
    }
    if (!idle_.empty()) {
      std::unique_ptr<PgPooledConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
    ++open_;  // Reserve the slot while connecting outside the lock.
  }
  try {
    auto connection = std::make_unique<PgPooledConnection>(options_.database_url);
    pqxx::nontransaction setup(*connection);
    setup.exec0(absl::StrCat("SET statement_timeout = ",
                             absl::ToInt64Milliseconds(options_.statement_timeout)));
    setup.exec(kKeepHeapStatement);
    if (options_.keyed_statements_only) {
      setup.exec0("SET plan_cache_mode = force_generic_plan");
      setup.exec0("SET enable_seqscan = off");
      // A scan that has no index left is costed as a disabled sequential scan (1e10), far over
      // jit_above_cost: PostgreSQL would JIT-compile that plan on every execution (seen: ~0.5 s
      // per batch for a one-row table). Keyed statements never gain from JIT.
      setup.exec0("SET jit = off");
    }
    setup.commit();
    return connection;
  } catch (...) {
    bool unused = true;
    absl::Status status = StatusFromCurrentDatabaseException(operation, &unused);
    Discard();
    return status;
  }
}

void PgConnectionPool::Release(std::unique_ptr<PgPooledConnection> connection) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

void PgConnectionPool::Discard() {
  absl::MutexLock lock(&mu_);
  --open_;
}

absl::Status PgConnectionPool::Run(absl::string_view operation,
                                   absl::FunctionRef<void(pqxx::connection&)> work) {
  absl::StatusOr<std::unique_ptr<PgPooledConnection>> connection = Acquire(operation);
  if (!connection.ok()) {
    return connection.status();
  }
  absl::Status status = absl::OkStatus();
  bool unusable = false;
  PgPooledConnection* const outer = current_pooled_connection;
  current_pooled_connection = connection->get();
  try {
    work(**connection);
  } catch (...) {
    status = StatusFromCurrentDatabaseException(operation, &unusable);
  }
  current_pooled_connection = outer;
  if (unusable || !(*connection)->is_open()) {
    connection->reset();  // Close outside the lock.
    Discard();
  } else {
    Release(*std::move(connection));
  }
  return status;
}

}  // namespace portcullis::verifier::store
