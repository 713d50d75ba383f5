#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/portcullis/src/cli.h"

// `portcullis token ...`: API tokens for the verifier.
//   token create --scopes S[,S] [--site D]... [--name N]   CreateToken (admin); the new token alone
//                                   on stdout (shown once), its id on stderr
//   token list                      ListTokens (admin), as JSON
//   token revoke ID                 RevokeToken (admin), as JSON
//   token new --name N --scopes S[,S] [--site D]...   offline, for bootstrap: a new token on
//                                   stdout and its line for the verifier's --tokens_file (the
//                                   hash, never the token) on stderr
namespace portcullis::cli {

std::string TokenUsage();

// Runs `args` (args[0] == "token"). Returns an exit code of cli.h.
int RunTokenCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err);

// The line of a static tokens file for a token (`<sha256 hex> <name> <scopes> [<site>,...]`),
// after checking name, scopes and sites as the verifier would. INVALID_ARGUMENT naming the
// offending value otherwise (never the token).
absl::StatusOr<std::string> StaticTokenLine(const std::string& token, const std::string& name,
                                            const std::string& scopes,
                                            const std::vector<std::string>& sites);

}  // namespace portcullis::cli
