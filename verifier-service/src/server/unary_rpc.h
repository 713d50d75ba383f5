#pragma once

// The one shape of every unary Verifier RPC. A handler names its access (authorized_call.h), its
// validation (a pure function of the request, and of the caller when it checks a site) and where
// its work runs:
//
//   return rpcs_.Serve("AddSite", context, request, response, kAdminAccess, ValidateAddSite,
//                      OnPool(pool_, [this, response](std::string domain, const RpcCall& call) {
//                        ...                                      // -> absl::Status
//                      }));
//
// Serve does what is the same for all of them, in this order: the request id (accepted from the
// caller's x-request-id metadata when well formed, made up otherwise), readiness, the bearer
// token, its scope and binding (AuthorizeCall), the validation, then the work — on a blocking pool
// (OnPool: refused with UNAVAILABLE "verifier overloaded, retry later" when its queue is full,
// skipped with CANCELLED when the call went away while queued, its store errors mapped by
// StoreStatus) or wherever the work answers (OnLoop: an event loop's callback, or at once, calls
// the Reply). The call is finished exactly once, with its status mapped once
// (status::ToGrpcStatus) and the request id in the trailing metadata of every answer.
//
// A third place to run work (a batching writer that answers at commit) is an OnLoop work: it
// keeps the Reply and answers when the batch commits.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/timestamp.pb.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "spdlog/spdlog.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/intake/mention_request_validation.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/blocking_pool.h"

namespace portcullis::verifier::server {

// Longest request id accepted from a caller.
inline constexpr size_t kMaxRequestIdBytes = 128;

// `raw` when it is 1 to 128 characters of [A-Za-z0-9._:-] (safe to log as it is); nullopt
// otherwise.
std::optional<std::string> AcceptRequestId(absl::string_view raw);

// A fresh request id (16 hex digits) for a call that came without a usable one.
std::string MakeRequestId();

// The caller's request id (metadata x-request-id) when AcceptRequestId takes it; a fresh one
// otherwise.
std::string RequestIdOf(const grpc::CallbackServerContext& context);

// One call in flight: who made it and its request id. Log lines about the call go through
// Info/Warn, which start them with "request_id=<id> ".
class RpcCall {
 public:
  RpcCall(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
          std::string request_id)
      : context_(context), reactor_(reactor), request_id_(std::move(request_id)) {}

  const auth::Caller& caller() const { return caller_; }
  const auth::SiteBinding& sites() const { return caller_.sites; }
  const std::string& request_id() const { return request_id_; }
  bool cancelled() const { return context_->IsCancelled(); }

