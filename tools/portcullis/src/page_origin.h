#pragma once

// PageOrigin: a tiny HTTP/1.1 origin on a loopback address, serving fixed responses by path. It
// is the "source site" of `scripts/up --demo` (`portcullis demo serve`) and of the end-to-end
// verification scenarios, so that a mention can be verified on a machine without internet. Never
// a web server for anything else: it binds loopback addresses only, answers one request per
// connection, reads at most 16 KiB of request head within 5 s, and serves at most 64 connections
// at once.

#include <atomic>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace portcullis::cli {

// One canned answer.
struct PageResponse {
  int status = 200;
  // Sent as given, besides Content-Length and Connection: close.
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/html; charset=utf-8"}};
  std::string body;

  static PageResponse Html(std::string body) {
    PageResponse response;
    response.body = std::move(body);
    return response;
  }
  static PageResponse Status(int status) {
    PageResponse response;
    response.status = status;
    return response;
  }
  static PageResponse Redirect(int status, std::string location) {
    PageResponse response;
    response.status = status;
    response.headers = {{"Location", std::move(location)}};
    return response;
  }
};

class PageOrigin {
 public:
  // Listens on `host`:`port` (port 0 picks one). `host` must be a loopback address literal
  // (127.0.0.0/8 or ::1): InvalidArgument otherwise; Unavailable when it cannot listen.
  static absl::StatusOr<std::unique_ptr<PageOrigin>> Start(const std::string& host, int port);
  // Stops listening and joins every connection.
  ~PageOrigin();

  PageOrigin(const PageOrigin&) = delete;
  PageOrigin& operator=(const PageOrigin&) = delete;

  int port() const { return port_; }
  const std::string& host() const { return host_; }
  // "http://127.0.0.1:PORT" (IPv6 hosts bracketed).
  std::string origin() const;

  // Answers GET `path` (the request target without its query) with `response` from now on;
  // paths without a route are answered 404.
  void SetRoute(const std::string& path, PageResponse response);
  // Requests received for `path` so far.
  int requests(const std::string& path) const;

 private:
  PageOrigin() = default;
  void AcceptLoop();
  void Serve(int connection);

  std::string host_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_{0};
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::map<std::string, PageResponse> routes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
};

// `portcullis demo serve HOST:PORT PATH=FILE...`: serves each FILE (as text/html) at PATH on a
// loopback HOST until SIGINT/SIGTERM; prints "serving http://HOST:PORT" first (port 0: the port
// picked). Returns the exit code.
int RunDemoServe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace portcullis::cli
