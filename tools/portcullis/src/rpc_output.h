#pragma once

#include <ostream>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

// What every CLI command that calls the verifier shares: the deadline, the JSON it prints, the
// one error line.
namespace portcullis::cli {

// Prints `message` as JSON (proto field names, every field, indented). Returns the exit code.
int PrintJson(const google::protobuf::Message& message, std::ostream& out, std::ostream& err);

// Prints "error: CODE: message" for a failed call. Returns kExitFailed.
int ReportRpcError(const grpc::Status& status, std::ostream& err);

// Calls `method` (a Verifier::StubInterface member) with a deadline `timeout` from now.
template <typename Stub, typename Method, typename Request, typename Response>
grpc::Status CallWithDeadline(Stub& stub, Method method, absl::Duration timeout,
                              const Request& request, Response* response) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return (stub.*method)(&context, request, response);
}

}  // namespace portcullis::cli
