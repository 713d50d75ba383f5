#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/portcullis/src/cli.h"

// Outbound deliveries (issue 20) over gRPC, JSON output:
//   subscription add (--site DOMAIN | --publisher ID) --url URL --events E[,E…]
//                    (--secret whsec_… | --signing-key whsk_…)      CreateSubscription
//   subscription list                                               ListSubscriptions
//   subscription remove ID                                          RemoveSubscription
//   subscription test ID                                            SendTestEvent
//   delivery list --subscription ID                                 ListDeliveries
//   delivery replay (ID | --subscription ID [--failed] [--since TIME]) [--dry-run]
namespace portcullis::cli {

// The usage lines of these commands (for Usage()).
std::string DeliveryUsage();

// Runs `args` when args[0] is "subscription" or "delivery" (an exit code of cli.h); nullopt for
// any other command.
std::optional<int> RunDeliveryCommand(const std::vector<std::string>& args,
                                      const CliOptions& options, std::ostream& out,
                                      std::ostream& err);

}  // namespace portcullis::cli
