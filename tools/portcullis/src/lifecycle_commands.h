#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/portcullis/src/cli.h"

// The data lifecycle commands (issue 17) over gRPC:
//   erase --author-url URL | --source-host HOST | --mention ID [--dry-run] [--undo]   (Erase)
namespace portcullis::cli {

// The usage lines of the lifecycle commands (for Usage()).
std::string LifecycleUsage();

// Runs `args` (args[0] == "erase"). Returns an exit code of cli.h; a usage error prints the
// reason and LifecycleUsage() on `err` and returns kExitUsage.
int RunEraseCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
