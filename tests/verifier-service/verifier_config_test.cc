#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/config/setting_checks.h"
#include "tests/support/temp_path.h"
#include "verifier-service/src/verifier_flags.h"

namespace portcullis::verifier {
namespace {

// The config of `flags` given on the command line (flag name to text).
absl::StatusOr<VerifierConfig> Build(const config::Texts& flags) {
  return BuildVerifierConfig(flags, config::NoEnvironment);
}

config::Texts Defaults() {
  config::Texts flags;
  flags["database_url"] = "host=/tmp dbname=portcullis";
  return flags;
}

TEST(VerifierConfigTest, DefaultsBuild) {
  absl::StatusOr<VerifierConfig> config = Build(Defaults());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->database_url, "host=/tmp dbname=portcullis");
  EXPECT_EQ(config->grpc_listen.ToString(), "127.0.0.1:50051");
  EXPECT_EQ(config->db_pool_size, 8);
  EXPECT_EQ(config->db_acquire_timeout, absl::Seconds(2));
  EXPECT_EQ(config->db_statement_timeout, absl::Seconds(5));
  EXPECT_EQ(config->max_queued_work, 1024u);
  EXPECT_EQ(config->max_connection_age, absl::Minutes(5));
  EXPECT_EQ(config->health_interval, absl::Seconds(1));
  EXPECT_EQ(config->shutdown_delay, absl::ZeroDuration());
  EXPECT_EQ(config->drain_timeout, absl::Seconds(10));
  EXPECT_EQ(config->startup_timeout, absl::Seconds(60));
  EXPECT_EQ(config->log_level, "info");
  EXPECT_FALSE(config->migrate_only);
}

TEST(VerifierConfigTest, ParsesValues) {
  config::Texts flags = Defaults();
  flags["grpc_listen"] = "[::1]:0";
  flags["db_pool_size"] = "3";
  flags["db_statement_timeout"] = "250ms";
  flags["shutdown_delay"] = "1m30s";
  flags["migrate_only"] = "true";
  flags["log_level"] = "debug";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->grpc_listen.host, "::1");
  EXPECT_EQ(config->grpc_listen.port, 0);
  EXPECT_EQ(config->db_pool_size, 3);
  EXPECT_EQ(config->db_statement_timeout, absl::Milliseconds(250));
  EXPECT_EQ(config->shutdown_delay, absl::Seconds(90));
  EXPECT_TRUE(config->migrate_only);
  EXPECT_EQ(config->log_level, "debug");
}

TEST(VerifierConfigTest, RequiresDatabaseUrl) {
  config::Texts flags = Defaults();
  flags["database_url"] = "";
  const absl::Status status = Build(flags).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("DATABASE_URL"), absl::string_view::npos);
}

TEST(VerifierConfigTest, RefusesBadValuesNamingTheFlag) {
  struct Case {
    std::string field;
    std::string value;
    std::string flag;
  };
  const Case cases[] = {
      {"grpc_listen", "nohost", "--grpc_listen"},
      {"grpc_listen", "127.0.0.1:70000", "--grpc_listen"},
      {"db_pool_size", "0", "--db_pool_size"},
      {"db_pool_size", "eight", "--db_pool_size"},
      {"db_pool_size", "-1", "--db_pool_size"},
      {"max_queued_work", "0", "--max_queued_work"},
      {"db_acquire_timeout", "0s", "--db_acquire_timeout"},
      {"db_acquire_timeout", "2", "--db_acquire_timeout"},
      {"db_statement_timeout", "-5s", "--db_statement_timeout"},
      {"db_statement_timeout", "1us", "--db_statement_timeout"},
      {"max_connection_age", "inf", "--max_connection_age"},
      {"health_interval", "", "--health_interval"},
      {"shutdown_delay", "-1s", "--shutdown_delay"},
      {"drain_timeout", "0s", "--drain_timeout"},
      {"startup_timeout", "soon", "--startup_timeout"},
      {"log_level", "verbose", "--log_level"},
  };
  for (const Case& c : cases) {
    config::Texts flags = Defaults();
    flags[c.field] = c.value;
    const absl::Status status = Build(flags).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.flag << "=" << c.value;
    EXPECT_NE(status.message().find(c.flag), absl::string_view::npos) << status;
    EXPECT_EQ(status.message().find('\n'), absl::string_view::npos) << "one line";
  }
}

