#pragma once

// WebhookReceiver: an HTTP/1.1 endpoint on 127.0.0.1 that records every request it gets (time,
// method, path, headers, body) and answers from a script, for tests of outbound deliveries.
// One request per connection; a request head over 16 KiB or a body over 1 MiB is answered 413.

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace portcullis::testing {

struct ReceivedRequest {
  absl::Time at;
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // Names lowercased.
  std::string body;

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct ScriptedAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  // Wait this long before answering (a slow receiver).
  absl::Duration delay = absl::ZeroDuration();
};

class WebhookReceiver {
 public:
  // Listens on 127.0.0.1, a free port.
  static absl::StatusOr<std::unique_ptr<WebhookReceiver>> Start();
  // Stops listening and joins every connection (delayed answers are cut short).
  ~WebhookReceiver();

  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" + path.
  std::string Url(const std::string& path) const;

  // The next requests are answered with these, in order; after them, `fallback` (200).
  void Script(std::vector<ScriptedAnswer> answers);
  void SetFallback(ScriptedAnswer answer);

  // Every request received so far (recorded when its body is complete, before the answer).
  std::vector<ReceivedRequest> Requests() const;
  // Waits until at least `count` requests came, or `timeout`; the requests so far.
  std::vector<ReceivedRequest> WaitForRequests(size_t count, absl::Duration timeout) const;

 private:
  WebhookReceiver() = default;
  void AcceptLoop();
  void Serve(int connection);

  int port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::deque<ScriptedAnswer> script_ ABSL_GUARDED_BY(mu_);
  ScriptedAnswer fallback_ ABSL_GUARDED_BY(mu_);
  std::vector<ReceivedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace portcullis::testing
