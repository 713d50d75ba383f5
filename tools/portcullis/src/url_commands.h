#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::cli {

// `portcullis url check URL`: prints the CheckUrlResponse as JSON; exit 0 only when allowed.
int CheckUrl(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
             const std::string& url, std::ostream& out, std::ostream& err);

// `portcullis url fetch URL [--max_body_bytes N]`: prints the SafeFetchResponse as JSON (the body
// as base64, as proto JSON writes bytes); exit 0 only when the outcome is "ok". The fetch
// deadline asked for is the call's timeout; `max_body_bytes` 0 means the server's maximum.
int SafeFetch(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
              const std::string& url, int64_t max_body_bytes, std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
