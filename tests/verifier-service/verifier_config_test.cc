#include "verifier-service/src/verifier_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier {
namespace {

VerifierFlagValues Defaults() {
  VerifierFlagValues flags;
  flags.database_url = "host=/tmp dbname=portcullis";
  return flags;
}

TEST(VerifierConfigTest, DefaultsBuild) {
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(Defaults());
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
  VerifierFlagValues flags = Defaults();
  flags.grpc_listen = "[::1]:0";
  flags.db_pool_size = "3";
  flags.db_statement_timeout = "250ms";
  flags.shutdown_delay = "1m30s";
  flags.migrate_only = true;
  flags.log_level = "debug";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
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
  VerifierFlagValues flags = Defaults();
  flags.database_url = "";
  const absl::Status status = BuildVerifierConfig(flags).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("DATABASE_URL"), absl::string_view::npos);
}

TEST(VerifierConfigTest, RefusesBadValuesNamingTheFlag) {
  struct Case {
    std::string VerifierFlagValues::*field;
    std::string value;
    std::string flag;
  };
  const Case cases[] = {
      {&VerifierFlagValues::grpc_listen, "nohost", "--grpc_listen"},
      {&VerifierFlagValues::grpc_listen, "127.0.0.1:70000", "--grpc_listen"},
      {&VerifierFlagValues::db_pool_size, "0", "--db_pool_size"},
      {&VerifierFlagValues::db_pool_size, "eight", "--db_pool_size"},
      {&VerifierFlagValues::db_pool_size, "-1", "--db_pool_size"},
      {&VerifierFlagValues::max_queued_work, "0", "--max_queued_work"},
      {&VerifierFlagValues::db_acquire_timeout, "0s", "--db_acquire_timeout"},
      {&VerifierFlagValues::db_acquire_timeout, "2", "--db_acquire_timeout"},
      {&VerifierFlagValues::db_statement_timeout, "-5s", "--db_statement_timeout"},
      {&VerifierFlagValues::db_statement_timeout, "1us", "--db_statement_timeout"},
      {&VerifierFlagValues::max_connection_age, "inf", "--max_connection_age"},
      {&VerifierFlagValues::health_interval, "", "--health_interval"},
      {&VerifierFlagValues::shutdown_delay, "-1s", "--shutdown_delay"},
      {&VerifierFlagValues::drain_timeout, "0s", "--drain_timeout"},
      {&VerifierFlagValues::startup_timeout, "soon", "--startup_timeout"},
      {&VerifierFlagValues::log_level, "verbose", "--log_level"},
  };
  for (const Case& c : cases) {
    VerifierFlagValues flags = Defaults();
    flags.*c.field = c.value;
    const absl::Status status = BuildVerifierConfig(flags).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.flag << "=" << c.value;
    EXPECT_NE(status.message().find(c.flag), absl::string_view::npos) << status;
    EXPECT_EQ(status.message().find('\n'), absl::string_view::npos) << "one line";
  }
}

TEST(VerifierConfigTest, VerificationValues) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->verify_now_concurrency, 4);
  EXPECT_EQ(defaults->verification.source_limits.total_timeout, absl::Seconds(5));
  EXPECT_EQ(defaults->verification.source_limits.max_body_bytes, 1 << 20);
  EXPECT_EQ(defaults->verification.author_limits.total_timeout, absl::Seconds(2));
  EXPECT_EQ(defaults->verification.author_limits.max_body_bytes, 256 * 1024);
  EXPECT_EQ(defaults->verification.author_limits.max_redirects, 1);
  EXPECT_EQ(defaults->verification.author_cache_entries, 1024u);
  EXPECT_EQ(defaults->verification.author_cache_ttl, absl::Minutes(10));

  VerifierFlagValues flags = Defaults();
  flags.fetch_timeout = "3s";
  flags.author_fetch_timeout = "500ms";
  flags.author_cache_size = "0";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->verification.source_limits.total_timeout, absl::Seconds(3));
  EXPECT_EQ(config->verification.author_limits.total_timeout, absl::Milliseconds(500));
  EXPECT_EQ(config->verification.author_cache_entries, 0u);

  for (auto bad : {&VerifierFlagValues::verify_now_concurrency,
                   &VerifierFlagValues::author_fetch_timeout,
                   &VerifierFlagValues::author_fetch_max_body_bytes,
                   &VerifierFlagValues::author_cache_size, &VerifierFlagValues::author_cache_ttl}) {
    VerifierFlagValues broken = Defaults();
    broken.*bad = "-1";
    EXPECT_TRUE(absl::IsInvalidArgument(BuildVerifierConfig(broken).status()));
  }
}

