#include "ingest-gateway/src/gateway_config.h"

#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/config/setting_checks.h"
#include "tests/support/temp_path.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "pct_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

// Writes `contents` to a file in the test's temporary directory; its path.
std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = portcullis::testing::PrivateTempPath("gateway-config-" + name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
  return path;
}

// The config of `flags` given on the command line (flag name to text).
absl::StatusOr<GatewayConfig> Build(const config::Texts& flags) {
  return GatewayConfig::FromFlags(flags, config::NoEnvironment);
}

// The defaults plus the one required flag, a readable token file.
config::Texts ValidFlags() {
  config::Texts flags;
  flags["verifier_token_file"] = WriteFile("token", std::string(kToken) + "\n");
  return flags;
}

TEST(GatewayConfigTest, DefaultsAreValid) {
  absl::StatusOr<GatewayConfig> config = Build(ValidFlags());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http_listen.ToString(), "127.0.0.1:8080");
  EXPECT_EQ(config->admin_listen.ToString(), "127.0.0.1:9090");
  EXPECT_EQ(config->verifier_target, "127.0.0.1:50051");
  EXPECT_EQ(config->verifier_timeout, absl::Seconds(2));
  EXPECT_EQ(config->retry_after_seconds, 5);
  EXPECT_EQ(config->io_threads, 2);
  EXPECT_EQ(config->max_connections, 1024u);
  EXPECT_EQ(config->max_connections_per_address, 64u);
  EXPECT_EQ(config->max_body_bytes, 1048576u);
  EXPECT_EQ(config->max_header_bytes, 16384u);
  EXPECT_EQ(config->read_timeout, absl::Seconds(10));
  EXPECT_EQ(config->idle_timeout, absl::Seconds(30));
  EXPECT_EQ(config->readiness_interval, absl::Seconds(1));
  EXPECT_EQ(config->shutdown_delay, absl::ZeroDuration());
  EXPECT_EQ(config->drain_timeout, absl::Seconds(10));
  EXPECT_EQ(config->log_level, "info");
  EXPECT_DOUBLE_EQ(config->client_rate_per_second, 2);  // 120/m
  EXPECT_DOUBLE_EQ(config->client_burst, 60);
  EXPECT_DOUBLE_EQ(config->source_host_rate_per_second, 1);  // 60/m
  EXPECT_DOUBLE_EQ(config->source_host_burst, 30);
  EXPECT_EQ(config->rate_limit_max_keys, 100000u);
  EXPECT_EQ(config->ingest_max_body_bytes, 1048576u);
  EXPECT_EQ(config->ingest_duplicate_cache_ttl, absl::Seconds(2));
  EXPECT_EQ(config->verifier_token, kToken);
}

TEST(GatewayConfigTest, VerifierTokenFileIsRequired) {
  config::Texts flags = ValidFlags();
  flags["verifier_token_file"].clear();
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--verifier_token_file is required"));
}

TEST(GatewayConfigTest, UnreadableOrEmptyTokenFileNamesTheFlagNotTheContents) {
  config::Texts flags = ValidFlags();
  for (const std::string& path :
       {::testing::TempDir() + "/gateway-config-missing-token", WriteFile("empty", " \n"),
        WriteFile("two", std::string(kToken) + " " + kToken)}) {
    flags["verifier_token_file"] = path;
    absl::StatusOr<GatewayConfig> config = Build(flags);
    ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_THAT(config.status().message(), HasSubstr("--verifier_token_file: ")) << path;
    EXPECT_THAT(config.status().message(), HasSubstr(path));
    EXPECT_THAT(config.status().message(), Not(HasSubstr("pct_")));
  }
}

TEST(GatewayConfigTest, VerifierTlsIsOffByDefaultAndTakesItsFlags) {
  const absl::StatusOr<GatewayConfig> plain = Build(ValidFlags());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->verifier_tls.enabled());

  config::Texts flags = ValidFlags();
  flags["verifier_tls_ca_file"] = "/tls/ca.crt";
  flags["verifier_tls_cert_file"] = "/tls/tls.crt";
  flags["verifier_tls_key_file"] = "/tls/tls.key";
  flags["verifier_tls_server_name"] = "verifier.test";
  flags["verifier_tls_reload_interval"] = "2s";
  const absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->verifier_tls.ca_file, "/tls/ca.crt");
  EXPECT_EQ(config->verifier_tls.cert_file, "/tls/tls.crt");
  EXPECT_EQ(config->verifier_tls.key_file, "/tls/tls.key");
  EXPECT_EQ(config->verifier_tls.server_name, "verifier.test");
  EXPECT_EQ(config->verifier_tls.reload_interval, absl::Seconds(2));
}