TEST(VerifierConfigTest, VerificationValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->verify_now_concurrency, 4);
  EXPECT_EQ(defaults->verification.source_limits.total_timeout, absl::Seconds(5));
  EXPECT_EQ(defaults->verification.source_limits.max_body_bytes, 1 << 20);
  EXPECT_EQ(defaults->verification.author_limits.total_timeout, absl::Seconds(2));
  EXPECT_EQ(defaults->verification.author_limits.max_body_bytes, 256 * 1024);
  EXPECT_EQ(defaults->verification.author_limits.max_redirects, 1);
  EXPECT_EQ(defaults->verification.author_cache_entries, 1024u);
  EXPECT_EQ(defaults->verification.author_cache_ttl, absl::Minutes(10));

  config::Texts flags = Defaults();
  flags["fetch_timeout"] = "3s";
  flags["author_fetch_timeout"] = "500ms";
  flags["author_cache_size"] = "0";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->verification.source_limits.total_timeout, absl::Seconds(3));
  EXPECT_EQ(config->verification.author_limits.total_timeout, absl::Milliseconds(500));
  EXPECT_EQ(config->verification.author_cache_entries, 0u);

  for (const char* bad : {"verify_now_concurrency", "author_fetch_timeout",
                          "author_fetch_max_body_bytes", "author_cache_size", "author_cache_ttl"}) {
    config::Texts broken = Defaults();
    broken[bad] = "-1";
    EXPECT_TRUE(absl::IsInvalidArgument(Build(broken).status()));
  }
}

TEST(VerifierConfigTest, QueueAndLifecycleValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->failed_retention, absl::Hours(24));
  EXPECT_EQ(defaults->workers, 8);
  EXPECT_EQ(defaults->worker_lease, absl::Seconds(30));
  EXPECT_EQ(defaults->retry_base, absl::Seconds(30));
  EXPECT_EQ(defaults->retry_cap, absl::Hours(1));
  EXPECT_EQ(defaults->retry_max_attempts, 8);

  config::Texts flags = Defaults();
  flags["failed_retention"] = "2h";
  flags["workers"] = "4";
  flags["retry_base"] = "5s";
  flags["retry_cap"] = "10m";
  flags["retry_max_attempts"] = "3";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->failed_retention, absl::Hours(2));
  EXPECT_EQ(config->workers, 4);
  EXPECT_EQ(config->retry_max_attempts, 3);

  const auto refused = [](void (*edit)(config::Texts&), const char* flag) {
    config::Texts bad = Defaults();
    edit(bad);
    const absl::Status status = Build(bad).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << flag;
    EXPECT_NE(status.message().find(flag), absl::string_view::npos) << status;
  };
  refused([](config::Texts& f) { f["failed_retention"] = "-1h"; }, "failed_retention");
  refused([](config::Texts& f) { f["workers"] = "-1"; }, "workers");
  refused([](config::Texts& f) { f["workers"] = "many"; }, "workers");
  refused([](config::Texts& f) { f["worker_lease"] = "100ms"; }, "worker_lease");
  refused([](config::Texts& f) { f["retry_cap"] = "1s"; }, "retry_cap");
  refused([](config::Texts& f) { f["retry_max_attempts"] = "0"; }, "retry_max_attempts");
}

TEST(VerifierConfigTest, FetchDefaults) {
  absl::StatusOr<VerifierConfig> config = Build(Defaults());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dns_servers, "");
  EXPECT_EQ(config->fetcher.total_timeout, absl::Seconds(5));
  EXPECT_EQ(config->fetcher.max_body_bytes, 1 << 20);
  EXPECT_EQ(config->fetcher.max_redirects, 3);
  EXPECT_EQ(config->fetcher.max_per_host, 2);
  EXPECT_EQ(config->fetcher.max_in_flight, 1000);
  EXPECT_TRUE(config->egress.extra_allowed_ports.empty());
  EXPECT_TRUE(config->egress.extra_deny.empty());
  EXPECT_TRUE(config->egress.allow.empty());
  EXPECT_FALSE(config->admin_listen.has_value());
}

