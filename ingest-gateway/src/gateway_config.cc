// The gateway's settings, each declared once: flag, type, environment variable, default and
// validation (common/config/setting.h); and GatewayConfig::FromFlags, which builds the config
// from them. STYLE.md has flags defined only in main.cc; these 33 live here instead so that
// main.cc stays a short read (parse, build, run, drain), and only main and its tests link them.
#include "ingest-gateway/src/gateway_config.h"

#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "boost/asio/ip/address.hpp"
#include "common/config/setting.h"
#include "common/grpc/authorized_channel.h"
#include "common/status/status_macros.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway {

// A token bucket's rate as written ("120/m", "0": off) and in requests per second: the type of
// the rate flags (named, not in an unnamed namespace, as the flags it types are global).
struct RateFlag {
  std::string text;
  double per_second = 0;
};

bool AbslParseFlag(absl::string_view text, RateFlag* rate, std::string* error) {
  absl::StatusOr<double> per_second = ParseRate(text);
  if (!per_second.ok()) {
    *error = std::string(per_second.status().message());
    return false;
  }
  *rate = RateFlag{std::string(text), *per_second};
  return true;
}

std::string AbslUnparseFlag(const RateFlag& rate) { return rate.text; }

}  // namespace portcullis::gateway

namespace {

namespace config = portcullis::config;
using portcullis::gateway::RateFlag;

config::Parser<RateFlag> Rates() {
  return config::Parser<RateFlag>([](absl::string_view text) -> absl::StatusOr<RateFlag> {
    absl::StatusOr<double> per_second = portcullis::gateway::ParseRate(text);
    if (!per_second.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is ", per_second.status().message()));
    }
    return RateFlag{std::string(text), *per_second};
  });
}

// An integer from `min` to `max`, digits only.
template <typename T>
config::Parser<T> Integer(int64_t min, int64_t max) {
  return config::WholeNumber<T>(min, max, absl::StrCat("an integer from ", min, " to ", max),
                                /*digits_only=*/true);
}

// A duration of at most `max`, zero only when `allow_zero`, described as `expected`.
config::Parser<absl::Duration> DurationAtMost(absl::Duration max, bool allow_zero,
                                              const std::string& expected) {
  return config::DurationParser(allow_zero, expected)
      .Check([max](absl::Duration d) { return d <= max; }, expected);
}

// A duration of at most 24h; zero only when `allow_zero`.
config::Parser<absl::Duration> Duration(bool allow_zero) {
  return DurationAtMost(absl::Hours(24), allow_zero,
                        absl::StrCat("a ", allow_zero ? "non-negative" : "positive",
                                     " duration of at most 24h such as 5s or 250ms"));
}

// A host:port to listen on whose host is an IP address; "localhost" is 127.0.0.1.
config::Parser<config::HostPort> Listen() {
  return config::Parser<config::HostPort>(
      [](absl::string_view text) -> absl::StatusOr<config::HostPort> {
        absl::StatusOr<config::HostPort> parsed =
            config::ParseHostPort(text, /*allow_port_zero=*/true);
        if (!parsed.ok()) {
          return parsed.status();
        }
        if (parsed->host == "localhost") {
          parsed->host = "127.0.0.1";
        }
        boost::system::error_code ec;
        boost::asio::ip::make_address(parsed->host, ec);
        if (ec) {
          return absl::InvalidArgumentError(absl::StrCat(
              "'", parsed->host,
              "' is not an IP address (listen on 0.0.0.0, [::] or one interface's address)"));
        }
        return parsed;
      });
}

// An absolute http(s) URL without query, fragment, spaces or a trailing '/', or empty.
bool IsPublicBaseUrl(const std::string& url) {
  if (url.empty()) {
    return true;
  }
  const bool web = absl::StartsWith(url, "https://") || absl::StartsWith(url, "http://");
  const size_t scheme_end = url.find("://") + 3;
  return web && url.size() > scheme_end && url.size() <= 512 && url.back() != '/' &&
         std::none_of(url.begin(), url.end(), [](char c) {
           const auto byte = static_cast<unsigned char>(c);
           return byte <= 0x20 || byte >= 0x7f || c == '?' || c == '#' || c == '"' || c == '\\';
         });
}

bool IsGrpcTarget(const std::string& target) {
  return !target.empty() &&
         std::none_of(target.begin(), target.end(), [](char c) { return absl::ascii_isspace(c); });
}

}  // namespace

PORTCULLIS_SETTING(config::HostPort, http_listen, "HTTP_LISTEN", "127.0.0.1:8080", Listen(),
                   "host:port of the public HTTP listener (port 0: any free port) [HTTP_LISTEN]");
