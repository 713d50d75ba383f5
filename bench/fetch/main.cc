// fetch_bench: fetches/s through SafeFetcher (egress policy + pinning + limiter + CurlHttpClient)
// against a loopback origin, next to raw libcurl multi fetching the same origin in the same run;
// then memory per in-flight fetch, with N fetches held open by a tarpit. Loopback only: the
// origin is 127.0.0.1 and the policy's allow list is 127.0.0.1/32, as for tests.
//
//   fetch_bench [--fetches=4000] [--concurrency=32] [--in_flight=1000] [--runs=5]
//
// Prints one line per run and the medians. Not run by ctest; see bench/README.md.
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/net/cidr.h"
#include "verifier-service/src/fetch/cares_resolver.h"
#include "verifier-service/src/fetch/curl_http_client.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::bench {
namespace {

namespace fetch = portcullis::verifier::fetch;

constexpr char kBody[] =
    "<!doctype html><html><head><title>bench</title></head><body><p>A page with a "
    "<a href=\"https://blog.example/post\">link</a>.</p></body></html>";

int Listen(uint16_t* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 4096) != 0) {
    std::perror("origin");
    std::exit(1);
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  return fd;
}

// One epoll thread: reads a request head, writes a small HTML page, closes. With `tarpit`, it
// accepts and holds every connection without answering.
class Origin {
 public:
  explicit Origin(bool tarpit) : tarpit_(tarpit) {
    listen_fd_ = Listen(&port_);
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    pipe2(wake_, O_CLOEXEC | O_NONBLOCK);
    Add(listen_fd_);
    Add(wake_[0]);
    response_ = absl::StrCat("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n",
                             "Content-Length: ", sizeof(kBody) - 1,
                             "\r\nConnection: close\r\n\r\n", kBody);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Origin() {
    (void)!write(wake_[1], "x", 1);
    thread_.join();
    for (int fd : held_) {
      close(fd);
    }
    close(listen_fd_);
    close(epoll_fd_);
    close(wake_[0]);
    close(wake_[1]);
  }
  uint16_t port() const { return port_; }
  int held() const { return held_count_.load(); }

 private:
  void Add(int fd) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }

  void Loop() {
    epoll_event events[256];
    while (true) {
      const int n = epoll_wait(epoll_fd_, events, 256, -1);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_[0]) {
          return;
        }
        if (fd == listen_fd_) {
          while (true) {
            const int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (connection < 0) {
              break;
            }
            if (tarpit_) {
              held_.push_back(connection);
              held_count_.store(static_cast<int>(held_.size()));
            } else {
              Add(connection);
            }
          }
          continue;
        }
        char buffer[4096];
        const ssize_t got = read(fd, buffer, sizeof(buffer));
        if (got > 0 && absl::string_view(buffer, got).find("\r\n\r\n") != absl::string_view::npos) {
          (void)!write(fd, response_.data(), response_.size());
        } else if (got > 0) {
          continue;  // A request head in pieces: never happens on loopback with curl.
        }
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        close(fd);
      }
    }
  }

  const bool tarpit_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::string response_;
  std::vector<int> held_;
  std::atomic<int> held_count_{0};
  std::thread thread_;
};

long RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return 0;
}

// Keeps `concurrency` fetches in flight until `total` finished; returns fetches per second.
// A callback starts the next fetch after deciding so under the lock, and touches nothing of
// this frame after the last one finished.
template <typename StartOne>
double Throughput(int total, int concurrency, StartOne start_one, int* failures) {
  absl::Mutex mu;
  absl::CondVar all_done;
  int started = 0;
  int finished = 0;
  int failed = 0;
  std::function<void()> start;
  start = [&] {
    start_one([&](bool ok) {
      bool more = false;
      {
        absl::MutexLock lock(&mu);
        ++finished;
        failed += ok ? 0 : 1;
        if (started < total) {
          ++started;
          more = true;
        }
        if (finished == total) {
          all_done.Signal();
        }
      }
      if (more) {
        start();
      }
    });
  };
  const absl::Time begin = absl::Now();
  int initial = 0;
  {
    absl::MutexLock lock(&mu);
    initial = std::min(concurrency, total);
    started = initial;
  }
  for (int i = 0; i < initial; ++i) {
    start();
  }
  absl::MutexLock lock(&mu);
  while (finished != total) {
    all_done.Wait(&mu);
  }
  *failures = failed;
  return total / absl::ToDoubleSeconds(absl::Now() - begin);
}

// Raw libcurl multi on one thread, the same transfer options that matter (new handle per fetch,
// no proxy, pinned with CURLOPT_RESOLVE), as the reference.
class RawCurl {
 public:
  RawCurl() : multi_(curl_multi_init()) {}
  ~RawCurl() { curl_multi_cleanup(multi_); }

