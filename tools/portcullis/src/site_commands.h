#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

// The admin commands for sites and targets: `portcullis site ...` and `portcullis target ...`.
// Each prints the answer as JSON on `out` and returns an exit code of cli.h.
namespace portcullis::cli {

// A target argument as the CLI spells it: a URL is an exact target; a URL ending in "*" is a
// prefix rule for everything under it ("https://blog.example/posts/*").
verifier::v1::AddTargetRequest TargetArgument(const std::string& argument);

// The entries of a target import file: one URL (or "URL*" prefix rule) per line; blank lines and
// lines starting with '#' are skipped, surrounding whitespace is ignored. `line_numbers` gets the
// 1-based line of each entry.
std::vector<verifier::v1::AddTargetRequest> ParseTargetFile(const std::string& contents,
                                                            std::vector<int>* line_numbers);

// `portcullis site add DOMAIN`
int AddSite(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
            const std::string& domain, std::ostream& out, std::ostream& err);
// `portcullis site list`: every page, printed as one list.
int ListSites(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
              std::ostream& out, std::ostream& err);
// `portcullis site remove DOMAIN`
int RemoveSite(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
               const std::string& domain, std::ostream& out, std::ostream& err);

// `portcullis target add URL[*]`
int AddTarget(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
              const std::string& target, std::ostream& out, std::ostream& err);
// `portcullis target import FILE`: sends the file in batches of kImportBatchSize entries, each
// stored all or nothing; an error names the file's line, and how many entries earlier batches
// stored.
int ImportTargets(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& path, std::ostream& out, std::ostream& err);
// `portcullis target list [DOMAIN]`: every page, printed as one list.
int ListTargets(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                const std::string& domain, std::ostream& out, std::ostream& err);
// `portcullis target remove URL[*]`
int RemoveTarget(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 const std::string& target, std::ostream& out, std::ostream& err);

// Entries per ImportTargets call.
inline constexpr int kImportBatchSize = 1000;

}  // namespace portcullis::cli
