// The portcullis CLI: client calls to the verifier over gRPC.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "common/config/env.h"
#include "common/config/flag_spelling.h"
#include "common/grpc/channel_credentials.h"
#include "tools/portcullis/src/cli.h"

ABSL_FLAG(std::string, verifier,
          portcullis::config::EnvOr("PORTCULLIS_VERIFIER", "127.0.0.1:50051"),
          "gRPC target of the verifier (env PORTCULLIS_VERIFIER)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(5), "deadline of each call");
ABSL_FLAG(int64_t, max_body_bytes, 0,
          "`url fetch`: largest body to fetch (clamped by the verifier); 0 for its maximum");
ABSL_FLAG(std::string, base_url, "",
          "base URL for `mf2` and `conformance mf2` (default http://example.com/)");
ABSL_FLAG(bool, verified, false,
          "`publisher add`: a verified publisher's malformed provenance is quarantined");
ABSL_FLAG(bool, require_signature, false,
          "`publisher add`: items without a valid signature are dropped");
ABSL_FLAG(absl::Duration, retention, absl::ZeroDuration(),
          "`publisher add`: how long decisions are kept for de-duplication (0: server default)");
ABSL_FLAG(int64_t, after, 0, "`items list`: the cursor to list after (0: the beginning)");
ABSL_FLAG(int32_t, limit, 0, "`items list`: items per call, 1 to 1000 (0: the server default)");
ABSL_FLAG(std::string, key, "",
          "`sign`: a whsk_ signing key or whsec_ secret, or @PATH of a file holding one");
ABSL_FLAG(std::string, id, "", "`sign`: the webhook-id (default: a random msg_ id)");
ABSL_FLAG(std::string, timestamp, "", "`sign`: the webhook-timestamp (default: now)");
ABSL_FLAG(std::string, target, "", "`mention list`: the mentions of this target URL");
ABSL_FLAG(std::string, site, "",
          "`mention list`: the mentions of this site (domain); `token create|new`: a site the "
          "token is bound to (repeat, or separate with commas)");
ABSL_FLAG(std::string, state, "", "`mention list`: only pending, verified or failed mentions");
ABSL_FLAG(std::string, type, "",
          "`mention list`: only mentions of this type (mention, reply, like, repost, bookmark, "
          "rsvp)");
ABSL_FLAG(int32_t, page_size, 0, "`mention list`: mentions per page, 1 to 1000 (0: 100)");
ABSL_FLAG(std::string, page_token, "", "`mention list`: next_page_token of the previous page");
ABSL_FLAG(std::string, format, "portcullis",
          "`import`: the file's format, portcullis (an export) or webmention-io (its "
          "/api/mentions.jf2 pages)");
ABSL_FLAG(bool, reverify, false,
          "`import`: queue a verification of each new pair instead of trusting its state");
ABSL_FLAG(std::string, source_host, "", "`erase`: erase the mentions whose source has this host");
ABSL_FLAG(std::string, mention, "", "`erase`: erase this mention (its id)");
ABSL_FLAG(bool, undo, false, "`erase`: remove that erasure's tombstones");
ABSL_FLAG(std::string, keep_drops, "",
          "`publisher add|set`: keep dropped deliveries for re-evaluation this long (e.g. 7d, "
          "36h), or off");
ABSL_FLAG(std::string, publisher, "",
          "`drops list|reevaluate`: the publisher whose drops; `subscription add`: deliver this "
          "publisher's ingest.* events");
ABSL_FLAG(std::string, reason, "", "`drops list|reevaluate`: only drops of this reason");
ABSL_FLAG(std::string, since, "",
          "`drops list|reevaluate`, `delivery replay`: only drops received (deliveries created) "
          "since this RFC 3339 time, or this long ago (e.g. 24h, 2d)");
ABSL_FLAG(bool, require_c2pa_for_media, false,
          "`publisher set`: a media element without a C2PA manifest drops its item "
          "(--require-c2pa-for-media=false turns it off)");
ABSL_FLAG(std::string, c2pa_trust, "",
          "`publisher set`: a PEM file of the publisher's own C2PA trust anchors, or off to "
          "remove them");
ABSL_FLAG(std::string, trust, "",
          "`c2pa verify`: a PEM file of the trust anchors a C2PA signer must chain to");

ABSL_FLAG(std::string, url, "", "`subscription add`: the destination URL");
ABSL_FLAG(std::string, events, "",
          "`subscription add`: the event types, separated by commas (mention.verified, "
          "mention.updated, mention.removed, mention.failed, ingest.accepted, ingest.quarantined)");
ABSL_FLAG(std::string, secret, "", "`subscription add`: a whsec_ secret (v1 HMAC signatures)");
ABSL_FLAG(std::string, signing_key, "",
          "`subscription add`: a whsk_ Ed25519 signing key (v1a signatures)");
ABSL_FLAG(std::string, subscription, "", "`delivery list|replay`: the subscription id");
ABSL_FLAG(bool, failed, false, "`delivery replay`: only deliveries that failed");

ABSL_FLAG(std::string, moderation, "",
          "`site set`: the site's moderation policy: off, first-time-authors or all");
ABSL_FLAG(std::string, avatar_proxy, "",
          "`site set`: on or off: the public feeds reference author photos through the "
          "gateway's /avatar/ proxy");
ABSL_FLAG(std::string, note, "", "`review approve|reject|hide|unhide`: a note kept with the review");
ABSL_FLAG(std::string, author_url, "",
          "`rule add`: approve every mention by this author URL; `erase`: erase the mentions by it");
ABSL_FLAG(std::string, source_prefix, "",
          "`rule add`: approve every mention whose source URL starts with this prefix");
ABSL_FLAG(bool, dry_run, false,
          "`rule add`: only print how many mentions the rule would approve; `erase`: print what "
          "would go, change nothing; `drops reevaluate`: count, change nothing");
ABSL_FLAG(std::string, token_file, "",
          "a file holding the API token sent to the verifier; default: $PORTCULLIS_TOKEN, else "
          "the file named by $PORTCULLIS_TOKEN_FILE");
ABSL_FLAG(std::string, scopes, "",
          "`token create|new`: comma separated scopes: submit, read, fetch, admin");
ABSL_FLAG(std::string, name, "", "`token create|new`: the token's name (who holds it)");
ABSL_FLAG(std::string, tls_ca_file, portcullis::config::EnvOr("PORTCULLIS_TLS_CA_FILE", ""),
          "PEM CA certificates the verifier's certificate must chain to; turns TLS on; empty: "
          "plaintext (env PORTCULLIS_TLS_CA_FILE)");
ABSL_FLAG(std::string, tls_cert_file, portcullis::config::EnvOr("PORTCULLIS_TLS_CERT_FILE", ""),
          "PEM client certificate for a verifier that requires one (mutual TLS), with "
          "--tls_key_file (env PORTCULLIS_TLS_CERT_FILE)");
ABSL_FLAG(std::string, tls_key_file, portcullis::config::EnvOr("PORTCULLIS_TLS_KEY_FILE", ""),
          "PEM private key of --tls_cert_file (env PORTCULLIS_TLS_KEY_FILE)");
ABSL_FLAG(std::string, tls_server_name,
          portcullis::config::EnvOr("PORTCULLIS_TLS_SERVER_NAME", ""),
          "name the verifier's certificate must carry; empty: the host of --verifier "
          "(env PORTCULLIS_TLS_SERVER_NAME)");

namespace {

// Every value given to --NAME (`--NAME=V` or `--NAME V`, one or two dashes), in order: absl keeps
// only the last of a repeated flag.
std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& name) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) == 0) {
      arg.erase(0, 2);
    } else if (arg.rfind("-", 0) == 0) {
      arg.erase(0, 1);
    } else {
      continue;
    }
    if (arg == name && i + 1 < argc) {
      values.emplace_back(argv[++i]);
    } else if (arg.rfind(name + "=", 0) == 0) {
      values.push_back(arg.substr(name.size() + 1));
    }
  }
  return values;
}