TEST(VerifierConfigTest, ParsesFetchValues) {
  config::Texts flags = Defaults();
  flags["dns_servers"] = "127.0.0.1:5353";
  flags["fetch_timeout"] = "2s";
  flags["fetch_max_body_bytes"] = "4096";
  flags["fetch_max_redirects"] = "0";
  flags["fetch_allowed_ports"] = "8080, 8443";
  flags["egress_deny_cidrs"] = "168.63.129.16/32";
  flags["egress_allow_cidrs"] = "127.0.0.1/32";
  flags["fetch_max_per_host"] = "4";
  flags["fetch_max_in_flight"] = "50";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dns_servers, "127.0.0.1:5353");
  EXPECT_EQ(config->fetcher.total_timeout, absl::Seconds(2));
  EXPECT_EQ(config->fetcher.max_body_bytes, 4096);
  EXPECT_EQ(config->fetcher.max_redirects, 0);
  EXPECT_EQ(config->egress.extra_allowed_ports, (std::vector<uint16_t>{8080, 8443}));
  EXPECT_EQ(config->egress.extra_deny.size(), 1u);
  EXPECT_EQ(config->egress.allow.size(), 1u);
  EXPECT_EQ(config->fetcher.max_per_host, 4);
  EXPECT_EQ(config->fetcher.max_in_flight, 50);
}

TEST(VerifierConfigTest, RefusesBadFetchValuesNamingTheFlag) {
  const auto refused = [](void (*set)(config::Texts&), const char* flag) {
    config::Texts flags = Defaults();
    set(flags);
    const absl::StatusOr<VerifierConfig> config = Build(flags);
    EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << flag;
    EXPECT_NE(config.status().message().find(flag), absl::string_view::npos) << config.status();
  };
  refused([](config::Texts& f) { f["fetch_timeout"] = "0s"; }, "--fetch_timeout");
  refused([](config::Texts& f) { f["fetch_max_body_bytes"] = "0"; }, "--fetch_max_body_bytes");
  refused([](config::Texts& f) { f["fetch_max_redirects"] = "-1"; }, "--fetch_max_redirects");
  refused([](config::Texts& f) { f["fetch_allowed_ports"] = "80,0"; }, "--fetch_allowed_ports");
  refused([](config::Texts& f) { f["fetch_allowed_ports"] = "http"; }, "--fetch_allowed_ports");
  refused([](config::Texts& f) { f["egress_deny_cidrs"] = "10.0.0.1/8"; }, "--egress_deny_cidrs");
  refused([](config::Texts& f) { f["egress_allow_cidrs"] = "nope"; }, "--egress_allow_cidrs");
  refused([](config::Texts& f) { f["fetch_max_per_host"] = "0"; }, "--fetch_max_per_host");
  refused([](config::Texts& f) { f["fetch_max_in_flight"] = "x"; }, "--fetch_max_in_flight");
  refused([](config::Texts& f) { f["admin_listen"] = "nope"; }, "--admin_listen");
}

TEST(VerifierConfigTest, IngestValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->ingest_require_registration);
  EXPECT_EQ(defaults->ingest_signature_tolerance, absl::Seconds(300));
  EXPECT_EQ(defaults->ingest_default_retention, absl::Hours(72));
  EXPECT_EQ(defaults->ingest_publisher_cache_ttl, absl::Seconds(5));

  config::Texts flags = Defaults();
  flags["ingest_require_registration"] = "false";
  flags["ingest_signature_tolerance"] = "60s";
  flags["ingest_default_retention"] = "24h";
  flags["ingest_publisher_cache_ttl"] = "0s";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->ingest_require_registration);
  EXPECT_EQ(config->ingest_signature_tolerance, absl::Seconds(60));
  EXPECT_EQ(config->ingest_default_retention, absl::Hours(24));
  EXPECT_EQ(config->ingest_publisher_cache_ttl, absl::ZeroDuration());

  const std::pair<const char*, const char*> bad[] = {
      {"ingest_require_registration", "yes"},
      {"ingest_signature_tolerance", "0s"},
      {"ingest_signature_tolerance", "25h"},
      {"ingest_default_retention", "0s"},
      {"ingest_publisher_cache_ttl", "-1s"},
  };
  for (const auto& [field, value] : bad) {
    config::Texts broken = Defaults();
    broken[field] = value;
    const absl::Status status = Build(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << value;
    EXPECT_NE(status.message().find("--ingest_"), absl::string_view::npos) << status;
  }
}

