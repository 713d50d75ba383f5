#include "verifier-service/src/server/unary_rpc.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/grpc/request_id.h"
#include "common/status/status_mapping.h"
#include "google/protobuf/util/time_util.h"

namespace portcullis::verifier::server {

std::optional<std::string> AcceptRequestId(absl::string_view raw) {
  if (raw.empty() || raw.size() > kMaxRequestIdBytes) {
    return std::nullopt;
  }
  for (const char c : raw) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' &&
        c != '-') {
      return std::nullopt;
    }
  }
  return std::string(raw);
}

std::string MakeRequestId() {
  thread_local absl::BitGen random;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(random));
}

std::string RequestIdOf(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(grpc_metadata::kRequestIdMetadata);
  if (found != metadata.end()) {
    if (std::optional<std::string> id =
            AcceptRequestId(absl::string_view(found->second.data(), found->second.size()))) {
      return *std::move(id);
    }
  }
  return MakeRequestId();
}

void RpcCall::Finish(std::unique_ptr<RpcCall> call, const absl::Status& status) {
  call->context_->AddTrailingMetadata(grpc_metadata::kRequestIdMetadata, call->request_id_);
  call->reactor_->Finish(status::ToGrpcStatus(status));
}

absl::Status StoreStatus(absl::Status status, const RpcCall& call,
                         absl::string_view item_request_id) {
  if (status.ok() || absl::IsNotFound(status) || absl::IsInvalidArgument(status) ||
      absl::IsPermissionDenied(status) || absl::IsResourceExhausted(status) ||
      absl::IsFailedPrecondition(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsUnavailable(status)) {
    return status;
  }
  if (item_request_id.empty()) {
    call.Warn("database error answered UNAVAILABLE: {}", status.ToString());
  } else {
    call.Warn("item request_id={} database error answered UNAVAILABLE: {}",
              std::string(item_request_id), status.ToString());
  }
  return absl::UnavailableError("database unavailable, retry later");
}

absl::Status CheckBatchSize(int items) {
  if (items < 1 || items > kMaxBatchItems) {
    return absl::InvalidArgumentError(
        absl::StrCat("items must hold 1 to ", kMaxBatchItems, " items"));
  }
  return absl::OkStatus();
}

void WriteItemStatus(const absl::Status& status, portcullis::verifier::v1::ItemStatus* out) {
  const grpc::Status mapped = status::ToGrpcStatus(status);
  out->set_code(static_cast<int32_t>(mapped.error_code()));
  out->set_message(mapped.error_message());
}

Reply::~Reply() {
  if (call_ != nullptr) {
    RpcCall::Finish(std::move(call_), absl::InternalError("the call ended without an answer"));
  }
}

void Reply::operator()(const absl::Status& status) && {
  RpcCall::Finish(std::move(call_), status);
}

google::protobuf::Timestamp TimestampProto(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

std::unique_ptr<RpcCall> UnaryRpcs::Admit(grpc::CallbackServerContext* context,
                                          grpc::ServerUnaryReactor* reactor,
                                          Access access) const {
  auto call = std::make_unique<RpcCall>(context, reactor, RequestIdOf(*context));
  absl::StatusOr<auth::Caller> caller = AuthorizeCall(*context, tokens_, ready_.load(), access);
  if (!caller.ok()) {
    RpcCall::Finish(std::move(call), caller.status());
    return nullptr;
  }
  call->caller_ = *std::move(caller);
  return call;
}

void UnaryRpcs::Overloaded(const char* rpc, std::unique_ptr<RpcCall> call) {
  call->Warn("refused {}: blocking pool queue full", rpc);
  RpcCall::Finish(std::move(call), absl::UnavailableError("verifier overloaded, retry later"));
}

}  // namespace portcullis::verifier::server
