#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"

namespace portcullis::cli {

// Process exit codes of the portcullis CLI.
inline constexpr int kExitOk = 0;
// The call was made and failed, or the verifier rejected the request.
inline constexpr int kExitFailed = 1;
// The command line was wrong; nothing was sent.
inline constexpr int kExitUsage = 2;

// Everything the CLI needs besides the positional arguments; parsed from flags in main.
struct CliOptions {
  std::string verifier_target;  // gRPC target, e.g. "127.0.0.1:50051".
  absl::Duration timeout;       // Deadline of every call.
  int64_t max_body_bytes = 0;   // `url fetch`: --max_body_bytes; 0 for the server's maximum.
  std::string base_url;         // `mf2`, `conformance mf2`: --base-url; empty for the default.
  // `publisher add`: --verified, --require-signature, --retention (0: the server default).
  bool verified = false;
  bool require_signature = false;
  absl::Duration retention = absl::ZeroDuration();
  // `items list`: --after (cursor), --limit (0: the server default).
  int64_t after = 0;
  int32_t limit = 0;
  // `sign`: --key, --id, --timestamp (empty: a random id, now).
  std::string key;
  std::string message_id;
  std::string timestamp;
  // `mention list`: --target, --site, --state, --type, --page-size, --page-token.
  std::string list_target;
  std::string list_site;
  std::string list_state;
  std::string list_type;
  int32_t page_size = 0;
  std::string page_token;
  // The API token sent as `authorization: Bearer …` on every call to the verifier (see
  // ResolveToken). Empty: commands that call the verifier refuse to run; `token_error`, when set,
  // says why the configured token could not be read.
  std::string token;
  std::string token_error;
  // Transport security of the channel to the verifier; null: plaintext. With TLS,
  // `tls_server_name` (when not empty) is the name the server's certificate must carry.
  std::shared_ptr<grpc::ChannelCredentials> channel_credentials;
  std::string tls_server_name;
  // `token create`, `token new`: --name, --scopes (comma separated), --site (repeatable, or
  // comma separated; none: every site).
  std::string token_name;
  std::string token_scopes;
  std::vector<std::string> token_sites;
  // Moderation (issue 16): `site set --moderation`, `review … --note`, `rule add --author-url |
  // --source-prefix [--dry-run]` (`review list` and `rule` take --site and --state above).
  std::string moderation;
  // Avatar proxy (issue 17): `site set --avatar-proxy=on|off` (empty: not given).
  std::string avatar_proxy;
  std::string review_note;
  std::string rule_author_url;
  std::string rule_source_prefix;
  bool dry_run = false;
  // `import`: --format (portcullis, webmention-io; empty: portcullis), --reverify.
  std::string import_format;
  bool reverify = false;
  // `erase` (issue 17): one of --author-url, --source-host, --mention; --undo (--dry-run above).
  std::string erase_author_url;
  std::string erase_source_host;
  std::string erase_mention;
  bool undo = false;
  // The drop ledger (issue 17): `publisher add|set --keep-drops=7d|off` (empty: not given),
  // `drops list|reevaluate --publisher P [--reason R] [--since T]` (--dry-run above).
  std::string keep_drops;
  std::string drops_publisher;
  std::string drops_reason;
  std::string drops_since;
  // `c2pa verify`: --trust, a PEM file of trust anchors (empty: none).
  std::string c2pa_trust;
  // Outbound deliveries (issue 20): `subscription add --publisher --url --events --secret |
  // --signing-key` (--site above), `delivery list|replay --subscription [--failed] [--since]`.
  std::string subscription_publisher;
  std::string subscription_url;
  std::string subscription_events;
  std::string subscription_secret;
  std::string subscription_signing_key;
  std::string delivery_subscription;
  bool delivery_failed = false;
  std::string delivery_since;
  // C2PA per publisher (issue 19): `publisher set --require-c2pa-for-media[=true|false]`
  // (nullopt: not given) and `--c2pa-trust=PEM_FILE|off` (empty: not given).
  std::optional<bool> require_c2pa_for_media;
  std::string publisher_c2pa_trust;
};

// The token the CLI presents: the file named by --token_file (`flag_token_file`) when given,
// else $PORTCULLIS_TOKEN (`env_token`), else the file named by $PORTCULLIS_TOKEN_FILE; empty
// when none is set. A file that cannot be read or holds no token is an error naming its path.
absl::StatusOr<std::string> ResolveToken(const std::string& flag_token_file,
                                         const std::string& env_token,
                                         const std::string& env_token_file);

// The one channel every command that calls the verifier uses: options.verifier_target with the
// token on every call and options.channel_credentials. Without a token (or with a token_error)
// prints one error line saying how to give one and returns null: the caller exits kExitUsage.
std::shared_ptr<grpc::Channel> DialVerifier(const CliOptions& options, std::ostream& err);

// Runs `portcullis <args...>` (args exclude the program name). Results go to `out` as JSON,
// errors to `err` in one line. Returns the exit code.
int Run(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
        std::ostream& err);

// One-paragraph usage text.
std::string Usage();

}  // namespace portcullis::cli
