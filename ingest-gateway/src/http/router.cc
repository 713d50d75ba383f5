#include "ingest-gateway/src/http/router.h"

#include <memory>
#include <utility>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
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

bool Router::Matches(const Route& route, absl::string_view path, std::string* param) {
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
  *param = std::string(rest);
  return true;
}

void Router::Handle(HttpRequest request, Respond respond) const {
  std::vector<std::string> allowed;
  std::string param;
  const Route* found = nullptr;
  const Route* path_match = nullptr;
  for (const Route& route : routes_) {
    std::string route_param;
    if (!Matches(route, request.path, &route_param)) {
      continue;
    }
    if (path_match == nullptr) {
      path_match = &route;
    }
    if (route.method == request.method) {
      found = &route;
      param = std::move(route_param);
      break;
    }
    allowed.push_back(route.method);
  }
  const std::string route_label = path_match != nullptr ? path_match->pattern : kUnmatchedRoute;

  Respond observed = std::move(respond);
  if (observer_ != nullptr) {
    observer_->OnRequestStarted(route_label);
    const absl::Time started = absl::Now();
    observed = [observer = observer_, route_label, started,
                inner = std::move(observed)](HttpResponse response) {
      observer->OnResponse(route_label, response, absl::Now() - started);
      inner(std::move(response));
    };
  }

  if (found == nullptr) {
    if (allowed.empty()) {
      observed(ErrorAnswer(Answer::kNoRoute));
      return;
    }
    const std::string allow = absl::StrJoin(allowed, ", ");
    observed(ErrorAnswer(Answer::kMethodNotAllowed, {.allow = allow}));
    return;
  }
  request.path_param = std::move(param);
  // Handlers copy what they need before returning: `request` lives only for this call.
  found->handler(request, std::move(observed));
}

}  // namespace portcullis::gateway::http
