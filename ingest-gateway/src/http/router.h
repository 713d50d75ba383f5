#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"

namespace portcullis::gateway::http {

// Answers one routed request; `request.path_param` holds the segment of a parameter route.
using RouteHandler = std::function<void(const HttpRequest& request, Respond respond)>;

// Told about every request with its route pattern (never the raw path), e.g. for metrics.
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

// The route label of requests that match no route.
inline constexpr char kUnmatchedRoute[] = "unmatched";

// Dispatches by method and path: exact paths, and `prefix{param}` patterns with one trailing
// segment. Unknown path → 404; known path, other method → 405 with Allow.
class Router {
 public:
  explicit Router(RouteObserver* observer = nullptr) : observer_(observer) {}

  // `pattern` is an exact path ("/webmention") or a prefix followed by one parameter
  // ("/webmention/status/{id}"); the parameter matches one non-empty segment without '/'.
  void Add(absl::string_view method, absl::string_view pattern, RouteHandler handler);

  // Routes one request; usable as an HttpServer Handler.
  void Handle(HttpRequest request, Respond respond) const;

  // A Handler that routes through this router (which must outlive the server).
  Handler AsHandler() const {
    return [this](HttpRequest request, Respond respond) {
      Handle(std::move(request), std::move(respond));
    };
  }

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::string prefix;  // For parameter routes: the pattern up to '{'.
    bool has_param = false;
    RouteHandler handler;
  };

  // True when `path` matches `route`'s pattern; sets `param` for parameter routes.
  static bool Matches(const Route& route, absl::string_view path, std::string* param);

  std::vector<Route> routes_;
  RouteObserver* observer_;
};

}  // namespace portcullis::gateway::http
