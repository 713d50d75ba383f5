#include "verifier-service/src/fetch/curl_http_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/lifecycle/thread_name.h"

namespace portcullis::verifier::fetch {
namespace {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;

// A descriptor closed with its owner.
class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() {
    if (fd_ >= 0) {
      close(fd_);
    }
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

void InitLibraryOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One transfer: the request, what has arrived, and how it ends.
struct Transfer {
  HttpRequest request;
  HttpClient::Callback callback;
  const EgressPolicy* policy = nullptr;
  EasyPtr easy;
  SlistPtr headers;
  SlistPtr connect_to;
  char error[CURL_ERROR_SIZE] = {};

  bool decided = false;  // whether the body is kept has been decided (first body bytes)
  bool keep_body = false;
  bool body_skipped = false;
  bool too_large = false;
  std::optional<absl::Status> socket_refused;
  std::string body;

  // Trickle pacing (TricklePacing): set when the loop starts the transfer.
  uint64_t serial = 0;  // tells this transfer from a later one at the same CURL* address
  absl::Time started;
  const TricklePacing* pacing = nullptr;
  std::vector<CURL*>* to_pause = nullptr;  // the loop's: paused once the current action ends
  bool pause_pending = false;              // in *to_pause, or paused
  // (time, bytes downloaded) at each pause, reaching back low_speed_time: the minimum speed of a
  // paced transfer is checked here (BelowMinimumSpeed).
  std::deque<std::pair<absl::Time, curl_off_t>> pace_samples;
};

// After each read of the body: a transfer that has proved slow asks the loop to pause it.
void PaceIfTrickling(Transfer& transfer) {
  if (transfer.pause_pending) {
    return;
  }
  const absl::Duration running = absl::Now() - transfer.started;
  if (running < transfer.pacing->after ||
      static_cast<double>(transfer.body.size()) >=
          static_cast<double>(transfer.pacing->below_bytes_per_second) *
              absl::ToDoubleSeconds(running)) {
    return;
  }
  transfer.pause_pending = true;
  transfer.to_pause->push_back(transfer.easy.get());
}

curl_socket_t OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(data);
  if (purpose != CURLSOCKTYPE_IPCXN) {
    transfer->socket_refused = absl::PermissionDeniedError("unexpected socket purpose");
    return CURL_SOCKET_BAD;
  }
  const std::optional<net::IpAddress> target =
      net::IpAddress::FromSockaddr(&address->addr, address->addrlen);
  if (!target.has_value()) {
    transfer->socket_refused =
        absl::PermissionDeniedError("connection refused: not an IPv4 or IPv6 address");
    return CURL_SOCKET_BAD;
  }
  if (*target != transfer->request.address) {
    transfer->socket_refused = absl::PermissionDeniedError(
        absl::StrCat("connection refused: ", target->ToString(), " is not the checked address ",
                     transfer->request.address.ToString()));
    return CURL_SOCKET_BAD;
  }
  if (absl::Status status = transfer->policy->CheckAddress(*target); !status.ok()) {
    transfer->socket_refused = absl::PermissionDeniedError(
        absl::StrCat("connection refused at connect time: ", status.message()));
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t Write(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t length = size * count;
  if (!transfer->decided) {
    transfer->decided = true;
    long status = 0;
    curl_easy_getinfo(transfer->easy.get(), CURLINFO_RESPONSE_CODE, &status);
    const char* content_type = nullptr;
    curl_easy_getinfo(transfer->easy.get(), CURLINFO_CONTENT_TYPE, &content_type);
    const std::string media = MediaTypeOf(content_type != nullptr ? content_type : "");
    const auto& allowed = transfer->request.body_media_types;
    transfer->keep_body = status >= 200 && status < 300 &&
                          std::find(allowed.begin(), allowed.end(), media) != allowed.end();
  }
  if (!transfer->keep_body) {
    transfer->body_skipped = true;
    return 0;  // ends the transfer (CURLE_WRITE_ERROR), answered as a response without body
  }
  if (static_cast<int64_t>(transfer->body.size() + length) > transfer->request.max_body_bytes) {
    transfer->too_large = true;
    return 0;
  }
  transfer->body.append(data, length);
  PaceIfTrickling(*transfer);
  return length;
}

std::optional<std::string> Header(CURL* easy, const char* name) {
  curl_header* header = nullptr;
  if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK ||
      header == nullptr) {
    return std::nullopt;
  }
  return std::string(header->value);
}

absl::Status StatusOfFailure(const Transfer& transfer, CURLcode code) {
  const std::string detail =
      absl::StrCat(curl_easy_strerror(code), transfer.error[0] != '\0' ? ": " : "", transfer.error);
  if (transfer.socket_refused.has_value()) {
    return *transfer.socket_refused;
  }
  if (transfer.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("body larger than ", transfer.request.max_body_bytes, " bytes (decoded)"));
  }
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(detail);
    case CURLE_PEER_FAILED_VERIFICATION:
      return absl::FailedPreconditionError(detail);
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::PermissionDeniedError(detail);
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
      return absl::InvalidArgumentError(detail);
    case CURLE_ABORTED_BY_CALLBACK:
      return absl::CancelledError(detail);
    default:  // couldn't connect, reset, send/recv errors, empty reply, TLS handshake
      return absl::UnavailableError(detail);
  }
}

// libcurl restarts its minimum-speed clock whenever a transfer is paused or resumed, so a paced
// transfer would never be cut by CURLOPT_LOW_SPEED_*: the loop holds it to the same floor, checked
// at each pause — fewer than low_speed_bytes_per_second on average over the last low_speed_time
// (or a little more: the samples are a pause apart) ends it like libcurl's check would.
bool BelowMinimumSpeed(Transfer& transfer, absl::Time now) {
  const HttpRequest& request = transfer.request;
  if (request.low_speed_bytes_per_second <= 0) {
    return false;
  }
  curl_off_t downloaded = 0;
  curl_easy_getinfo(transfer.easy.get(), CURLINFO_SIZE_DOWNLOAD_T, &downloaded);
  auto& samples = transfer.pace_samples;
  samples.emplace_back(now, downloaded);
  while (samples.size() >= 2 && now - samples[1].first >= request.low_speed_time) {
    samples.pop_front();
  }
  const auto [since, then] = samples.front();
  const absl::Duration window = now - since;
  return window >= request.low_speed_time &&
         static_cast<double>(downloaded - then) <
             static_cast<double>(request.low_speed_bytes_per_second) *
                 absl::ToDoubleSeconds(window);
}

}  // namespace

