#include "ingest-gateway/src/gateway_config.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "boost/asio/ip/address.hpp"
#include "common/grpc/authorized_channel.h"
#include "common/status/status_macros.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway {
namespace {

absl::StatusOr<uint64_t> ParseInteger(absl::string_view name, absl::string_view text,
                                      uint64_t minimum, uint64_t maximum) {
  uint64_t value = 0;
  if (text.empty() || text.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(text, &value) || value < minimum || value > maximum) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, ": '", text, "' is not an integer from ", minimum, " to ", maximum));
  }
  return value;
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view name, absl::string_view text,
                                             bool allow_zero) {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration) || duration < absl::ZeroDuration() ||
      (!allow_zero && duration == absl::ZeroDuration()) || duration == absl::InfiniteDuration() ||
      duration > absl::Hours(24)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", text, "' is not a ",
                                                   allow_zero ? "non-negative" : "positive",
                                                   " duration of at most 24h such as 5s or 250ms"));
  }
  return duration;
}

absl::StatusOr<config::HostPort> ParseListen(absl::string_view name, absl::string_view text) {
  absl::StatusOr<config::HostPort> parsed = config::ParseHostPort(text, /*allow_port_zero=*/true);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", parsed.status().message()));
  }
  if (parsed->host == "localhost") {
    parsed->host = "127.0.0.1";
  }
  boost::system::error_code ec;
  boost::asio::ip::make_address(parsed->host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", parsed->host,
                     "' is not an IP address (listen on 0.0.0.0, [::] or one "
                     "interface's address)"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<GatewayConfig> GatewayConfig::FromFlags(const GatewayFlags& flags) {
  GatewayConfig config;
  ASSIGN_OR_RETURN(config.http_listen, ParseListen("http_listen", flags.http_listen));
  ASSIGN_OR_RETURN(config.admin_listen, ParseListen("admin_listen", flags.admin_listen));
  if (flags.verifier.empty() || std::any_of(flags.verifier.begin(), flags.verifier.end(),
                                            [](char c) { return absl::ascii_isspace(c); })) {
    return absl::InvalidArgumentError(absl::StrCat("--verifier: '", flags.verifier,
                                                   "' is not a gRPC target such as "
                                                   "127.0.0.1:50051 or dns:///verifier:50051"));
  }
  config.verifier_target = flags.verifier;
  ASSIGN_OR_RETURN(config.verifier_timeout,
                   ParseDuration("verifier_timeout", flags.verifier_timeout, false));
  ASSIGN_OR_RETURN(const uint64_t retry_after,
                   ParseInteger("retry_after_seconds", flags.retry_after_seconds, 1, 3600));
  config.retry_after_seconds = static_cast<int>(retry_after);
  ASSIGN_OR_RETURN(const uint64_t io_threads, ParseInteger("io_threads", flags.io_threads, 1, 256));
  config.io_threads = static_cast<int>(io_threads);
  ASSIGN_OR_RETURN(config.max_connections,
                   ParseInteger("max_connections", flags.max_connections, 1, 1000000));
  ASSIGN_OR_RETURN(config.max_connections_per_address,
                   ParseInteger("max_connections_per_address", flags.max_connections_per_address,
                                0, 1000000));
  ASSIGN_OR_RETURN(config.max_body_bytes,
                   ParseInteger("max_body_bytes", flags.max_body_bytes, 1, 64 * 1024 * 1024));
  ASSIGN_OR_RETURN(const uint64_t max_header,
                   ParseInteger("max_header_bytes", flags.max_header_bytes, 1024, 1024 * 1024));
  config.max_header_bytes = static_cast<uint32_t>(max_header);
  ASSIGN_OR_RETURN(config.read_timeout, ParseDuration("read_timeout", flags.read_timeout, false));
  ASSIGN_OR_RETURN(config.idle_timeout, ParseDuration("idle_timeout", flags.idle_timeout, false));
  config.write_timeout = config.read_timeout;
  ASSIGN_OR_RETURN(config.readiness_interval,
                   ParseDuration("readiness_interval", flags.readiness_interval, false));
  ASSIGN_OR_RETURN(config.shutdown_delay,
                   ParseDuration("shutdown_delay", flags.shutdown_delay, true));
  ASSIGN_OR_RETURN(config.drain_timeout,
                   ParseDuration("drain_timeout", flags.drain_timeout, false));
  const std::string level = absl::AsciiStrToLower(flags.log_level);
  if (level != "trace" && level != "debug" && level != "info" && level != "warn" &&
      level != "error" && level != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_level: '", flags.log_level, "' is not one of trace, debug, info, warn, error, off"));
  }
  config.log_level = level;

  const auto rate = [](absl::string_view name, const std::string& text) -> absl::StatusOr<double> {
    absl::StatusOr<double> parsed = ParseRate(text);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": '", text, "' is ", parsed.status().message()));
    }
    return parsed;
  };
  ASSIGN_OR_RETURN(config.client_rate_per_second,
                   rate("client_rate_limit", flags.client_rate_limit));
  ASSIGN_OR_RETURN(const uint64_t client_burst,
                   ParseInteger("client_burst", flags.client_burst, 1, 1000000));
  config.client_burst = static_cast<double>(client_burst);
  ASSIGN_OR_RETURN(config.source_host_rate_per_second,
                   rate("source_host_rate_limit", flags.source_host_rate_limit));
  ASSIGN_OR_RETURN(const uint64_t source_host_burst,
                   ParseInteger("source_host_burst", flags.source_host_burst, 1, 1000000));
  config.source_host_burst = static_cast<double>(source_host_burst);
  ASSIGN_OR_RETURN(config.rate_limit_max_keys,
                   ParseInteger("rate_limit_max_keys", flags.rate_limit_max_keys, 1, 10000000));
  absl::StatusOr<std::vector<net::Cidr>> proxies = net::Cidr::ParseList(flags.trusted_proxies);
  if (!proxies.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--trusted_proxies: ", proxies.status().message()));
  }
  config.trusted_proxies = *std::move(proxies);
  ASSIGN_OR_RETURN(config.ingest_max_body_bytes,
                   ParseInteger("ingest_max_body_bytes", flags.ingest_max_body_bytes, 1,
                                1024 * 1024));
  if (flags.verifier_token_file.empty()) {
    return absl::InvalidArgumentError(
        "--verifier_token_file is required: a file holding the gateway's API token for the "
        "verifier (scopes submit,read), e.g. made with `portcullis token create --scopes "
        "submit,read`");
  }
  absl::StatusOr<std::string> token = grpc_client::ReadTokenFile(flags.verifier_token_file);
  if (!token.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--verifier_token_file: ", token.status().message()));
  }
  config.verifier_token = *std::move(token);
  config.verifier_tls.ca_file = flags.verifier_tls_ca_file;
  config.verifier_tls.cert_file = flags.verifier_tls_cert_file;
  config.verifier_tls.key_file = flags.verifier_tls_key_file;
  config.verifier_tls.server_name = flags.verifier_tls_server_name;
  ASSIGN_OR_RETURN(config.verifier_tls.reload_interval,
                   ParseDuration("verifier_tls_reload_interval",
                                 flags.verifier_tls_reload_interval, false));
  RETURN_IF_ERROR(grpc_tls::CheckClientTlsOptions(config.verifier_tls));
  return config;
}

}  // namespace portcullis::gateway
