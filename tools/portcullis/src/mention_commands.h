#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::cli {

// `portcullis mention submit SOURCE TARGET`: prints the SubmitMentionResponse as JSON.
int SubmitMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& source, const std::string& target, std::ostream& out,
                  std::ostream& err);

// `portcullis mention get ID`: prints the Mention as JSON.
int GetMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
               const std::string& mention_id, std::ostream& out, std::ostream& err);

// `portcullis mention verify SOURCE TARGET`: verifies the pair now (VerifyNow) and prints the
// VerifyNowResponse as JSON. Exit 0 only when the mention is VERIFIED. The call gets at least
// kVerifyNowMinTimeout: a verification fetches the source and maybe its author page.
inline constexpr absl::Duration kVerifyNowMinTimeout = absl::Seconds(15);
int VerifyMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& source, const std::string& target, std::ostream& out,
                  std::ostream& err);

// What `portcullis mention list` asks for (flags --target, --site, --state, --type,
// --page-size, --page-token).
struct MentionListOptions {
  std::string target;  // Exactly one of target and site.
  std::string site;
  std::string state;  // pending, verified, failed (any case); empty: any.
  std::string type;   // mention, reply, like, repost, bookmark, rsvp; empty: any.
  int32_t page_size = 0;  // 0: the server's default.
  std::string page_token;
};

// `portcullis mention list --target URL | --site DOMAIN [...]`: prints the ListMentionsResponse
// (one page, with next_page_token) as JSON. A bad option is a usage error (kExitUsage), found
// before any call.
int ListMentions(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 const MentionListOptions& options, std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