// The event loop: libcurl's socket interface (curl_multi_socket_action) over epoll, so each
// wakeup costs what its ready sockets cost, not one pass over every transfer in flight (a thousand
// tarpits trickling their bodies would otherwise make every fast fetch wait behind them).
class CurlHttpClient::Loop {
 public:
  Loop(CurlHttpClientConfig config, const EgressPolicy* policy, MultiPtr multi)
      : config_(std::move(config)),
        policy_(policy),
        epoll_(epoll_create1(EPOLL_CLOEXEC)),
        wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
        multi_(std::move(multi)) {}

  ~Loop() {
    Stop();
    multi_.reset();  // may still report sockets removed: before the descriptors close
  }

  absl::Status Start() {
    if (epoll_.get() < 0 || wake_.get() < 0) {
      return absl::InternalError(absl::StrCat("cannot create the fetch event loop: errno ", errno));
    }
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.fd = wake_.get();
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &wake) != 0) {
      return absl::InternalError(absl::StrCat("cannot watch the wakeup descriptor: errno ", errno));
    }
    CURLM* multi = multi_.get();
    if (curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Loop::OnSocket) != CURLM_OK ||
        curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, static_cast<void*>(this)) != CURLM_OK ||
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Loop::OnTimer) != CURLM_OK ||
        curl_multi_setopt(multi, CURLMOPT_TIMERDATA, static_cast<void*>(this)) != CURLM_OK) {
      return absl::InternalError("libcurl refused the socket interface's callbacks");
    }
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  void Submit(HttpRequest request, Callback callback) {
    auto transfer = std::make_unique<Transfer>();
    transfer->request = std::move(request);
    transfer->callback = std::move(callback);
    transfer->policy = policy_;
    {
      absl::MutexLock lock(&mutex_);
      if (!stopping_) {
        queue_.push_back(std::move(transfer));
      }
    }
    if (transfer != nullptr) {
      std::move(transfer->callback)(absl::CancelledError("HTTP client is shutting down"));
      return;
    }
    Wake();
  }

  void Stop() {
    {
      absl::MutexLock lock(&mutex_);
      if (stopping_) {
        return;
      }
      stopping_ = true;
    }
    Wake();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

 private:
  // Sets every option of the transfer; an error when libcurl refuses one.
  absl::Status Configure(Transfer& transfer) {
    CURL* easy = transfer.easy.get();
    const HttpRequest& request = transfer.request;
    url::Url target = request.url;
    std::string href = target.href();
    if (const size_t hash = href.find('#'); hash != std::string::npos) {
      href.resize(hash);
    }
    const std::string address = request.address.is_ipv6()
                                    ? absl::StrCat("[", request.address.ToString(), "]")
                                    : request.address.ToString();
    // "::ADDRESS:PORT": any host and port of this transfer goes to the checked address.
    transfer.connect_to.reset(curl_slist_append(
        nullptr, absl::StrCat("::", address, ":", request.url.effective_port()).c_str()));
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      headers = curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
    }
    if (request.headers.empty()) {
      headers = curl_slist_append(headers, absl::StrCat("Accept: ", kAcceptHeader).c_str());
    }
    if (request.method == "POST") {
      headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    }
    transfer.headers.reset(headers);
    const long timeout_ms =
        std::max<long>(1, static_cast<long>(absl::ToInt64Milliseconds(request.timeout)));
    const long low_speed_seconds =
        std::max<long>(1, static_cast<long>(absl::ToInt64Seconds(request.low_speed_time)));

    CURLcode code = CURLE_OK;
    const auto set = [&](CURLoption option, auto value) {
      if (code == CURLE_OK) {
        code = curl_easy_setopt(easy, option, value);
      }
    };
    set(CURLOPT_URL, href.c_str());
    set(CURLOPT_PRIVATE, static_cast<void*>(&transfer));
    set(CURLOPT_ERRORBUFFER, transfer.error);
    set(CURLOPT_NOSIGNAL, 1L);
    if (request.method == "POST") {
      set(CURLOPT_POST, 1L);
      set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.post_body.size()));
      set(CURLOPT_POSTFIELDS, request.post_body.data());
    } else {
      set(CURLOPT_HTTPGET, 1L);
    }
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    set(CURLOPT_FOLLOWLOCATION, 0L);
    set(CURLOPT_PROXY, "");
    set(CURLOPT_NETRC, static_cast<long>(CURL_NETRC_IGNORED));
    set(CURLOPT_PATH_AS_IS, 1L);  // the WHATWG serializer already normalized the path
    set(CURLOPT_CONNECT_TO, transfer.connect_to.get());
    set(CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
    set(CURLOPT_OPENSOCKETDATA, static_cast<void*>(&transfer));
    set(CURLOPT_SSL_VERIFYPEER, 1L);
    set(CURLOPT_SSL_VERIFYHOST, 2L);
    if (!config_.ca_file.empty()) {
      set(CURLOPT_CAINFO, config_.ca_file.c_str());
    }
    set(CURLOPT_TIMEOUT_MS, timeout_ms);
    set(CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(request.low_speed_bytes_per_second));
    set(CURLOPT_LOW_SPEED_TIME, low_speed_seconds);
    set(CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl decodes; the cap counts decoded
    set(CURLOPT_HTTPHEADER, transfer.headers.get());
    set(CURLOPT_USERAGENT, config_.user_agent.c_str());
    set(CURLOPT_WRITEFUNCTION, &Write);
    set(CURLOPT_WRITEDATA, static_cast<void*>(&transfer));
    if (code != CURLE_OK) {
      return absl::InternalError(
          absl::StrCat("libcurl refused an option: ", curl_easy_strerror(code)));
    }
    return absl::OkStatus();
  }

  void StartQueued() {
    std::deque<std::unique_ptr<Transfer>> pending;
    {
      absl::MutexLock lock(&mutex_);
      pending.swap(queue_);
    }
    for (std::unique_ptr<Transfer>& transfer : pending) {
      transfer->easy.reset(curl_easy_init());
      absl::Status status = transfer->easy == nullptr ? absl::InternalError("curl_easy_init failed")
                                                      : Configure(*transfer);
      if (status.ok() && curl_multi_add_handle(multi_.get(), transfer->easy.get()) != CURLM_OK) {
        status = absl::InternalError("curl_multi_add_handle failed");
      }
      if (!status.ok()) {
        std::move(transfer->callback)(std::move(status));
        continue;
      }
      transfer->serial = ++started_count_;
      transfer->started = absl::Now();
      transfer->pacing = &config_.pacing;
      transfer->to_pause = &to_pause_;
      CURL* easy = transfer->easy.get();
      running_.emplace(easy, std::move(transfer));
    }
  }

  void Finish(CURL* easy, CURLcode code) {
    const auto it = running_.find(easy);
    if (it == running_.end()) {
      return;
    }
    std::unique_ptr<Transfer> transfer = std::move(it->second);
    running_.erase(it);
    curl_multi_remove_handle(multi_.get(), easy);
    absl::StatusOr<HttpResponse> result;
    if (code == CURLE_OK ||
        (code == CURLE_WRITE_ERROR && transfer->body_skipped && !transfer->too_large)) {
      HttpResponse response;
      long status = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      response.status = static_cast<int>(status);
      const char* content_type = nullptr;
      curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &content_type);
      response.content_type = content_type != nullptr ? content_type : "";
      response.location = Header(easy, "Location");
      response.retry_after = Header(easy, "Retry-After");
      response.content_length = Header(easy, "Content-Length");
      response.etag = Header(easy, "ETag");
      response.last_modified = Header(easy, "Last-Modified");
      response.body = std::move(transfer->body);
      response.body_skipped = transfer->body_skipped;
      result = std::move(response);
    } else {
      result = StatusOfFailure(*transfer, code);
    }
    std::move(transfer->callback)(std::move(result));
  }

  // Pauses the transfers that asked for it during this iteration (after the finished ones are
  // gone: a CURL* of a finished transfer is no longer in running_), or ends those below the
  // minimum speed.
  void PauseTrickling() {
    if (to_pause_.empty()) {
      return;
    }
    const absl::Time now = absl::Now();
    const absl::Time until = now + config_.pacing.pause;
    std::vector<CURL*> too_slow;
    for (CURL* easy : to_pause_) {
      const auto it = running_.find(easy);
      if (it == running_.end()) {
        continue;
      }
      Transfer& transfer = *it->second;
      if (BelowMinimumSpeed(transfer, now)) {
        snprintf(transfer.error, sizeof(transfer.error),
                 "Operation too slow. Less than %lld bytes/sec transferred the last %lld seconds",
                 static_cast<long long>(transfer.request.low_speed_bytes_per_second),
                 static_cast<long long>(absl::ToInt64Seconds(transfer.request.low_speed_time)));
        too_slow.push_back(easy);
        continue;
      }
      if (curl_easy_pause(easy, CURLPAUSE_RECV) == CURLE_OK) {
        paused_.push_back({until, easy, it->second->serial});
      } else {
        transfer.pause_pending = false;  // read as it comes
      }
    }
    to_pause_.clear();
    for (CURL* easy : too_slow) {
      Finish(easy, CURLE_OPERATION_TIMEDOUT);
    }
  }

  // Resumes the transfers whose pause is over. libcurl reads what the kernel gathered on its next
  // action for them (resuming sets their timer to now and watches their socket again).
  void ResumeDue() {
    const absl::Time now = absl::Now();
    while (!paused_.empty() && paused_.front().until <= now) {
      const Pause pause = paused_.front();
      paused_.pop_front();
      const auto it = running_.find(pause.easy);
      if (it == running_.end() || it->second->serial != pause.serial) {
        continue;  // ended while paused (deadline, shutdown)
      }
      it->second->pause_pending = false;
      curl_easy_pause(pause.easy, CURLPAUSE_CONT);
    }
  }

  void Run() {
    lifecycle::NameCurrentThread("fetch-loop");
    // With CURLOPT_NOSIGNAL libcurl leaves SIGPIPE to us, and a TLS peer that hangs up mid-write
    // would raise it: blocked on this thread, the write fails with EPIPE instead.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    constexpr int kMaxEvents = 256;
    epoll_event events[kMaxEvents];
    while (true) {
      {
        absl::MutexLock lock(&mutex_);
        if (stopping_) {
          break;
        }
      }
      StartQueued();
      const int ready = epoll_wait(epoll_.get(), events, kMaxEvents, WaitMilliseconds());
      for (int i = 0; i < ready; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_.get()) {
          uint64_t count = 0;
          while (read(fd, &count, sizeof(count)) > 0) {
          }
          continue;
        }
        int flags = 0;
        if ((events[i].events & EPOLLIN) != 0) {
          flags |= CURL_CSELECT_IN;
        }
        if ((events[i].events & EPOLLOUT) != 0) {
          flags |= CURL_CSELECT_OUT;
        }
        if ((events[i].events & (EPOLLERR | EPOLLHUP)) != 0) {
          flags |= CURL_CSELECT_ERR;
        }
        int running = 0;
        curl_multi_socket_action(multi_.get(), fd, flags, &running);
      }
      ResumeDue();
      if (timer_.has_value() && absl::Now() >= *timer_) {
        timer_.reset();  // libcurl sets the next one from inside the call
        int running = 0;
        curl_multi_socket_action(multi_.get(), CURL_SOCKET_TIMEOUT, 0, &running);
      }
      int left = 0;
      while (CURLMsg* message = curl_multi_info_read(multi_.get(), &left)) {
        if (message->msg == CURLMSG_DONE) {
          Finish(message->easy_handle, message->data.result);
        }
      }
      PauseTrickling();
    }
    for (auto& [easy, transfer] : running_) {
      curl_multi_remove_handle(multi_.get(), easy);
      std::move(transfer->callback)(absl::CancelledError("HTTP client is shutting down"));
    }
    running_.clear();
    std::deque<std::unique_ptr<Transfer>> pending;
    {
      absl::MutexLock lock(&mutex_);
      pending.swap(queue_);
    }
    for (std::unique_ptr<Transfer>& transfer : pending) {
      std::move(transfer->callback)(absl::CancelledError("HTTP client is shutting down"));
    }
  }

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(wake_.get(), &one, sizeof(one));
  }

  // How long epoll may wait: until libcurl's timer or the first pause's end, and at most a second.
  int WaitMilliseconds() const {
    constexpr int kMaxWaitMs = 1000;
    std::optional<absl::Time> next = timer_;
    if (!paused_.empty() && (!next.has_value() || paused_.front().until < *next)) {
      next = paused_.front().until;
    }
    if (!next.has_value()) {
      return kMaxWaitMs;
    }
    const absl::Duration left = *next - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return 0;
    }
    return static_cast<int>(std::min<int64_t>(kMaxWaitMs, absl::ToInt64Milliseconds(left) + 1));
  }

  // CURLMOPT_SOCKETFUNCTION: watch `socket` for what libcurl waits for, or stop watching it.
  static int OnSocket(CURL*, curl_socket_t socket, int what, void* user, void*) {
    const int epoll = static_cast<Loop*>(user)->epoll_.get();
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nullptr);  // may be closed already: nothing to do
      return 0;
    }
    epoll_event event{};
    event.data.fd = socket;
    event.events =
        ((what & CURL_POLL_IN) != 0 ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) != 0 ? EPOLLOUT : 0u);
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 && errno == ENOENT &&
        epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0) {
      return -1;  // libcurl fails the transfers on this socket
    }
    return 0;
  }

  // CURLMOPT_TIMERFUNCTION: when libcurl wants CURL_SOCKET_TIMEOUT next (-1: no timer).
  static int OnTimer(CURLM*, long timeout_ms, void* user) {
    auto* loop = static_cast<Loop*>(user);
    if (timeout_ms < 0) {
      loop->timer_.reset();
    } else {
      loop->timer_ = absl::Now() + absl::Milliseconds(timeout_ms);
    }
    return 0;
  }

  const CurlHttpClientConfig config_;
  const EgressPolicy* const policy_;
  const OwnedFd epoll_;
  const OwnedFd wake_;  // an eventfd: Submit and Stop wake the loop
  MultiPtr multi_;
  std::thread thread_;

  absl::Mutex mutex_;
  std::deque<std::unique_ptr<Transfer>> queue_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;

  // Loop thread only.
  std::map<CURL*, std::unique_ptr<Transfer>> running_;
  std::optional<absl::Time> timer_;
  uint64_t started_count_ = 0;
  // Trickle pacing: the transfers to pause at the end of this iteration, and the paused ones in
  // the order their pauses end (every pause lasts config_.pacing.pause).
  std::vector<CURL*> to_pause_;
  struct Pause {
    absl::Time until;
    CURL* easy;
    uint64_t serial;
  };
  std::deque<Pause> paused_;
};

CurlHttpClient::CurlHttpClient(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

CurlHttpClient::~CurlHttpClient() { loop_->Stop(); }

absl::StatusOr<std::unique_ptr<CurlHttpClient>> CurlHttpClient::Create(CurlHttpClientConfig config,
                                                                       const EgressPolicy* policy) {
  if (policy == nullptr) {
    return absl::InvalidArgumentError("CurlHttpClient needs an egress policy");
  }
  if (config.pacing.below_bytes_per_second > 0 && config.pacing.pause <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("trickle pacing needs a positive pause");
  }
  InitLibraryOnce();
  MultiPtr multi(curl_multi_init());
  if (multi == nullptr) {
    return absl::InternalError("curl_multi_init failed");
  }
  auto loop = std::make_unique<Loop>(std::move(config), policy, std::move(multi));
  if (absl::Status started = loop->Start(); !started.ok()) {
    return started;
  }
  return std::unique_ptr<CurlHttpClient>(new CurlHttpClient(std::move(loop)));
}

void CurlHttpClient::Fetch(HttpRequest request, Callback callback) {
  loop_->Submit(std::move(request), std::move(callback));
}

}  // namespace portcullis::verifier::fetch