PORTCULLIS_SETTING(config::HostPort, admin_listen, "ADMIN_LISTEN", "127.0.0.1:9090", Listen(),
                   "host:port of the admin listener: /healthz, /readyz, /metrics [ADMIN_LISTEN]");
PORTCULLIS_SETTING(
    std::string, verifier, "VERIFIER_ADDRESS", "127.0.0.1:50051",
    config::AnyText().Check(IsGrpcTarget,
                            "a gRPC target such as 127.0.0.1:50051 or dns:///verifier:50051"),
    "gRPC target of the verifier, e.g. dns:///verifier-service-headless:50051 "
    "[VERIFIER_ADDRESS]");
PORTCULLIS_SETTING(absl::Duration, verifier_timeout, "VERIFIER_TIMEOUT", "2s", Duration(false),
                   "deadline of every call to the verifier [VERIFIER_TIMEOUT]");
PORTCULLIS_SETTING(int, retry_after_seconds, "RETRY_AFTER_SECONDS", "5", Integer<int>(1, 3600),
                   "Retry-After of 503 and 429 answers, in seconds [RETRY_AFTER_SECONDS]");
PORTCULLIS_SETTING(int, io_threads, "IO_THREADS", "2", Integer<int>(1, 256),
                   "threads serving HTTP connections [IO_THREADS]");
PORTCULLIS_SETTING(size_t, max_connections, "MAX_CONNECTIONS", "1024", Integer<size_t>(1, 1000000),
                   "open connections beyond this are answered 503 and closed [MAX_CONNECTIONS]");
PORTCULLIS_SETTING(
    size_t, max_connections_per_address, "MAX_CONNECTIONS_PER_ADDRESS", "64",
    Integer<size_t>(0, 1000000),
    "open connections of one client address (IPv6: per /64) beyond this are answered 429 "
    "and closed; 0 turns it off; --trusted_proxies are exempt "
    "[MAX_CONNECTIONS_PER_ADDRESS]");
PORTCULLIS_SETTING(uint64_t, max_body_bytes, "MAX_BODY_BYTES", "1048576",
                   Integer<uint64_t>(1, 64 * 1024 * 1024),
                   "largest request body (POST /webmention is capped at 64 KiB) [MAX_BODY_BYTES]");
PORTCULLIS_SETTING(uint32_t, max_header_bytes, "MAX_HEADER_BYTES", "16384",
                   Integer<uint32_t>(1024, 1024 * 1024),
                   "largest request header [MAX_HEADER_BYTES]");
PORTCULLIS_SETTING(absl::Duration, read_timeout, "READ_TIMEOUT", "10s", Duration(false),
                   "time to send one request, header and body [READ_TIMEOUT]");
PORTCULLIS_SETTING(absl::Duration, idle_timeout, "IDLE_TIMEOUT", "30s", Duration(false),
                   "time a keep-alive connection may wait for its next request [IDLE_TIMEOUT]");
PORTCULLIS_SETTING(absl::Duration, readiness_interval, "READINESS_INTERVAL", "1s", Duration(false),
                   "how often the verifier's health is checked [READINESS_INTERVAL]");
PORTCULLIS_SETTING(absl::Duration, shutdown_delay, "SHUTDOWN_DELAY", "0s", Duration(true),
                   "after SIGTERM, time to keep serving while /readyz says 503 [SHUTDOWN_DELAY]");
PORTCULLIS_SETTING(absl::Duration, drain_timeout, "DRAIN_TIMEOUT", "10s", Duration(false),
                   "time for requests in progress to finish at shutdown [DRAIN_TIMEOUT]");
PORTCULLIS_SETTING(std::string, log_level, "LOG_LEVEL", "info",
                   config::OneOf({"trace", "debug", "info", "warn", "error", "off"},
                                 "one of trace, debug, info, warn, error, off", /*lowercase=*/true),
                   "trace, debug, info, warn, error or off [LOG_LEVEL]");
PORTCULLIS_SETTING(
    RateFlag, client_rate_limit, "CLIENT_RATE_LIMIT", "120/m", Rates(),
    "webmention requests per client address (IPv6: per /64), as N/s, N/m or N/h; 0 turns "
    "it off; over it: 429 + Retry-After. Counted per gateway pod [CLIENT_RATE_LIMIT]");
PORTCULLIS_SETTING(
    int64_t, client_burst, "CLIENT_BURST", "60", Integer<int64_t>(1, 1000000),
    "requests a client address may send at once after a quiet period [CLIENT_BURST]");
