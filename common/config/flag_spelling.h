#pragma once

namespace portcullis::config {

// Lets users write flags with dashes (`--migrate-only`, `--grpc-listen=...`) as well as with the
// underscores absl requires (`--migrate_only`). Rewrites the flag names in `argv` in place;
// values (after '=') and positional arguments are left alone. Stops at "--".
void AcceptDashedFlagNames(int argc, char** argv);

}  // namespace portcullis::config
