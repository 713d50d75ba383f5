#include "tools/portcullis/src/url_commands.h"

#include <algorithm>
#include <cstdint>

#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

// Waits (within the deadline) for a verifier that is still starting, rather than failing fast:
// both RPCs are read-only and safe to send late.
void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  context.set_wait_for_ready(true);
}

}  // namespace

int CheckUrl(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
             const std::string& url, std::ostream& out, std::ostream& err) {
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  verifier::v1::CheckUrlRequest request;
  request.set_url(url);
  verifier::v1::CheckUrlResponse response;
  if (const grpc::Status status = stub.CheckUrl(&context, request, &response); !status.ok()) {
    return ReportRpcError(status, err);
  }
  if (const int code = PrintJson(response, out, err); code != kExitOk) {
    return code;
  }
  return response.allowed() ? kExitOk : kExitFailed;
}

int SafeFetch(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
              const std::string& url, int64_t max_body_bytes, std::ostream& out,
              std::ostream& err) {
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  verifier::v1::SafeFetchRequest request;
  request.set_url(url);
  // The fetch must end before the call does, so its outcome arrives rather than a deadline.
  request.mutable_limits()->set_deadline_ms(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout) - 250));
  request.mutable_limits()->set_max_body_bytes(max_body_bytes);
  verifier::v1::SafeFetchResponse response;
  if (const grpc::Status status = stub.SafeFetch(&context, request, &response); !status.ok()) {
    return ReportRpcError(status, err);
  }
  if (const int code = PrintJson(response, out, err); code != kExitOk) {
    return code;
  }
  return response.outcome() == "ok" ? kExitOk : kExitFailed;
}

}  // namespace portcullis::cli