TEST(GatewayConfigTest, VerifierTlsCombinationsNameTheFlag) {
  config::Texts no_ca = ValidFlags();
  no_ca["verifier_tls_cert_file"] = "/tls/tls.crt";
  no_ca["verifier_tls_key_file"] = "/tls/tls.key";
  EXPECT_THAT(Build(no_ca).status().message(), HasSubstr("--verifier_tls_ca_file is required"));
  config::Texts no_key = ValidFlags();
  no_key["verifier_tls_ca_file"] = "/tls/ca.crt";
  no_key["verifier_tls_cert_file"] = "/tls/tls.crt";
  EXPECT_THAT(Build(no_key).status().message(), HasSubstr("--verifier_tls_key_file"));
  config::Texts fast = ValidFlags();
  fast["verifier_tls_ca_file"] = "/tls/ca.crt";
  fast["verifier_tls_reload_interval"] = "100ms";
  EXPECT_THAT(Build(fast).status().message(), HasSubstr("--verifier_tls_reload_interval"));
}

TEST(GatewayConfigTest, IngestBodyCapIsAtMostOneMebibyte) {
  config::Texts flags = ValidFlags();
  flags["ingest_max_body_bytes"] = "65536";
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ingest_max_body_bytes, 65536u);
  for (const char* bad : {"0", "1048577", "big", "-1"}) {
    flags["ingest_max_body_bytes"] = bad;
    config = Build(flags);
    EXPECT_FALSE(config.ok()) << bad;
    EXPECT_THAT(config.status().message(), HasSubstr("ingest_max_body_bytes")) << bad;
  }
}

// Issue 21: the gateway's answers to repeats of accepted items can be turned off (0s), and last
// no longer than the verifier's publisher cache.
TEST(GatewayConfigTest, IngestDuplicateCacheIsFromZeroToFiveSeconds) {
  config::Texts flags = ValidFlags();
  for (const auto& [text, ttl] : {std::pair<const char*, absl::Duration>{"0s", absl::ZeroDuration()},
                                  {"0", absl::ZeroDuration()},
                                  {"5s", absl::Seconds(5)},
                                  {"250ms", absl::Milliseconds(250)}}) {
    flags["ingest_duplicate_cache_ttl"] = text;
    absl::StatusOr<GatewayConfig> config = Build(flags);
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    EXPECT_EQ(config->ingest_duplicate_cache_ttl, ttl) << text;
  }
  for (const char* bad : {"6s", "-1s", "soon"}) {
    flags["ingest_duplicate_cache_ttl"] = bad;
    absl::StatusOr<GatewayConfig> config = Build(flags);
    EXPECT_FALSE(config.ok()) << bad;
    EXPECT_THAT(config.status().message(),
                HasSubstr("--ingest_duplicate_cache_ttl (INGEST_DUPLICATE_CACHE_TTL): '"))
        << bad;
    EXPECT_THAT(config.status().message(), HasSubstr("a duration from 0s to 5s")) << bad;
  }
}

// Issue 17: the avatar proxy's settings.
TEST(GatewayConfigTest, AvatarCacheAndPublicBaseUrl) {
  config::Texts flags = ValidFlags();
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->public_base_url, "");
  EXPECT_EQ(config->avatar_cache.max_entries, 256u);
  EXPECT_EQ(config->avatar_cache.max_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(config->avatar_cache.ttl, absl::Hours(1));
  flags["public_base_url"] = "https://mentions.example/wm";
  flags["avatar_cache_entries"] = "0";
  flags["avatar_cache_bytes"] = "1024";
  flags["avatar_cache_ttl"] = "5m";
  config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->public_base_url, "https://mentions.example/wm");
  EXPECT_EQ(config->avatar_cache.max_entries, 0u);
  EXPECT_EQ(config->avatar_cache.max_bytes, 1024u);
  EXPECT_EQ(config->avatar_cache.ttl, absl::Minutes(5));
  for (const char* bad : {"mentions.example", "https://mentions.example/", "ftp://m.example",
                          "https://m.example/?a=b", "https://m.example/#x", "https://",
                          "https://m example"}) {
    flags["public_base_url"] = bad;
    config = Build(flags);
    EXPECT_FALSE(config.ok()) << bad;
    EXPECT_THAT(config.status().message(), HasSubstr("--public_base_url")) << bad;
  }
  flags["public_base_url"] = "";
  flags["avatar_cache_ttl"] = "0s";
  EXPECT_THAT(Build(flags).status().message(), HasSubstr("--avatar_cache_ttl"));
}