// Issue 17: a retention per kind of row, and the one sweeper's pace.
TEST(VerifierConfigTest, RetentionValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->failed_mention_retention, absl::Hours(720));
  EXPECT_EQ(defaults->accepted_item_retention, absl::Hours(168));
  EXPECT_EQ(defaults->drop_retention, absl::Hours(168));
  EXPECT_EQ(defaults->delivery_retention, absl::Hours(720));
  EXPECT_EQ(defaults->drop_ledger_max_bytes, int64_t{64} << 20);
  EXPECT_EQ(defaults->dead_letter_retention, absl::Hours(720));
  EXPECT_EQ(defaults->retention_sweep_interval, absl::Minutes(1));
  EXPECT_EQ(defaults->retention_sweep_batch, 500);

  config::Texts flags = Defaults();
  flags["failed_mention_retention"] = "48h";
  flags["accepted_item_retention"] = "0s";
  flags["dead_letter_retention"] = "90m";
  flags["retention_sweep_interval"] = "10s";
  flags["retention_sweep_batch"] = "50";
  flags["drop_retention"] = "24h";
  flags["drop_ledger_max_bytes"] = "1024";
  flags["delivery_retention"] = "72h";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->delivery_retention, absl::Hours(72));
  EXPECT_EQ(config->drop_retention, absl::Hours(24));
  EXPECT_EQ(config->drop_ledger_max_bytes, 1024);
  EXPECT_EQ(config->failed_mention_retention, absl::Hours(48));
  EXPECT_EQ(config->accepted_item_retention, absl::ZeroDuration());
  EXPECT_EQ(config->dead_letter_retention, absl::Minutes(90));
  EXPECT_EQ(config->retention_sweep_interval, absl::Seconds(10));
  EXPECT_EQ(config->retention_sweep_batch, 50);

  const std::pair<const char*, const char*> bad[] = {
      {"failed_mention_retention", "-1h"}, {"accepted_item_retention", "soon"},
      {"dead_letter_retention", "-5s"},    {"retention_sweep_interval", "0s"},
      {"retention_sweep_batch", "0"},      {"retention_sweep_batch", "100001"},
      {"drop_retention", "-1h"},           {"drop_ledger_max_bytes", "-1"},
      {"delivery_retention", "-1s"},
  };
  for (const auto& [field, value] : bad) {
    config::Texts broken = Defaults();
    broken[field] = value;
    const absl::Status status = Build(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << field << "=" << value;
    EXPECT_NE(status.message().find(absl::StrCat("--", field)), absl::string_view::npos)
        << status;
  }
}

TEST(VerifierConfigTest, TlsValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->tls.enabled());
  EXPECT_EQ(defaults->tls.reload_interval, absl::Seconds(60));

  config::Texts flags = Defaults();
  flags["tls_cert_file"] = "/tls/tls.crt";
  flags["tls_key_file"] = "/tls/tls.key";
  flags["tls_client_ca_file"] = "/tls/ca.crt";
  flags["tls_reload_interval"] = "5s";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->tls.enabled());
  EXPECT_EQ(config->tls.cert_file, "/tls/tls.crt");
  EXPECT_EQ(config->tls.key_file, "/tls/tls.key");
  EXPECT_EQ(config->tls.client_ca_file, "/tls/ca.crt");
  EXPECT_EQ(config->tls.reload_interval, absl::Seconds(5));

  // A certificate without its key, a client CA without a server certificate, a reload interval
  // under a second: refused at startup, naming the flag.
  config::Texts no_key = Defaults();
  no_key["tls_cert_file"] = "/tls/tls.crt";
  EXPECT_THAT(Build(no_key).status().message(),
              ::testing::HasSubstr("--tls_key_file (TLS_KEY_FILE)"));
  config::Texts ca_only = Defaults();
  ca_only["tls_client_ca_file"] = "/tls/ca.crt";
  EXPECT_THAT(Build(ca_only).status().message(),
              ::testing::HasSubstr("--tls_client_ca_file (TLS_CLIENT_CA_FILE)"));
  for (const char* bad : {"500ms", "0s", "soon"}) {
    config::Texts broken = flags;
    broken["tls_reload_interval"] = bad;
    const absl::Status status = Build(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << bad;
    EXPECT_THAT(status.message(), ::testing::HasSubstr("--tls_reload_interval")) << bad;
  }
}

TEST(VerifierConfigTest, HealthListenIsOptional) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->health_listen.has_value());
  config::Texts flags = Defaults();
  flags["health_listen"] = "0.0.0.0:50052";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->health_listen.has_value());
  EXPECT_EQ(config->health_listen->port, 50052);
  flags["health_listen"] = "nowhere";
  EXPECT_THAT(Build(flags).status().message(),
              ::testing::HasSubstr("--health_listen (HEALTH_LISTEN)"));
}