TEST(VerifierConfigTest, QueueAndLifecycleValues) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->failed_retention, absl::Hours(24));
  EXPECT_EQ(defaults->workers, 8);
  EXPECT_EQ(defaults->worker_lease, absl::Seconds(30));
  EXPECT_EQ(defaults->retry_base, absl::Seconds(30));
  EXPECT_EQ(defaults->retry_cap, absl::Hours(1));
  EXPECT_EQ(defaults->retry_max_attempts, 8);

  VerifierFlagValues flags = Defaults();
  flags.failed_retention = "2h";
  flags.workers = "4";
  flags.retry_base = "5s";
  flags.retry_cap = "10m";
  flags.retry_max_attempts = "3";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->failed_retention, absl::Hours(2));
  EXPECT_EQ(config->workers, 4);
  EXPECT_EQ(config->retry_max_attempts, 3);

  const auto refused = [](void (*edit)(VerifierFlagValues&), const char* flag) {
    VerifierFlagValues bad = Defaults();
    edit(bad);
    const absl::Status status = BuildVerifierConfig(bad).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << flag;
    EXPECT_NE(status.message().find(flag), absl::string_view::npos) << status;
  };
  refused([](VerifierFlagValues& f) { f.failed_retention = "-1h"; }, "failed_retention");
  refused([](VerifierFlagValues& f) { f.workers = "-1"; }, "workers");
  refused([](VerifierFlagValues& f) { f.workers = "many"; }, "workers");
  refused([](VerifierFlagValues& f) { f.worker_lease = "100ms"; }, "worker_lease");
  refused([](VerifierFlagValues& f) { f.retry_cap = "1s"; }, "retry_cap");
  refused([](VerifierFlagValues& f) { f.retry_max_attempts = "0"; }, "retry_max_attempts");
}

TEST(VerifierConfigTest, FetchDefaults) {
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(Defaults());
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
  VerifierFlagValues flags = Defaults();
  flags.dns_servers = "127.0.0.1:5353";
  flags.fetch_timeout = "2s";
  flags.fetch_max_body_bytes = "4096";
  flags.fetch_max_redirects = "0";
  flags.fetch_allowed_ports = "8080, 8443";
  flags.egress_deny_cidrs = "168.63.129.16/32";
  flags.egress_allow_cidrs = "127.0.0.1/32";
  flags.fetch_max_per_host = "4";
  flags.fetch_max_in_flight = "50";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
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
  const auto refused = [](void (*set)(VerifierFlagValues&), const char* flag) {
    VerifierFlagValues flags = Defaults();
    set(flags);
    const absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
    EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << flag;
    EXPECT_NE(config.status().message().find(flag), absl::string_view::npos) << config.status();
  };
  refused([](VerifierFlagValues& f) { f.fetch_timeout = "0s"; }, "--fetch_timeout");
  refused([](VerifierFlagValues& f) { f.fetch_max_body_bytes = "0"; }, "--fetch_max_body_bytes");
  refused([](VerifierFlagValues& f) { f.fetch_max_redirects = "-1"; }, "--fetch_max_redirects");
  refused([](VerifierFlagValues& f) { f.fetch_allowed_ports = "80,0"; }, "--fetch_allowed_ports");
  refused([](VerifierFlagValues& f) { f.fetch_allowed_ports = "http"; }, "--fetch_allowed_ports");
  refused([](VerifierFlagValues& f) { f.egress_deny_cidrs = "10.0.0.1/8"; }, "--egress_deny_cidrs");
  refused([](VerifierFlagValues& f) { f.egress_allow_cidrs = "nope"; }, "--egress_allow_cidrs");
  refused([](VerifierFlagValues& f) { f.fetch_max_per_host = "0"; }, "--fetch_max_per_host");
  refused([](VerifierFlagValues& f) { f.fetch_max_in_flight = "x"; }, "--fetch_max_in_flight");
  refused([](VerifierFlagValues& f) { f.admin_listen = "nope"; }, "--admin_listen");
}