PORTCULLIS_SETTING(
    RateFlag, source_host_rate_limit, "SOURCE_HOST_RATE_LIMIT", "60/m", Rates(),
    "webmentions per source host, as N/s, N/m or N/h; 0 turns it off; counted per gateway "
    "pod [SOURCE_HOST_RATE_LIMIT]");
PORTCULLIS_SETTING(
    int64_t, source_host_burst, "SOURCE_HOST_BURST", "30", Integer<int64_t>(1, 1000000),
    "webmentions one source host may send at once after a quiet period [SOURCE_HOST_BURST]");
PORTCULLIS_SETTING(
    size_t, rate_limit_max_keys, "RATE_LIMIT_MAX_KEYS", "100000", Integer<size_t>(1, 10000000),
    "addresses (and, separately, source hosts) tracked at most; idle ones are forgotten "
    "first [RATE_LIMIT_MAX_KEYS]");
PORTCULLIS_SETTING(
    config::CidrList, trusted_proxies, "TRUSTED_PROXIES", "", config::Cidrs(),
    "reverse proxies (CIDRs, comma separated) whose X-Forwarded-For names the client for "
    "the per-client rate limit; empty: the peer address is the client [TRUSTED_PROXIES]");
PORTCULLIS_SETTING(uint64_t, ingest_max_body_bytes, "INGEST_MAX_BODY_BYTES", "1048576",
                   Integer<uint64_t>(1, 1024 * 1024),
                   "largest POST /ingest body, at most 1 MiB; larger ones are answered 413 "
                   "[INGEST_MAX_BODY_BYTES]");
PORTCULLIS_SETTING(
    absl::Duration, ingest_duplicate_cache_ttl, "INGEST_DUPLICATE_CACHE_TTL", "2s",
    DurationAtMost(absl::Seconds(5), /*allow_zero=*/true, "a duration from 0s to 5s such as 2s"),
    "how long a repeat of an accepted POST /ingest item is answered duplicate by the gateway "
    "without asking the verifier; 0s turns it off [INGEST_DUPLICATE_CACHE_TTL]");
PORTCULLIS_SETTING(
    std::string, verifier_token_file, "VERIFIER_TOKEN_FILE", "", config::AnyText(),
    "required: a file holding the API token (scopes submit,read) sent to the verifier on "
    "every call; surrounding whitespace is ignored [VERIFIER_TOKEN_FILE]");
PORTCULLIS_SETTING(std::string, verifier_tls_ca_file, "VERIFIER_TLS_CA_FILE", "", config::AnyText(),
                   "PEM CA certificates the verifier's certificate must chain to; turns TLS to the "
                   "verifier on; empty: plaintext [VERIFIER_TLS_CA_FILE]");
PORTCULLIS_SETTING(std::string, verifier_tls_cert_file, "VERIFIER_TLS_CERT_FILE", "",
                   config::AnyText(),
                   "PEM client certificate presented to the verifier (mutual TLS), with "
                   "--verifier_tls_key_file [VERIFIER_TLS_CERT_FILE]");
PORTCULLIS_SETTING(std::string, verifier_tls_key_file, "VERIFIER_TLS_KEY_FILE", "",
                   config::AnyText(),
                   "PEM private key of --verifier_tls_cert_file [VERIFIER_TLS_KEY_FILE]");
PORTCULLIS_SETTING(
    std::string, verifier_tls_server_name, "VERIFIER_TLS_SERVER_NAME", "", config::AnyText(),
    "name the verifier's certificate must carry (SAN); empty: the host of --verifier "
    "[VERIFIER_TLS_SERVER_NAME]");
PORTCULLIS_SETTING(
    absl::Duration, verifier_tls_reload_interval, "VERIFIER_TLS_RELOAD_INTERVAL", "60s",
    Duration(false),
    "how often the TLS files are read again, so renewed certificates are used without a "
    "restart; at least 1s [VERIFIER_TLS_RELOAD_INTERVAL]");

PORTCULLIS_SETTING(
    std::string, public_base_url, "PUBLIC_BASE_URL", "",
    config::AnyText().Check(IsPublicBaseUrl,
                            "an absolute http(s) URL without a trailing '/', query or fragment, "
                            "such as https://mentions.example, or empty"),
    "the gateway's public URL as readers reach it (e.g. https://mentions.example); the jf2 "
    "feeds point proxied author photos at <it>/avatar/<hash>; empty: a relative /avatar/<hash> "
    "[PUBLIC_BASE_URL]");
PORTCULLIS_SETTING(size_t, avatar_cache_entries, "AVATAR_CACHE_ENTRIES", "256",
                   Integer<size_t>(0, 100000),
                   "avatar proxy: images kept in memory at most (least recently used go "
                   "first); 0 keeps none [AVATAR_CACHE_ENTRIES]");