  template <typename... Args>
  void Info(spdlog::format_string_t<Args...> format, Args&&... args) const {
    spdlog::info("request_id={} {}", request_id_,
                 fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Warn(spdlog::format_string_t<Args...> format, Args&&... args) const {
    spdlog::warn("request_id={} {}", request_id_,
                 fmt::format(format, std::forward<Args>(args)...));
  }

  // The only place a Verifier call is finished: `status` mapped to gRPC, the request id in the
  // trailing metadata.
  static void Finish(std::unique_ptr<RpcCall> call, const absl::Status& status);

 private:
  friend class UnaryRpcs;

  grpc::CallbackServerContext* const context_;
  grpc::ServerUnaryReactor* const reactor_;
  const std::string request_id_;
  auth::Caller caller_;
};

// A store error as every RPC answers it: NOT_FOUND, INVALID_ARGUMENT, PERMISSION_DENIED (a site
// outside the token's binding), RESOURCE_EXHAUSTED (the per-source limits), FAILED_PRECONDITION
// (e.g. a target on a site not served), UNAVAILABLE and DEADLINE_EXCEEDED pass as they are;
// anything else is a database error the caller may retry, answered UNAVAILABLE "database
// unavailable, retry later" without its detail (which is logged with the call's request id).
// `item_request_id` (an item of a batch call, issue 21; empty for none) is logged with the detail.
absl::Status StoreStatus(absl::Status status, const RpcCall& call,
                         absl::string_view item_request_id = "");

// Most items a batch call (SubmitMentions, EvaluateIngestBatch) carries.
inline constexpr int kMaxBatchItems = 256;

// INVALID_ARGUMENT unless a batch call's `items` holds 1 to kMaxBatchItems.
absl::Status CheckBatchSize(int items);

// An item's status as a batch call answers it: mapped as RpcCall::Finish maps a call's.
void WriteItemStatus(const absl::Status& status, portcullis::verifier::v1::ItemStatus* out);


// Where the answer of a loop work goes: call it exactly once, from any thread. Dropped unanswered
// (a bug), the call is finished INTERNAL rather than left hanging.
class Reply {
 public:
  explicit Reply(std::unique_ptr<RpcCall> call) : call_(std::move(call)) {}
  Reply(Reply&&) = default;
  Reply& operator=(Reply&&) = default;
  ~Reply();

  const RpcCall& call() const { return *call_; }
  void operator()(const absl::Status& status) &&;

 private:
  std::unique_ptr<RpcCall> call_;
};

// Answers a batch call once each of its items has its answer: the reply waits until Done has
// been called once per item (from any threads), then answers OK (each item's status is in its
// result). Shared by the item callbacks; the last Done answers.
class BatchReply {
 public:
  BatchReply(Reply reply, int items) : reply_(std::move(reply)), pending_(items) {}
  const RpcCall& call() const { return reply_.call(); }
  void Done() {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::move(reply_)(absl::OkStatus());
    }
  }

 private:
  Reply reply_;
  std::atomic<int> pending_;
};

// Work that blocks (the database): `fn(value, const RpcCall&) -> absl::Status` (or
// `fn(const RpcCall&)` when the validation yields no value) runs on `pool`.
template <typename F>
struct PoolWork {
  BlockingPool* pool;
  F fn;
};
template <typename F>
PoolWork<F> OnPool(BlockingPool& pool, F fn) {
  return {&pool, std::move(fn)};
}

// Work that answers from a callback (an event loop), or at once: `fn(value, Reply)`.
template <typename F>
struct LoopWork {
  F fn;
};
template <typename F>
LoopWork<F> OnLoop(F fn) {
  return {std::move(fn)};
}

// A validation whose verdict may be a rejection: an answer (OK, DECISION_REJECTED with the
// reason), not an error; Serve writes it into the response and runs no work.
template <typename Value>
using OrRejection = std::variant<intake::Rejection, Value>;

// The rejection fields SubmitMentionResponse and VerifyNowResponse share.
template <typename Response>
void WriteRejection(const intake::Rejection& rejection, Response* response) {
  response->set_decision(portcullis::verifier::v1::DECISION_REJECTED);
  response->set_reason(rejection.reason);
  response->set_reason_description(rejection.description);
}

// For RPCs whose request has nothing to validate.
inline absl::Status NothingToValidate(const google::protobuf::Message& /*request*/) {
  return absl::OkStatus();
}

// The paging trick in one place, for the list RPCs whose store reads "rows after a position":
// reads `size + 1` rows with `read(limit)` (a StatusOr of a vector), calls `add(row)` for the
// first `size`, and when there were more sets `*next_page_token` to `token_of(last row added)`.
template <typename Read, typename TokenOf, typename Add>
absl::Status ListPage(int size, Read read, TokenOf token_of, Add add,
                      std::string* next_page_token) {
  auto rows = read(size + 1);
  if (!rows.ok()) {
    return rows.status();
  }
  const bool more = static_cast<int>(rows->size()) > size;
  if (more) {
    rows->resize(size);
  }
  for (const auto& row : *rows) {
    add(row);
  }
  if (more && !rows->empty()) {
    *next_page_token = token_of(rows->back());
  }
  return absl::OkStatus();
}

google::protobuf::Timestamp TimestampProto(absl::Time time);

namespace unary_rpc_internal {

template <typename T>
struct IsOrRejection : std::false_type {};
template <typename Value>
struct IsOrRejection<std::variant<intake::Rejection, Value>> : std::true_type {
  using type = Value;
};

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status) {
  return status.status();
}

template <typename Validate, typename Request>
auto RunValidation(Validate& validate, const Request& request, const auth::Caller& caller) {
  if constexpr (std::is_invocable_v<Validate&, const Request&, const auth::Caller&>) {
    return validate(request, caller);
  } else {
    return validate(request);
  }
}

}  // namespace unary_rpc_internal

// The helper every Verifier RPC goes through (see the top of this file).
class UnaryRpcs {
 public:
  // `tokens` and `ready` must outlive every call.
  UnaryRpcs(const auth::TokenRegistry& tokens, const std::atomic<bool>& ready)
      : tokens_(tokens), ready_(ready) {}