TEST(VerifierConfigTest, IngestValues) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->ingest_require_registration);
  EXPECT_EQ(defaults->ingest_signature_tolerance, absl::Seconds(300));
  EXPECT_EQ(defaults->ingest_default_retention, absl::Hours(72));
  EXPECT_EQ(defaults->ingest_publisher_cache_ttl, absl::Seconds(5));
  EXPECT_EQ(defaults->ingest_sweep_interval, absl::Minutes(1));
  EXPECT_EQ(defaults->ingest_sweep_batch, 500);

  VerifierFlagValues flags = Defaults();
  flags.ingest_require_registration = "false";
  flags.ingest_signature_tolerance = "60s";
  flags.ingest_default_retention = "24h";
  flags.ingest_publisher_cache_ttl = "0s";
  flags.ingest_sweep_interval = "10s";
  flags.ingest_sweep_batch = "50";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->ingest_require_registration);
  EXPECT_EQ(config->ingest_signature_tolerance, absl::Seconds(60));
  EXPECT_EQ(config->ingest_default_retention, absl::Hours(24));
  EXPECT_EQ(config->ingest_publisher_cache_ttl, absl::ZeroDuration());
  EXPECT_EQ(config->ingest_sweep_interval, absl::Seconds(10));
  EXPECT_EQ(config->ingest_sweep_batch, 50);

  const std::pair<std::string VerifierFlagValues::*, const char*> bad[] = {
      {&VerifierFlagValues::ingest_require_registration, "yes"},
      {&VerifierFlagValues::ingest_signature_tolerance, "0s"},
      {&VerifierFlagValues::ingest_signature_tolerance, "25h"},
      {&VerifierFlagValues::ingest_default_retention, "0s"},
      {&VerifierFlagValues::ingest_publisher_cache_ttl, "-1s"},
      {&VerifierFlagValues::ingest_sweep_interval, "0s"},
      {&VerifierFlagValues::ingest_sweep_batch, "0"},
  };
  for (const auto& [field, value] : bad) {
    VerifierFlagValues broken = Defaults();
    broken.*field = value;
    const absl::Status status = BuildVerifierConfig(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << value;
    EXPECT_NE(status.message().find("--ingest_"), absl::string_view::npos) << status;
  }
}

TEST(VerifierConfigTest, TlsValues) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->tls.enabled());
  EXPECT_EQ(defaults->tls.reload_interval, absl::Seconds(60));

  VerifierFlagValues flags = Defaults();
  flags.tls_cert_file = "/tls/tls.crt";
  flags.tls_key_file = "/tls/tls.key";
  flags.tls_client_ca_file = "/tls/ca.crt";
  flags.tls_reload_interval = "5s";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->tls.enabled());
  EXPECT_EQ(config->tls.cert_file, "/tls/tls.crt");
  EXPECT_EQ(config->tls.key_file, "/tls/tls.key");
  EXPECT_EQ(config->tls.client_ca_file, "/tls/ca.crt");
  EXPECT_EQ(config->tls.reload_interval, absl::Seconds(5));

  // A certificate without its key, a client CA without a server certificate, a reload interval
  // under a second: refused at startup, naming the flag.
  VerifierFlagValues no_key = Defaults();
  no_key.tls_cert_file = "/tls/tls.crt";
  EXPECT_THAT(BuildVerifierConfig(no_key).status().message(),
              ::testing::HasSubstr("--tls_key_file (TLS_KEY_FILE)"));
  VerifierFlagValues ca_only = Defaults();
  ca_only.tls_client_ca_file = "/tls/ca.crt";
  EXPECT_THAT(BuildVerifierConfig(ca_only).status().message(),
              ::testing::HasSubstr("--tls_client_ca_file (TLS_CLIENT_CA_FILE)"));
  for (const char* bad : {"500ms", "0s", "soon"}) {
    VerifierFlagValues broken = flags;
    broken.tls_reload_interval = bad;
    const absl::Status status = BuildVerifierConfig(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << bad;
    EXPECT_THAT(status.message(), ::testing::HasSubstr("--tls_reload_interval")) << bad;
  }
}

TEST(VerifierConfigTest, HealthListenIsOptional) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->health_listen.has_value());
  VerifierFlagValues flags = Defaults();
  flags.health_listen = "0.0.0.0:50052";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->health_listen.has_value());
  EXPECT_EQ(config->health_listen->port, 50052);
  flags.health_listen = "nowhere";
  EXPECT_THAT(BuildVerifierConfig(flags).status().message(),
              ::testing::HasSubstr("--health_listen (HEALTH_LISTEN)"));
}

TEST(VerifierConfigTest, TokenValues) {
  absl::StatusOr<VerifierConfig> defaults = BuildVerifierConfig(Defaults());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->tokens_file, "");
  EXPECT_EQ(defaults->token_refresh_interval, absl::Seconds(10));

  VerifierFlagValues flags = Defaults();
  flags.tokens_file = "/run/secrets/tokens";
  flags.token_refresh_interval = "1s";
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tokens_file, "/run/secrets/tokens");
  EXPECT_EQ(config->token_refresh_interval, absl::Seconds(1));

  for (const char* bad : {"0s", "-1s", "soon"}) {
    VerifierFlagValues broken = Defaults();
    broken.token_refresh_interval = bad;
    const absl::Status status = BuildVerifierConfig(broken).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << bad;
    EXPECT_NE(status.message().find("--token_refresh_interval (TOKEN_REFRESH_INTERVAL)"),
              absl::string_view::npos)
        << status;
  }
}

}  // namespace
}  // namespace portcullis::verifier
