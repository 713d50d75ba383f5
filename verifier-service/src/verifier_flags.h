#pragma once

#include "absl/status/statusor.h"
#include "common/config/setting.h"
#include "verifier-service/src/verifier_config.h"

namespace portcullis::verifier {

// Sets every verifier setting (verifier_flags.cc) from `command_line` (by flag name, as
// config::ParseCommandLine returns it), else its environment variable, else its default, and
// builds the config from them, with the checks across settings (TLS key with certificate, retry
// cap over base, a database URL). InvalidArgument with one line naming the flag and its
// environment variable otherwise.
absl::StatusOr<VerifierConfig> BuildVerifierConfig(const config::Texts& command_line,
                                                   const config::EnvLookup& env = &std::getenv);

}  // namespace portcullis::verifier
