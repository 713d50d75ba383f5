#pragma once

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

}  // namespace portcullis::cli