// Whether --NAME (or --noNAME) is on the command line, with or without a value: a bool flag's
// value alone cannot tell "false" from "not given".
bool FlagGiven(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    while (!arg.empty() && arg.front() == '-') {
      arg.erase(0, 1);
    }
    if (arg.rfind("no", 0) == 0 && arg.substr(2) == name) {
      return true;
    }
    if (arg == name || arg.rfind(name + "=", 0) == 0) {
      return true;
    }
  }
  return false;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

int main(int argc, char** argv) {
  portcullis::config::AcceptDashedFlagNames(argc, argv);
  absl::SetProgramUsageMessage(portcullis::cli::Usage());
  const std::vector<std::string> sites = RepeatedFlagValues(argc, argv, "site");
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::vector<std::string> args(positional.begin() + 1, positional.end());
  portcullis::cli::CliOptions options{
      .verifier_target = absl::GetFlag(FLAGS_verifier),
      .timeout = absl::GetFlag(FLAGS_timeout),
      .max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes),
      .base_url = absl::GetFlag(FLAGS_base_url),
      .verified = absl::GetFlag(FLAGS_verified),
      .require_signature = absl::GetFlag(FLAGS_require_signature),
      .retention = absl::GetFlag(FLAGS_retention),
      .after = absl::GetFlag(FLAGS_after),
      .limit = absl::GetFlag(FLAGS_limit),
      .key = absl::GetFlag(FLAGS_key),
      .message_id = absl::GetFlag(FLAGS_id),
      .timestamp = absl::GetFlag(FLAGS_timestamp),
      .list_target = absl::GetFlag(FLAGS_target),
      .list_site = absl::GetFlag(FLAGS_site),
      .list_state = absl::GetFlag(FLAGS_state),
      .list_type = absl::GetFlag(FLAGS_type),
      .page_size = absl::GetFlag(FLAGS_page_size),
      .page_token = absl::GetFlag(FLAGS_page_token),
      .token_name = absl::GetFlag(FLAGS_name),
      .token_scopes = absl::GetFlag(FLAGS_scopes),
      .token_sites = sites,
      .moderation = absl::GetFlag(FLAGS_moderation),
      .avatar_proxy = absl::GetFlag(FLAGS_avatar_proxy),
      .review_note = absl::GetFlag(FLAGS_note),
      .rule_author_url = absl::GetFlag(FLAGS_author_url),
      .rule_source_prefix = absl::GetFlag(FLAGS_source_prefix),
      .dry_run = absl::GetFlag(FLAGS_dry_run),
      .import_format = absl::GetFlag(FLAGS_format),
      .reverify = absl::GetFlag(FLAGS_reverify),
      .erase_author_url = absl::GetFlag(FLAGS_author_url),
      .erase_source_host = absl::GetFlag(FLAGS_source_host),
      .erase_mention = absl::GetFlag(FLAGS_mention),
      .undo = absl::GetFlag(FLAGS_undo),
      .keep_drops = absl::GetFlag(FLAGS_keep_drops),
      .drops_publisher = absl::GetFlag(FLAGS_publisher),
      .drops_reason = absl::GetFlag(FLAGS_reason),
      .drops_since = absl::GetFlag(FLAGS_since),
      .c2pa_trust = absl::GetFlag(FLAGS_trust),
      .subscription_publisher = absl::GetFlag(FLAGS_publisher),
      .subscription_url = absl::GetFlag(FLAGS_url),
      .subscription_events = absl::GetFlag(FLAGS_events),
      .subscription_secret = absl::GetFlag(FLAGS_secret),
      .subscription_signing_key = absl::GetFlag(FLAGS_signing_key),
      .delivery_subscription = absl::GetFlag(FLAGS_subscription),
      .delivery_failed = absl::GetFlag(FLAGS_failed),
      .delivery_since = absl::GetFlag(FLAGS_since),
      .require_c2pa_for_media =
          FlagGiven(argc, argv, "require_c2pa_for_media")
              ? std::optional<bool>(absl::GetFlag(FLAGS_require_c2pa_for_media))
              : std::nullopt,
      .publisher_c2pa_trust = absl::GetFlag(FLAGS_c2pa_trust),
  };
  const absl::StatusOr<std::string> token = portcullis::cli::ResolveToken(
      absl::GetFlag(FLAGS_token_file), Env("PORTCULLIS_TOKEN"), Env("PORTCULLIS_TOKEN_FILE"));
  if (token.ok()) {
    options.token = *token;
  } else {
    options.token_error = std::string(token.status().message());
  }
  portcullis::grpc_tls::ClientTlsOptions tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  tls.flag_names = {.ca_file = "--tls_ca_file (PORTCULLIS_TLS_CA_FILE)",
                    .cert_file = "--tls_cert_file (PORTCULLIS_TLS_CERT_FILE)",
                    .key_file = "--tls_key_file (PORTCULLIS_TLS_KEY_FILE)",
                    .server_name = "--tls_server_name (PORTCULLIS_TLS_SERVER_NAME)"};
  const absl::StatusOr<portcullis::grpc_tls::ChannelSecurity> security =
      portcullis::grpc_tls::MakeChannelSecurity(tls);
  if (!security.ok()) {
    std::cerr << "error: " << security.status().message() << "\n";
    return portcullis::cli::kExitUsage;
  }
  options.channel_credentials = security->credentials;
  options.tls_server_name = security->server_name;
  if (options.timeout <= absl::ZeroDuration()) {
    std::cerr << "error: --timeout must be positive\n";
    return portcullis::cli::kExitUsage;
  }
  return portcullis::cli::Run(args, options, std::cout, std::cerr);
}