TEST(GatewayConfigTest, ZeroTurnsThePerAddressConnectionCapOff) {
  config::Texts flags = ValidFlags();
  flags["max_connections_per_address"] = "0";
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_connections_per_address, 0u);
}

TEST(GatewayConfigTest, LocalhostMeansTheIpv4Loopback) {
  config::Texts flags = ValidFlags();
  flags["http_listen"] = "localhost:8080";
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http_listen.ToString(), "127.0.0.1:8080");
}

TEST(GatewayConfigTest, AcceptsPortZeroAndGrpcTargets) {
  config::Texts flags = ValidFlags();
  flags["http_listen"] = "127.0.0.1:0";
  flags["admin_listen"] = "[::1]:0";
  flags["verifier"] = "dns:///verifier-service-headless:50051";
  flags["shutdown_delay"] = "5s";
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->admin_listen.ToString(), "[::1]:0");
  EXPECT_EQ(config->http_listen.port, 0);
  EXPECT_EQ(config->verifier_target, "dns:///verifier-service-headless:50051");
  EXPECT_EQ(config->shutdown_delay, absl::Seconds(5));
}

struct BadFlag {
  std::string name;
  std::function<void(config::Texts&)> set;
};

// Names the case after its flag in test output (and ctest names).
void PrintTo(const BadFlag& flag, std::ostream* os) { *os << flag.name; }

class GatewayConfigRejectsTest : public ::testing::TestWithParam<BadFlag> {};