  // Runs `total` GETs of `url`, `concurrency` at a time; fetches per second.
  double Run(const std::string& url, uint16_t port, int total, int concurrency, int* failures) {
    curl_slist* resolve =
        curl_slist_append(nullptr, absl::StrCat("127.0.0.1:", port, ":127.0.0.1").c_str());
    int started = 0;
    int running = 0;
    int failed = 0;
    const auto add = [&] {
      CURL* easy = curl_easy_init();
      curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
      curl_easy_setopt(easy, CURLOPT_RESOLVE, resolve);
      curl_easy_setopt(easy, CURLOPT_PROXY, "");
      curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
      curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 5000L);
      curl_easy_setopt(
          easy, CURLOPT_WRITEFUNCTION,
          +[](char*, size_t size, size_t count, void*) -> size_t { return size * count; });
      curl_multi_add_handle(multi_, easy);
      ++started;
    };
    const absl::Time begin = absl::Now();
    for (int i = 0; i < concurrency && started < total; ++i) {
      add();
    }
    int finished = 0;
    while (finished < total) {
      curl_multi_perform(multi_, &running);
      int queued = 0;
      while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
        if (message->msg != CURLMSG_DONE) {
          continue;
        }
        if (message->data.result != CURLE_OK) {
          ++failed;
        }
        curl_multi_remove_handle(multi_, message->easy_handle);
        curl_easy_cleanup(message->easy_handle);
        ++finished;
        if (started < total) {
          add();
        }
      }
      curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
    }
    curl_slist_free_all(resolve);
    *failures = failed;
    return total / absl::ToDoubleSeconds(absl::Now() - begin);
  }

 private:
  CURLM* multi_;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int IntFlag(int argc, char** argv, absl::string_view name, int fallback) {
  const std::string prefix = absl::StrCat("--", name, "=");
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg(argv[i]);
    int value = 0;
    if (absl::ConsumePrefix(&arg, prefix) && absl::SimpleAtoi(arg, &value) && value > 0) {
      return value;
    }
  }
  return fallback;
}

int Main(int argc, char** argv) {
  const int total = IntFlag(argc, argv, "fetches", 4000);
  const int concurrency = IntFlag(argc, argv, "concurrency", 32);
  const int in_flight = IntFlag(argc, argv, "in_flight", 1000);
  const int runs = IntFlag(argc, argv, "runs", 5);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  Origin origin(/*tarpit=*/false);
  Origin tarpit(/*tarpit=*/true);
  fetch::EgressPolicyConfig policy_config;
  policy_config.extra_allowed_ports = {origin.port(), tarpit.port()};
  policy_config.allow = {*net::Cidr::Parse("127.0.0.1/32")};
  const fetch::EgressPolicy policy = *fetch::EgressPolicy::Create(policy_config);
  std::unique_ptr<fetch::CaresResolver> resolver = *fetch::CaresResolver::Create({});
  std::unique_ptr<fetch::CurlHttpClient> http = *fetch::CurlHttpClient::Create({}, &policy);
  fetch::SafeFetcherConfig config;
  // One origin: the per-host and per-address limits would otherwise be what is measured.
  config.max_per_host = std::max(concurrency, in_flight);
  config.max_per_address = std::max(concurrency, in_flight);
  config.max_in_flight = std::max(concurrency, in_flight);
  config.total_timeout = absl::Seconds(30);
  config.low_speed_time = absl::Seconds(30);
  std::unique_ptr<fetch::SafeFetcher> fetcher =
      *fetch::SafeFetcher::Create(config, &policy, resolver.get(), http.get());
  const std::string url = absl::StrCat("http://127.0.0.1:", origin.port(), "/page");

  std::printf("fetch_bench: %d fetches per run, %d concurrent, %d runs, origin %s\n", total,
              concurrency, runs, url.c_str());
  std::vector<double> safe_rates;
  std::vector<double> raw_rates;
  for (int run = 0; run < runs; ++run) {
    int safe_failures = 0;
    const double safe = Throughput(
        total, concurrency,
        [&](auto done) {
          fetcher->Fetch(url, [done](fetch::FetchResult result) {
            done(result.outcome == fetch::FetchOutcome::kOk);
          });
        },
        &safe_failures);
    int raw_failures = 0;
    RawCurl raw;
    const double reference = raw.Run(url, origin.port(), total, concurrency, &raw_failures);
    std::printf("run %d: SafeFetcher %.0f fetches/s (%d failed), raw libcurl multi %.0f fetches/s "
                "(%d failed)\n",
                run + 1, safe, safe_failures, reference, raw_failures);
    safe_rates.push_back(safe);
    raw_rates.push_back(reference);
  }
  const double safe_median = Median(safe_rates);
  const double raw_median = Median(raw_rates);
  std::printf("median: SafeFetcher %.0f fetches/s, raw libcurl %.0f fetches/s (%.0f%%)\n",
              safe_median, raw_median, 100.0 * safe_median / raw_median);

  // Memory: `in_flight` fetches held open by the tarpit (connected, waiting for a response).
  const long before = RssKiB();
  std::atomic<int> done_count{0};
  const std::string tarpit_url = absl::StrCat("http://127.0.0.1:", tarpit.port(), "/slow");
  for (int i = 0; i < in_flight; ++i) {
    fetcher->Fetch(tarpit_url, [&done_count](fetch::FetchResult) { ++done_count; });
  }
  const absl::Time wait_until = absl::Now() + absl::Seconds(20);
  while (tarpit.held() < in_flight && absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::SleepFor(absl::Milliseconds(200));
  const long during = RssKiB();
  std::printf("in flight: %d fetches connected to the tarpit (%d finished early); RSS %ld KiB -> "
              "%ld KiB: %.1f KiB per in-flight fetch\n",
              tarpit.held(), done_count.load(), before, during,
              static_cast<double>(during - before) / std::max(1, tarpit.held()));
  // Stopping the client answers them kCancelled; the fetcher goes last (it borrows both).
  http.reset();
  resolver.reset();
  fetcher.reset();
  curl_global_cleanup();
  return 0;
}

}  // namespace
}  // namespace portcullis::bench

int main(int argc, char** argv) { return portcullis::bench::Main(argc, argv); }