PORTCULLIS_SETTING(uint64_t, avatar_cache_bytes, "AVATAR_CACHE_BYTES", "16777216",
                   Integer<uint64_t>(0, uint64_t{4} * 1024 * 1024 * 1024),
                   "avatar proxy: image bytes kept in memory at most [AVATAR_CACHE_BYTES]");
PORTCULLIS_SETTING(absl::Duration, avatar_cache_ttl, "AVATAR_CACHE_TTL", "1h", Duration(false),
                   "avatar proxy: how long a fetched image is served from memory before it is "
                   "fetched again [AVATAR_CACHE_TTL]");

namespace portcullis::gateway {

absl::StatusOr<GatewayConfig> GatewayConfig::FromFlags(const config::Texts& command_line,
                                                       const config::EnvLookup& env) {
  RETURN_IF_ERROR(config::SetAll(command_line, env));
  GatewayConfig config;
  config.http_listen = absl::GetFlag(FLAGS_http_listen);
  config.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  config.verifier_target = absl::GetFlag(FLAGS_verifier);
  config.verifier_timeout = absl::GetFlag(FLAGS_verifier_timeout);
  config.retry_after_seconds = absl::GetFlag(FLAGS_retry_after_seconds);
  config.io_threads = absl::GetFlag(FLAGS_io_threads);
  config.max_connections = absl::GetFlag(FLAGS_max_connections);
  config.max_connections_per_address = absl::GetFlag(FLAGS_max_connections_per_address);
  config.max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes);
  config.max_header_bytes = absl::GetFlag(FLAGS_max_header_bytes);
  config.read_timeout = absl::GetFlag(FLAGS_read_timeout);
  config.idle_timeout = absl::GetFlag(FLAGS_idle_timeout);
  config.write_timeout = config.read_timeout;
  config.readiness_interval = absl::GetFlag(FLAGS_readiness_interval);
  config.shutdown_delay = absl::GetFlag(FLAGS_shutdown_delay);
  config.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  config.log_level = absl::GetFlag(FLAGS_log_level);
  config.client_rate_per_second = absl::GetFlag(FLAGS_client_rate_limit).per_second;
  config.client_burst = static_cast<double>(absl::GetFlag(FLAGS_client_burst));
  config.source_host_rate_per_second = absl::GetFlag(FLAGS_source_host_rate_limit).per_second;
  config.source_host_burst = static_cast<double>(absl::GetFlag(FLAGS_source_host_burst));
  config.rate_limit_max_keys = absl::GetFlag(FLAGS_rate_limit_max_keys);
  config.trusted_proxies = absl::GetFlag(FLAGS_trusted_proxies).cidrs;
  config.ingest_max_body_bytes = absl::GetFlag(FLAGS_ingest_max_body_bytes);
  config.ingest_duplicate_cache_ttl = absl::GetFlag(FLAGS_ingest_duplicate_cache_ttl);
  config.public_base_url = absl::GetFlag(FLAGS_public_base_url);
  config.avatar_cache = {.max_entries = absl::GetFlag(FLAGS_avatar_cache_entries),
                         .max_bytes = absl::GetFlag(FLAGS_avatar_cache_bytes),
                         .ttl = absl::GetFlag(FLAGS_avatar_cache_ttl)};
  const std::string token_file = absl::GetFlag(FLAGS_verifier_token_file);
  if (token_file.empty()) {
    return absl::InvalidArgumentError(
        "--verifier_token_file is required: a file holding the gateway's API token for the "
        "verifier (scopes submit,read), e.g. made with `portcullis token create --scopes "
        "submit,read`");
  }
  absl::StatusOr<std::string> token = grpc_client::ReadTokenFile(token_file);
  if (!token.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--verifier_token_file: ", token.status().message()));
  }
  config.verifier_token = *std::move(token);
  config.verifier_tls.ca_file = absl::GetFlag(FLAGS_verifier_tls_ca_file);
  config.verifier_tls.cert_file = absl::GetFlag(FLAGS_verifier_tls_cert_file);
  config.verifier_tls.key_file = absl::GetFlag(FLAGS_verifier_tls_key_file);
  config.verifier_tls.server_name = absl::GetFlag(FLAGS_verifier_tls_server_name);
  config.verifier_tls.reload_interval = absl::GetFlag(FLAGS_verifier_tls_reload_interval);
  RETURN_IF_ERROR(grpc_tls::CheckClientTlsOptions(config.verifier_tls));
  return config;
}

}  // namespace portcullis::gateway
