#include "verifier-service/src/fetch/cares_resolver.h"

#include <ares.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace portcullis::verifier::fetch {
namespace {

struct ChannelDeleter {
  void operator()(ares_channeldata* channel) const { ares_destroy(channel); }
};
using ChannelPtr = std::unique_ptr<ares_channeldata, ChannelDeleter>;

struct AddrinfoDeleter {
  void operator()(ares_addrinfo* info) const { ares_freeaddrinfo(info); }
};
using AddrinfoPtr = std::unique_ptr<ares_addrinfo, AddrinfoDeleter>;

absl::Status StatusFromAres(int code, absl::string_view host) {
  const std::string what = absl::StrCat("DNS lookup of ", host, ": ", ares_strerror(code));
  switch (code) {
    case ARES_ENOTFOUND:
    case ARES_ENODATA:
    case ARES_ENONAME:
      return absl::NotFoundError(what);
    case ARES_EBADNAME:
    case ARES_EBADSTR:
      return absl::InvalidArgumentError(what);
    case ARES_ECANCELLED:
    case ARES_EDESTRUCTION:
      return absl::CancelledError(what);
    default:  // SERVFAIL, REFUSED, timeouts, connection refused, bad responses
      return absl::UnavailableError(what);
  }
}

void InitLibraryOnce() {
  static std::once_flag once;
  std::call_once(once, [] { ares_library_init(ARES_LIB_INIT_ALL); });
}

}  // namespace

absl::StatusOr<std::vector<net::IpAddress>> AddressesOfAnswer(const ares_addrinfo* info,
                                                              absl::string_view host) {
  std::vector<net::IpAddress> addresses;
  for (const ares_addrinfo_node* node = info != nullptr ? info->nodes : nullptr; node != nullptr;
       node = node->ai_next) {
    const std::optional<net::IpAddress> address =
        net::IpAddress::FromSockaddr(node->ai_addr, node->ai_addrlen);
    if (address.has_value() &&
        std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) {
      addresses.push_back(*address);
    }
  }
  if (addresses.empty()) {
    return absl::NotFoundError(absl::StrCat("DNS lookup of ", host, ": no A or AAAA records"));
  }
  return addresses;
}

// Owns the channel and the thread. Everything but Submit and Stop runs on the loop thread.
class CaresResolver::Loop {
 public:
  Loop(int wake_fd, absl::Duration timeout) : wake_fd_(wake_fd), timeout_(timeout) {}

  ~Loop() {
    Stop();
    channel_.reset();
    close(wake_fd_);
  }

