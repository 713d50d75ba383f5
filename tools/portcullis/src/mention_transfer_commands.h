#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "tools/portcullis/src/cli.h"

// Moving a site's mentions between receivers (issue 18):
//   export --site DOMAIN            every mention of the site, any state, one JSON object a line
//                                   (the Mention message in proto JSON) on stdout, in wm_id order
//   import FILE [--format=portcullis|webmention-io] [--reverify]
//                                   `portcullis`: an export; `webmention-io`: what
//                                   webmention.io's /api/mentions.jf2 answered, one or more feed
//                                   documents (pages) one after another. Idempotent per (source,
//                                   target) pair; keeps wm-received; --reverify queues a
//                                   verification of each new pair instead of trusting it.
namespace portcullis::cli {

std::string MentionTransferUsage();

int RunExportCommand(const std::vector<std::string>& args, const CliOptions& options,
                     std::ostream& out, std::ostream& err);
int RunImportCommand(const std::vector<std::string>& args, const CliOptions& options,
                     std::ostream& out, std::ostream& err);

// The mentions of an export file (one Mention in proto JSON a line; blank lines skipped).
// INVALID_ARGUMENT naming the line otherwise.
absl::StatusOr<std::vector<verifier::v1::Mention>> ReadPortcullisExport(std::istream& in);

// The mentions of webmention.io jf2 feed documents, one after another (whitespace between): each
// child's wm-source, wm-target, wm-received (kept as created_at), wm-property, author, url,
// published, name, content and rsvp; private children (wm-private) are left out.
// INVALID_ARGUMENT for anything that is not such a feed, or an entry without wm-source,
// wm-target or a valid wm-received.
absl::StatusOr<std::vector<verifier::v1::Mention>> ReadWebmentionIoFeeds(std::istream& in);

}  // namespace portcullis::cli
