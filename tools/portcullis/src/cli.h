#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"

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
};

// Runs `portcullis <args...>` (args exclude the program name). Results go to `out` as JSON,
// errors to `err` in one line. Returns the exit code.
int Run(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
        std::ostream& err);

// One-paragraph usage text.
std::string Usage();

}  // namespace portcullis::cli
