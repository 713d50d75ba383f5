#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"

namespace portcullis::gateway::http {

// Answers one routed request; `request.path_param` holds the segment of a parameter route.
using RouteHandler = std::function<void(const HttpRequest& request, Respond respond)>;

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
  static bool Matches(const Route& route, absl::string_view path, absl::string_view* param);

  std::vector<Route> routes_;
  RouteObserver* observer_;
};

}  // namespace portcullis::gateway::http