TEST(VerifierConfigTest, TokenValues) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->tokens_file, "");
  EXPECT_EQ(defaults->token_refresh_interval, absl::Seconds(10));

  config::Texts flags = Defaults();
  flags["tokens_file"] = "/run/secrets/tokens";
  flags["token_refresh_interval"] = "1s";
  absl::StatusOr<VerifierConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tokens_file, "/run/secrets/tokens");
  EXPECT_EQ(config->token_refresh_interval, absl::Seconds(1));

  for (const char* bad : {"0s", "-1s", "soon"}) {
    config::Texts broken = Defaults();
    broken["token_refresh_interval"] = bad;
    const absl::Status status = Build(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << bad;
    EXPECT_NE(status.message().find("--token_refresh_interval (TOKEN_REFRESH_INTERVAL)"),
              absl::string_view::npos)
        << status;
  }
}

TEST(VerifierConfigTest, DeliverySettingsHaveDefaultsAndTheLeaseOutlastsAnAttempt) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->delivery_workers, 2);
  EXPECT_EQ(defaults->delivery_timeout, absl::Seconds(10));
  EXPECT_EQ(defaults->delivery_max_per_destination, 4);
  EXPECT_EQ(defaults->delivery_lease, absl::Seconds(60));
  config::Texts flags = Defaults();
  flags["delivery_workers"] = "0";
  flags["delivery_timeout"] = "2s";
  flags["delivery_lease"] = "3s";
  flags["delivery_max_per_destination"] = "1";
  absl::StatusOr<VerifierConfig> set = Build(flags);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->delivery_workers, 0);
  EXPECT_EQ(set->delivery_lease, absl::Seconds(3));
  flags["delivery_lease"] = "2s";
  const absl::Status short_lease = Build(flags).status();
  EXPECT_TRUE(absl::IsInvalidArgument(short_lease));
  EXPECT_NE(short_lease.message().find("--delivery_lease (DELIVERY_LEASE)"),
            absl::string_view::npos)
      << short_lease;
  flags = Defaults();
  flags["delivery_timeout"] = "5m";
  EXPECT_TRUE(absl::IsInvalidArgument(Build(flags).status()));
}

TEST(VerifierConfigTest, C2paTrustAnchorsAreReadOnceAndRefusedWhenUnusable) {
  absl::StatusOr<VerifierConfig> defaults = Build(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->c2pa_trust_anchors, nullptr);

  const std::string missing = absl::StrCat(::testing::TempDir(), "/no-such-anchors.pem");
  const std::string garbage = portcullis::testing::PrivateTempPath("garbage-anchors.pem");
  {
    std::ofstream file(garbage);
    file << "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n";
  }
  for (const std::string& path : {missing, garbage}) {
    config::Texts flags = Defaults();
    flags["c2pa_trust_anchors"] = path;
    const absl::Status status = Build(flags).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << path << ": " << status;
    EXPECT_NE(status.message().find("--c2pa_trust_anchors (C2PA_TRUST_ANCHORS)"),
              absl::string_view::npos)
        << status;
  }
}

TEST(VerifierConfigTest, EveryDeclaredSettingParsesItsDefault) {
  config::test_support::ExpectEveryDeclaredSettingParsesItsDefault(64);
}

