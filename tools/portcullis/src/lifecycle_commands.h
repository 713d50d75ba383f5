#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/portcullis/src/cli.h"

// The data lifecycle commands (issue 17) over gRPC:
//   erase --author-url URL | --source-host HOST | --mention ID [--dry-run] [--undo]   (Erase)
//   drops list --publisher P [--reason R] [--since T]                              (ListDrops)
//   drops reevaluate --publisher P [--reason R] [--since T] [--dry-run]      (ReevaluateDrops)
namespace portcullis::cli {

// --keep-drops: `off` (or 0) is zero; otherwise a positive whole number of seconds up to ten
// years, written as Go-style durations (`36h`, `90m`, `1h30m`) with days as well (`7d`,
// `1d12h`). INVALID_ARGUMENT saying what is accepted.
absl::StatusOr<absl::Duration> ParseKeepDrops(absl::string_view text);

// --since: an RFC 3339 time (`2026-12-01T00:00:00Z`), or a duration as ParseKeepDrops reads it,
// meaning that long before `now`. INVALID_ARGUMENT otherwise.
absl::StatusOr<absl::Time> ParseSince(absl::string_view text, absl::Time now);

// Runs `args` (args[0] == "drops"): `drops list` prints every page as one JSON object
// {"drops": [...]}; `drops reevaluate` prints {"matched":N,"accepted":N,"still_dropped":N}.
int RunDropsCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err);

// The usage lines of the lifecycle commands (for Usage()).
std::string LifecycleUsage();

// Runs `args` (args[0] == "erase"). Returns an exit code of cli.h; a usage error prints the
// reason and LifecycleUsage() on `err` and returns kExitUsage.
int RunEraseCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