TEST_P(GatewayConfigRejectsTest, NamesTheFlag) {
  config::Texts flags = ValidFlags();
  GetParam().set(flags);
  absl::StatusOr<GatewayConfig> config = Build(flags);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--" + GetParam().name));
  EXPECT_EQ(std::string(config.status().message()).find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Gateway, GatewayConfigRejectsTest,
    ::testing::Values(
        BadFlag{"http_listen", [](config::Texts& f) { f["http_listen"] = "8080"; }},
        BadFlag{"http_listen", [](config::Texts& f) { f["http_listen"] = "host:99999"; }},
        BadFlag{"admin_listen", [](config::Texts& f) { f["admin_listen"] = ":9090"; }},
        BadFlag{"http_listen", [](config::Texts& f) { f["http_listen"] = "example.com:8080"; }},
        BadFlag{"verifier", [](config::Texts& f) { f["verifier"] = ""; }},
        BadFlag{"verifier", [](config::Texts& f) { f["verifier"] = "a b"; }},
        BadFlag{"verifier_timeout", [](config::Texts& f) { f["verifier_timeout"] = "0s"; }},
        BadFlag{"verifier_timeout", [](config::Texts& f) { f["verifier_timeout"] = "2"; }},
        BadFlag{"retry_after_seconds", [](config::Texts& f) { f["retry_after_seconds"] = "0"; }},
        BadFlag{"retry_after_seconds", [](config::Texts& f) { f["retry_after_seconds"] = "-1"; }},
        BadFlag{"io_threads", [](config::Texts& f) { f["io_threads"] = "0"; }},
        BadFlag{"io_threads", [](config::Texts& f) { f["io_threads"] = "two"; }},
        BadFlag{"max_connections", [](config::Texts& f) { f["max_connections"] = "0"; }},
        BadFlag{"max_connections_per_address",
                [](config::Texts& f) { f["max_connections_per_address"] = "-1"; }},
        BadFlag{"max_body_bytes", [](config::Texts& f) { f["max_body_bytes"] = "1e6"; }},
        BadFlag{"max_body_bytes", [](config::Texts& f) { f["max_body_bytes"] = ""; }},
        BadFlag{"max_header_bytes", [](config::Texts& f) { f["max_header_bytes"] = "10"; }},
        BadFlag{"read_timeout", [](config::Texts& f) { f["read_timeout"] = "-1s"; }},
        BadFlag{"idle_timeout", [](config::Texts& f) { f["idle_timeout"] = "inf"; }},
        BadFlag{"readiness_interval", [](config::Texts& f) { f["readiness_interval"] = "0"; }},
        BadFlag{"shutdown_delay", [](config::Texts& f) { f["shutdown_delay"] = "-5s"; }},
        BadFlag{"drain_timeout", [](config::Texts& f) { f["drain_timeout"] = "soon"; }},
        BadFlag{"log_level", [](config::Texts& f) { f["log_level"] = "loud"; }},
        BadFlag{"client_rate_limit", [](config::Texts& f) { f["client_rate_limit"] = "fast"; }},
        BadFlag{"client_rate_limit", [](config::Texts& f) { f["client_rate_limit"] = "10/d"; }},
        BadFlag{"client_burst", [](config::Texts& f) { f["client_burst"] = "0"; }},
        BadFlag{"source_host_rate_limit",
                [](config::Texts& f) { f["source_host_rate_limit"] = "-5/m"; }},
        BadFlag{"source_host_burst", [](config::Texts& f) { f["source_host_burst"] = "x"; }},
        BadFlag{"rate_limit_max_keys", [](config::Texts& f) { f["rate_limit_max_keys"] = "0"; }},
        BadFlag{"trusted_proxies", [](config::Texts& f) { f["trusted_proxies"] = "10.0.0.1/8"; }}));

TEST(GatewayConfigTest, EveryDeclaredSettingParsesItsDefault) {
  config::test_support::ExpectEveryDeclaredSettingParsesItsDefault(34);
}

// A bad value of each type, given as a flag or in the environment: the same one line, naming the
// flag and the variable.
TEST(GatewayConfigTest, ABadValueOfEachTypeIsOneLineNamingFlagAndVariable) {
  const config::test_support::BadValue cases[] = {
      {"io_threads", "IO_THREADS", "two",
       "--io_threads (IO_THREADS): 'two' is not an integer from 1 to 256"},
      {"max_connections", "MAX_CONNECTIONS", "+5",
       "--max_connections (MAX_CONNECTIONS): '+5' is not an integer from 1 to 1000000"},
      {"max_header_bytes", "MAX_HEADER_BYTES", "10",
       "--max_header_bytes (MAX_HEADER_BYTES): '10' is not an integer from 1024 to 1048576"},
      {"read_timeout", "READ_TIMEOUT", "25h",
       "--read_timeout (READ_TIMEOUT): '25h' is not a positive duration of at most 24h such as 5s "
       "or 250ms"},
      {"shutdown_delay", "SHUTDOWN_DELAY", "-5s",
       "--shutdown_delay (SHUTDOWN_DELAY): '-5s' is not a non-negative duration of at most 24h "
       "such as 5s or 250ms"},
      {"http_listen", "HTTP_LISTEN", "example.com:8080",
       "--http_listen (HTTP_LISTEN): 'example.com' is not an IP address (listen on 0.0.0.0, [::] "
       "or one interface's address)"},
      {"admin_listen", "ADMIN_LISTEN", ":9090",
       "--admin_listen (ADMIN_LISTEN): ':9090' is not host:port (empty host)"},
      {"verifier", "VERIFIER_ADDRESS", "a b",
       "--verifier (VERIFIER_ADDRESS): 'a b' is not a gRPC target such as 127.0.0.1:50051 or "
       "dns:///verifier:50051"},
      {"log_level", "LOG_LEVEL", "loud",
       "--log_level (LOG_LEVEL): 'loud' is not one of trace, debug, info, warn, error, off"},
  };
  config::test_support::ExpectBadValuesRefusedInOneLine(
      ValidFlags(), cases, [](const config::Texts& flags, const config::EnvLookup& env) {
        return GatewayConfig::FromFlags(flags, env).status();
      });
  // A rate and a CIDR list say what is wrong with them, after the names.
  for (const auto& [env_name, value, prefix] :
       {std::tuple<const char*, const char*, const char*>{
            "CLIENT_RATE_LIMIT", "10/d", "--client_rate_limit (CLIENT_RATE_LIMIT): '10/d' is "},
        {"TRUSTED_PROXIES", "10.0.0.1/8", "--trusted_proxies (TRUSTED_PROXIES): "}}) {
    const auto env = [&](const char* name) -> const char* {
      return absl::string_view(name) == env_name ? value : nullptr;
    };
    const absl::Status status = GatewayConfig::FromFlags(ValidFlags(), env).status();
    EXPECT_THAT(std::string(status.message()), ::testing::StartsWith(prefix));
    EXPECT_EQ(std::string(status.message()).find('\n'), std::string::npos);
  }
}

TEST(GatewayConfigTest, TheEnvironmentIsReadWhenTheFlagIsNotGiven) {
  const auto env = [](const char* name) -> const char* {
    const absl::string_view n(name);
    return n == "IO_THREADS" ? "7" : n == "CLIENT_RATE_LIMIT" ? "30/s" : nullptr;
  };
  absl::StatusOr<GatewayConfig> config = GatewayConfig::FromFlags(ValidFlags(), env);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->io_threads, 7);
  EXPECT_DOUBLE_EQ(config->client_rate_per_second, 30);
  config::Texts flags = ValidFlags();
  flags["io_threads"] = "3";
  config = GatewayConfig::FromFlags(flags, env);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->io_threads, 3);
  EXPECT_EQ(config->max_connections, 1024u);
}

}  // namespace
}  // namespace portcullis::gateway