  // Creates the channel (its socket-state callback points at this Loop).
  absl::Status Init(const CaresResolverConfig& config) {
    ares_options options{};
    int mask = 0;
    options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_EDNS;
    mask |= ARES_OPT_FLAGS;
    options.ndomains = 0;
    options.domains = nullptr;
    mask |= ARES_OPT_DOMAINS;
    char lookups[] = "b";  // DNS only: never /etc/hosts
    options.lookups = lookups;
    mask |= ARES_OPT_LOOKUPS;
    options.tries = config.tries;
    mask |= ARES_OPT_TRIES;
    options.timeout = static_cast<int>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(config.timeout) / config.tries));
    mask |= ARES_OPT_TIMEOUTMS;
    if (config.socket_receive_buffer_bytes > 0) {
      options.socket_receive_buffer_size = config.socket_receive_buffer_bytes;
      mask |= ARES_OPT_SOCK_RCVBUF;
    }
    options.sock_state_cb = &Loop::OnSocketState;
    options.sock_state_cb_data = this;
    mask |= ARES_OPT_SOCK_STATE_CB;
    ares_channel channel = nullptr;
    const int init = ares_init_options(&channel, &options, mask);
    if (init != ARES_SUCCESS) {
      return absl::InternalError(absl::StrCat("c-ares initialization: ", ares_strerror(init)));
    }
    channel_.reset(channel);
    if (!config.servers.empty()) {
      const int set = ares_set_servers_ports_csv(channel, config.servers.c_str());
      if (set != ARES_SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat("DNS servers \"", config.servers, "\": ", ares_strerror(set)));
      }
    }
    return absl::OkStatus();
  }

  static void OnSocketState(void* data, ares_socket_t fd, int readable, int writable) {
    auto* loop = static_cast<Loop*>(data);
    if (!readable && !writable) {
      loop->sockets_.erase(fd);
      return;
    }
    loop->sockets_[fd] = static_cast<short>((readable ? POLLIN : 0) | (writable ? POLLOUT : 0));
  }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  void Submit(std::string host, Callback callback) {
    {
      absl::MutexLock lock(&mutex_);
      if (!stopping_) {
        queue_.push_back(Pending{std::move(host), std::move(callback)});
        callback = nullptr;
      }
    }
    if (callback != nullptr) {
      std::move(callback)(absl::CancelledError("DNS resolver is shutting down"));
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
  struct Pending {
    std::string host;
    Callback callback;
  };
  struct Lookup {
    std::string host;
    Callback callback;
    absl::Time deadline;
  };
  // Handed to c-ares as the callback argument; freed by OnAddrinfo, which c-ares calls exactly
  // once per query (also on cancellation and destruction).
  struct QueryArg {
    Loop* loop;
    uint64_t id;
  };

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(wake_fd_, &one, sizeof(one));
  }

  static void OnAddrinfo(void* arg, int status, int /*timeouts*/, ares_addrinfo* result) {
    AddrinfoPtr info(result);
    std::unique_ptr<QueryArg> query(static_cast<QueryArg*>(arg));
    Loop& loop = *query->loop;
    const auto it = loop.lookups_.find(query->id);
    if (it == loop.lookups_.end()) {
      return;  // Already answered: its deadline passed.
    }
    Lookup lookup = std::move(it->second);
    loop.lookups_.erase(it);
    if (status != ARES_SUCCESS) {
      std::move(lookup.callback)(StatusFromAres(status, lookup.host));
      return;
    }
    std::move(lookup.callback)(AddressesOfAnswer(info.get(), lookup.host));
  }

  void StartQueued() {
    std::deque<Pending> pending;
    {
      absl::MutexLock lock(&mutex_);
      pending.swap(queue_);
    }
    for (Pending& item : pending) {
      const uint64_t id = next_id_++;
      lookups_.emplace(id, Lookup{item.host, std::move(item.callback), absl::Now() + timeout_});
      ares_addrinfo_hints hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_flags = ARES_AI_NOSORT;
      hints.ai_socktype = SOCK_STREAM;
      // May call OnAddrinfo before returning (e.g. for a name c-ares refuses).
      ares_getaddrinfo(channel_.get(), item.host.c_str(), nullptr, &hints, &Loop::OnAddrinfo,
                       new QueryArg{this, id});
    }
  }

  // Answers lookups whose deadline has passed; returns the time until the next deadline.
  std::optional<absl::Duration> ExpireLookups() {
    const absl::Time now = absl::Now();
    std::optional<absl::Duration> next;
    for (auto it = lookups_.begin(); it != lookups_.end();) {
      if (it->second.deadline <= now) {
        Lookup lookup = std::move(it->second);
        it = lookups_.erase(it);
        std::move(lookup.callback)(absl::UnavailableError(absl::StrCat(
            "DNS lookup of ", lookup.host, ": no answer within ", absl::FormatDuration(timeout_))));
        continue;
      }
      const absl::Duration left = it->second.deadline - now;
      next = next.has_value() ? std::min(*next, left) : left;
      ++it;
    }
    return next;
  }

  void Run() {
    while (true) {
      bool stopping = false;
      {
        absl::MutexLock lock(&mutex_);
        stopping = stopping_;
      }
      if (stopping) {
        break;
      }
      StartQueued();
      std::optional<absl::Duration> wait = ExpireLookups();
      timeval max_tv{};
      timeval tv{};
      max_tv.tv_sec = 1;
      const timeval* ares_wait = ares_timeout(channel_.get(), &max_tv, &tv);
      absl::Duration poll_wait = absl::DurationFromTimeval(*ares_wait);
      if (wait.has_value()) {
        poll_wait = std::min(poll_wait, *wait);
      }
      std::vector<pollfd> fds;
      fds.push_back(pollfd{wake_fd_, POLLIN, 0});
      for (const auto& [fd, events] : sockets_) {
        fds.push_back(pollfd{fd, events, 0});
      }
      const int timeout_ms = static_cast<int>(std::max<int64_t>(
          0, absl::ToInt64Milliseconds(absl::Ceil(poll_wait, absl::Milliseconds(1)))));
      const int ready = poll(fds.data(), fds.size(), timeout_ms);
      if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t read_bytes = read(wake_fd_, &count, sizeof(count));
      }
      for (size_t i = 1; ready > 0 && i < fds.size(); ++i) {
        if (fds[i].revents == 0) {
          continue;
        }
        const bool readable = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
        const bool writable = (fds[i].revents & POLLOUT) != 0;
        ares_process_fd(channel_.get(), readable ? fds[i].fd : ARES_SOCKET_BAD,
                        writable ? fds[i].fd : ARES_SOCKET_BAD);
      }
      ares_process_fd(channel_.get(), ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // c-ares' own timeouts
    }
    // Answer everything still open: c-ares calls OnAddrinfo with ARES_ECANCELLED.
    ares_cancel(channel_.get());
    std::deque<Pending> pending;
    {
      absl::MutexLock lock(&mutex_);
      pending.swap(queue_);
    }
    for (Pending& item : pending) {
      std::move(item.callback)(absl::CancelledError("DNS resolver is shutting down"));
    }
    for (auto& [id, lookup] : lookups_) {
      std::move(lookup.callback)(absl::CancelledError("DNS resolver is shutting down"));
    }
    lookups_.clear();
  }

  ChannelPtr channel_;
  const int wake_fd_;
  const absl::Duration timeout_;
  std::thread thread_;

  absl::Mutex mutex_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;

  // Loop thread only.
  std::map<uint64_t, Lookup> lookups_;
  std::map<int, short> sockets_;
  uint64_t next_id_ = 1;
};

CaresResolver::CaresResolver(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

CaresResolver::~CaresResolver() { loop_->Stop(); }

absl::StatusOr<std::unique_ptr<CaresResolver>> CaresResolver::Create(CaresResolverConfig config) {
  if (config.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("DNS timeout must be positive");
  }
  if (config.tries < 1) {
    return absl::InvalidArgumentError("DNS tries must be at least 1");
  }
  InitLibraryOnce();
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) {
    return absl::InternalError("eventfd failed");
  }

  auto loop = std::make_unique<Loop>(wake_fd, config.timeout);
  if (absl::Status status = loop->Init(config); !status.ok()) {
    return status;
  }
  loop->Start();
  return std::unique_ptr<CaresResolver>(new CaresResolver(std::move(loop)));
}

void CaresResolver::Resolve(absl::string_view host, Callback callback) {
  loop_->Submit(std::string(host), std::move(callback));
}

}  // namespace portcullis::verifier::fetch
