#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tools/portcullis/src/cli.h"

// Moderation (issue 16) over gRPC, each printing its answer as JSON:
//   site set DOMAIN --moderation=off|first-time-authors|all            SetSiteSettings
//   review list --site DOMAIN [--state=unreviewed|approved|rejected|hidden]
//                                    every page as one {"mentions": [...]}     ListReviewQueue
//   review approve|reject|hide|unhide ID [--note=TEXT]                  ReviewMention
//   rule add --site DOMAIN (--author-url URL | --source-prefix URL) [--dry-run]
//                                    prints the rule and its reach     AddApprovalRule
//   rule list --site DOMAIN                                             ListApprovalRules
//   rule remove ID                                                      RemoveApprovalRule
namespace portcullis::cli {

std::string ModerationUsage();

// Runs `args` when they are a moderation command (args[0] "review" or "rule", or "site set");
// nullopt otherwise. A usage error prints the reason and ModerationUsage() on `err`.
std::optional<int> RunModerationCommand(const std::vector<std::string>& args,
                                        const CliOptions& options, std::ostream& out,
                                        std::ostream& err);

}  // namespace portcullis::cli
