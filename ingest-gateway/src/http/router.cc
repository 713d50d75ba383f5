#include "ingest-gateway/src/http/router.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "ingest-gateway/src/answers.h"

namespace portcullis::gateway::http {

void Router::Add(absl::string_view method, absl::string_view pattern, RouteHandler handler) {
  Route route;
  route.method = std::string(method);
  route.pattern = std::string(pattern);
  const size_t brace = pattern.find('{');
  if (brace != absl::string_view::npos) {
    route.has_param = true;
    route.prefix = std::string(pattern.substr(0, brace));
  }
  route.handler = std::move(handler);
  routes_.push_back(std::move(route));
}

bool Router::Matches(const Route& route, absl::string_view path, absl::string_view* param) {
  if (!route.has_param) {
    return path == route.pattern;
  }
  if (path.size() <= route.prefix.size() || path.substr(0, route.prefix.size()) != route.prefix) {
    return false;
  }
  const absl::string_view rest = path.substr(route.prefix.size());
  if (rest.find('/') != absl::string_view::npos) {
    return false;
  }
  *param = rest;
  return true;
}

// Per request: no strings built and nothing allocated unless the route has a parameter, or the
// answer is 405 (its Allow list).
void Router::Handle(HttpRequest request, Respond respond) const {
  absl::string_view param;
  const Route* found = nullptr;
  const Route* path_match = nullptr;
  for (const Route& route : routes_) {
    if (!Matches(route, request.path, &param)) {
      continue;
    }
    if (path_match == nullptr) {
      path_match = &route;
    }
    if (route.method == request.method) {
      found = &route;
      break;
    }
  }
  // Routes are not added once requests come, so the label's characters outlive the response.
  const absl::string_view route_label =
      path_match != nullptr ? absl::string_view(path_match->pattern) : kUnmatchedRoute;
  if (observer_ != nullptr) {
    observer_->OnRequestStarted(route_label);
    respond = respond.ObservedAs(observer_, route_label);
  }

  if (found == nullptr) {
    if (path_match == nullptr) {
      respond(ErrorAnswer(Answer::kNoRoute));
      return;
    }
    std::vector<absl::string_view> allowed;
    for (const Route& route : routes_) {
      absl::string_view ignored;
      if (Matches(route, request.path, &ignored)) {
        allowed.push_back(route.method);
      }
    }
    const std::string allow = absl::StrJoin(allowed, ", ");
    respond(ErrorAnswer(Answer::kMethodNotAllowed, {.allow = allow}));
    return;
  }
  if (found->has_param) {
    request.path_param = std::string(param);
  }
  // Handlers copy what they need before returning: `request` lives only for this call.
  found->handler(request, std::move(respond));
}

}  // namespace portcullis::gateway::http
