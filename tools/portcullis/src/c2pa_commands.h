#pragma once

// `portcullis c2pa verify FILE [--trust PEM]`: validates the C2PA manifest of a JPEG or PNG file
// with the verifier's own validator (verifier-service/src/c2pa/) and prints the result as JSON —
// for operators checking a file by hand, and for tests. Offline: no call to the verifier.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {

// Runs `args` when it is a c2pa command; nullopt for any other command.
std::optional<int> RunC2paCommand(const std::vector<std::string>& args, const CliOptions& options,
                                  std::ostream& out, std::ostream& err);

// The usage lines of the c2pa commands.
std::string C2paUsage();

// Validates FILE (JPEG or PNG, by its signature) against the anchors in the PEM file `trust_path`
// (empty: none, so every signer is untrusted) at `now`; prints the result JSON. 0 when the
// manifest is valid and trusted, 1 otherwise (the JSON says why) or when FILE or the PEM cannot
// be read.
int VerifyC2paFile(const std::string& path, const std::string& trust_path, absl::Time now,
                   std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