  template <typename Request, typename Response, typename Validate, typename Work>
  grpc::ServerUnaryReactor* Serve(const char* rpc, grpc::CallbackServerContext* context,
                                  const Request* request, Response* response, Access access,
                                  Validate validate, Work work) const {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    std::unique_ptr<RpcCall> call = Admit(context, reactor, access);
    if (call == nullptr) {
      return reactor;  // Admit answered.
    }
    auto verdict = unary_rpc_internal::RunValidation(validate, *request, call->caller());
    if (!verdict.ok()) {
      RpcCall::Finish(std::move(call), unary_rpc_internal::StatusOf(verdict));
      return reactor;
    }
    if constexpr (std::is_same_v<decltype(verdict), absl::Status>) {
      Run(rpc, std::move(call), std::move(work), std::tuple<>());
    } else {
      using Value = typename decltype(verdict)::value_type;
      if constexpr (unary_rpc_internal::IsOrRejection<Value>::value) {
        if (const auto* rejection = std::get_if<intake::Rejection>(&*verdict)) {
          WriteRejection(*rejection, response);
          RpcCall::Finish(std::move(call), absl::OkStatus());
          return reactor;
        }
        Run(rpc, std::move(call), std::move(work), std::make_tuple(std::get<1>(*std::move(verdict))));
      } else {
        Run(rpc, std::move(call), std::move(work), std::make_tuple(*std::move(verdict)));
      }
    }
    return reactor;
  }

 private:
  // The call, authorized; null after finishing it with the refusal.
  std::unique_ptr<RpcCall> Admit(grpc::CallbackServerContext* context,
                                 grpc::ServerUnaryReactor* reactor, Access access) const;
  // Refused by a full pool.
  static void Overloaded(const char* rpc, std::unique_ptr<RpcCall> call);

  template <typename F, typename Values>
  static void Run(const char* rpc, std::unique_ptr<RpcCall> call, PoolWork<F> work,
                  Values values) {
    RpcCall* raw = call.release();
    const bool queued = work.pool->TrySubmit(
        [raw, fn = std::move(work.fn), values = std::move(values)]() mutable {
          std::unique_ptr<RpcCall> call(raw);
          if (call->cancelled()) {
            RpcCall::Finish(std::move(call), absl::CancelledError("call cancelled"));
            return;
          }
          absl::Status status = std::apply(
              [&](auto&&... value) { return fn(std::move(value)..., std::as_const(*call)); },
              std::move(values));
          status = StoreStatus(std::move(status), *call);
          RpcCall::Finish(std::move(call), status);
        });
    if (!queued) {
      Overloaded(rpc, std::unique_ptr<RpcCall>(raw));
    }
  }

  template <typename F, typename Values>
  static void Run(const char* /*rpc*/, std::unique_ptr<RpcCall> call, LoopWork<F> work,
                  Values values) {
    std::apply([&](auto&&... value) { work.fn(std::move(value)..., Reply(std::move(call))); },
               std::move(values));
  }

  const auth::TokenRegistry& tokens_;
  const std::atomic<bool>& ready_;
};

}  // namespace portcullis::verifier::server
