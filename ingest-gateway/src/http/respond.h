#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/http/http_message.h"

// How a handler answers its request. On the server's hot path a Respond is a plain value: a weak
// reference to the connection and the number of the request it answers, so handing one to a
// handler allocates nothing and takes no lock shared with other connections.
namespace portcullis::gateway::http {

// Told about every routed request with its route pattern (never the raw path), e.g. for metrics.
class RouteObserver {
 public:
  virtual ~RouteObserver() = default;
  virtual void OnRequestStarted(absl::string_view route) = 0;
  virtual void OnRequestFinished(absl::string_view route, int status, absl::Duration elapsed) = 0;
  // The same with the whole response, for observers that label by its headers; the router calls
  // this one. By default: OnRequestFinished with the status.
  virtual void OnResponse(absl::string_view route, const HttpResponse& response,
                          absl::Duration elapsed) {
    OnRequestFinished(route, response.status, elapsed);
  }
};

// Where the server sends an answer: one connection.
class ResponseTarget {
 public:
  virtual ~ResponseTarget() = default;
  // Sends `response` as the answer to the connection's request number `request`; does nothing
  // when that request has its answer already, or the connection moved on or closed.
  virtual void Deliver(uint64_t request, HttpResponse response) = 0;
};

// Sends the response for one request. Call from any thread. The server's Respond (ToTarget) sends
// only the first of all calls on it and its copies.
class Respond {
 public:
  // Answers nothing (a placeholder to assign to).
  Respond() = default;

  // Answers by calling `function` (for tests, and callers that are not the server). Unlike the
  // server's Respond, this one calls `function` on every call.
  template <typename Function,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<Function>, Respond> &&
                                        std::is_invocable_v<Function&, HttpResponse>>>
  // NOLINTNEXTLINE(google-explicit-constructor): handlers' tests pass lambdas.
  Respond(Function&& function) : function_(std::forward<Function>(function)) {}

  // Answers request number `request` of `target` (the server's connections).
  static Respond ToTarget(std::weak_ptr<ResponseTarget> target, uint64_t request) {
    Respond respond;
    respond.target_ = std::move(target);
    respond.request_ = request;
    return respond;
  }

  // A copy that also tells `observer` (when not null) of the response as `route`'s, with the
  // time from now. `observer` and the characters of `route` must outlive every call.
  Respond ObservedAs(RouteObserver* observer, absl::string_view route) const;

  void operator()(HttpResponse response) const;

 private:
  std::function<void(HttpResponse)> function_;
  std::weak_ptr<ResponseTarget> target_;
  uint64_t request_ = 0;
  RouteObserver* observer_ = nullptr;
  absl::string_view route_;
  absl::Time started_;
};

}  // namespace portcullis::gateway::http
