#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/portcullis/src/cli.h"

// `portcullis block add|list|remove`: the source blocklist over gRPC (AddBlock, ListBlocks,
// RemoveBlock). The scope is explicit, so a global block is never made by omission:
//   block add SCOPE domain|prefix VALUE     SCOPE is `global` or a served site's domain
//   block list SCOPE                        every page, printed as one JSON list
//   block remove SCOPE domain|prefix VALUE
namespace portcullis::cli {

// The usage lines of the block commands (for Usage()).
std::string BlockUsage();

// Runs `args` (args[0] == "block"). Returns an exit code of cli.h; a usage error prints the
// reason and BlockUsage() on `err` and returns kExitUsage.
int RunBlockCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