// A bad value of each type, given as a flag or in the environment: the same one line, naming the
// flag and the variable.
TEST(VerifierConfigTest, ABadValueOfEachTypeIsOneLineNamingFlagAndVariable) {
  const config::test_support::BadValue cases[] = {
      {"workers", "WORKERS", "-2", "--workers (WORKERS): '-2' is not a whole number from 0 to 256"},
      {"submit_writers", "SUBMIT_WRITERS", "0",
       "--submit_writers (SUBMIT_WRITERS): '0' is not a whole number from 1 to 64"},
      {"max_queued_work", "MAX_QUEUED_WORK", "0",
       "--max_queued_work (MAX_QUEUED_WORK): '0' is not a whole number from 1 to 1000000"},
      {"max_queue_length", "MAX_QUEUE_LENGTH", "-1",
       "--max_queue_length (MAX_QUEUE_LENGTH): '-1' is not a whole number from 0 (no limit) to "
       "1000000000"},
      {"fetch_timeout", "FETCH_TIMEOUT", "soon",
       "--fetch_timeout (FETCH_TIMEOUT): 'soon' is not a positive duration such as 5s or 250ms"},
      {"shutdown_delay", "SHUTDOWN_DELAY", "-1s",
       "--shutdown_delay (SHUTDOWN_DELAY): '-1s' is not a duration such as 0s, 5s or 250ms"},
      {"db_statement_timeout", "DB_STATEMENT_TIMEOUT", "1us",
       "--db_statement_timeout (DB_STATEMENT_TIMEOUT): '1us' is not at least 1ms"},
      {"ingest_require_registration", "INGEST_REQUIRE_REGISTRATION", "yes",
       "--ingest_require_registration (INGEST_REQUIRE_REGISTRATION): 'yes' is not true or false"},
      {"grpc_listen", "GRPC_LISTEN", "nohost",
       "--grpc_listen (GRPC_LISTEN): 'nohost' is not host:port (missing port)"},
      {"admin_listen", "ADMIN_LISTEN", "nope",
       "--admin_listen (ADMIN_LISTEN): 'nope' is not host:port (missing port)"},
      {"fetch_allowed_ports", "FETCH_ALLOWED_PORTS", "80,0",
       "--fetch_allowed_ports (FETCH_ALLOWED_PORTS): '80,0' is not a list of ports from 1 to "
       "65535"},
      {"log_level", "LOG_LEVEL", "verbose",
       "--log_level (LOG_LEVEL): 'verbose' is not one of trace, debug, info, warn, error, off"},
      {"retry_cap", "RETRY_CAP", "1s",
       "--retry_cap (RETRY_CAP): '1s' is not at least --retry_base"},
  };
  config::test_support::ExpectBadValuesRefusedInOneLine(
      Defaults(), cases, [](const config::Texts& flags, const config::EnvLookup& env) {
        return BuildVerifierConfig(flags, env).status();
      });
  // A CIDR list says what is wrong with the block, after the names.
  const auto env = [](const char* name) -> const char* {
    return absl::string_view(name) == "EGRESS_DENY_CIDRS" ? "10.0.0.1/8" : nullptr;
  };
  const absl::Status cidr = BuildVerifierConfig(Defaults(), env).status();
  EXPECT_THAT(std::string(cidr.message()), ::testing::StartsWith("--egress_deny_cidrs (EGRESS_DENY_CIDRS): "));
  EXPECT_EQ(cidr.message().find('\n'), absl::string_view::npos);
}

TEST(VerifierConfigTest, TheCommandLineWinsOverTheEnvironmentWhichWinsOverTheDefault) {
  const auto env = [](const char* name) -> const char* {
    const absl::string_view n(name);
    return n == "WORKERS" ? "3" : n == "DATABASE_URL" ? "host=/env" : nullptr;
  };
  absl::StatusOr<VerifierConfig> from_env = BuildVerifierConfig({}, env);
  ASSERT_TRUE(from_env.ok()) << from_env.status();
  EXPECT_EQ(from_env->workers, 3);
  EXPECT_EQ(from_env->database_url, "host=/env");
  EXPECT_EQ(from_env->retry_max_attempts, 8);
  absl::StatusOr<VerifierConfig> from_flag = BuildVerifierConfig({{"workers", "5"}}, env);
  ASSERT_TRUE(from_flag.ok()) << from_flag.status();
  EXPECT_EQ(from_flag->workers, 5);
}

// What main runs: a bad value on the command line is refused before Abseil parses it (which
// would exit 1 with its own words); good ones, dashed or not, come back by flag name.
TEST(VerifierConfigTest, TheCommandLineIsCheckedThenParsed) {
  std::vector<std::string> bad_args = {"verifier-service", "--workers", "-2"};
  std::vector<char*> bad;
  for (std::string& arg : bad_args) {
    bad.push_back(arg.data());
  }
  EXPECT_EQ(config::ParseCommandLine(static_cast<int>(bad.size()), bad.data()).status().message(),
            "--workers (WORKERS): '-2' is not a whole number from 0 to 256");

  std::vector<std::string> args = {"verifier-service", "--fetch-timeout", "3s", "--migrate-only",
                                   "--database_url=host=/tmp"};
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  const absl::StatusOr<config::Texts> texts =
      config::ParseCommandLine(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(*texts,
            (config::Texts{
                {"database_url", "host=/tmp"}, {"fetch_timeout", "3s"}, {"migrate_only", "true"}}));
  absl::StatusOr<VerifierConfig> config = Build(*texts);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->fetcher.total_timeout, absl::Seconds(3));
  EXPECT_TRUE(config->migrate_only);
}

}  // namespace
}  // namespace portcullis::verifier
