#include "verifier-service/src/fetch/safe_fetcher.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace portcullis::verifier::fetch {
namespace {

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

absl::string_view FetchOutcomeName(FetchOutcome outcome) {
  switch (outcome) {
    case FetchOutcome::kOk:
      return "ok";
    case FetchOutcome::kBadUrl:
      return "bad_url";
    case FetchOutcome::kBadScheme:
      return "bad_scheme";
    case FetchOutcome::kForbiddenUrl:
      return "forbidden_url";
    case FetchOutcome::kForbiddenAddress:
      return "forbidden_address";
    case FetchOutcome::kDnsNotFound:
      return "dns_not_found";
    case FetchOutcome::kTooManyRedirects:
      return "too_many_redirects";
    case FetchOutcome::kBadRedirect:
      return "bad_redirect";
    case FetchOutcome::kTooLarge:
      return "too_large";
    case FetchOutcome::kUnsupportedContentType:
      return "unsupported_content_type";
    case FetchOutcome::kHttp4xx:
      return "http_4xx";
    case FetchOutcome::kGone:
      return "gone";
    case FetchOutcome::kTlsFailed:
      return "tls_failed";
    case FetchOutcome::kTimeout:
      return "timeout";
    case FetchOutcome::kConnectionFailed:
      return "connection_failed";
    case FetchOutcome::kDnsTemporary:
      return "dns_temporary";
    case FetchOutcome::kHttp5xx:
      return "http_5xx";
    case FetchOutcome::kHttp429:
      return "http_429";
    case FetchOutcome::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

absl::Duration MinimumHopTime(absl::Duration budget) {
  return std::min(absl::Milliseconds(250), budget / 10);
}

bool IsTransient(FetchOutcome outcome) {
  switch (outcome) {
    case FetchOutcome::kTimeout:
    case FetchOutcome::kConnectionFailed:
    case FetchOutcome::kDnsTemporary:
    case FetchOutcome::kHttp5xx:
    case FetchOutcome::kHttp429:
    case FetchOutcome::kCancelled:
      return true;
    default:
      return false;
  }
}

// Counted slots per key, each key with a FIFO of waiters. A waiter runs when a slot frees, on the
// thread that freed it.
class SafeFetcher::Limiter {
 public:
  using Granted = absl::AnyInvocable<void() &&>;

  Limiter(int per_host, int per_address, int in_flight, FetchObserver* observer,
          const Clock* clock)
      : per_host_(per_host),
        per_address_(per_address),
        in_flight_(in_flight),
        observer_(observer),
        clock_(clock) {}

  void AcquireGlobal(Granted granted) {
    Acquire(kGlobalKey, in_flight_, "global", std::move(granted));
  }
  void ReleaseGlobal() { Release(kGlobalKey, "global"); }
  void AcquireHost(const std::string& host, Granted granted) {
    Acquire(absl::StrCat("host:", host), per_host_, "host", std::move(granted));
  }
  void ReleaseHost(const std::string& host) { Release(absl::StrCat("host:", host), "host"); }
  void AcquireAddress(const std::string& address, Granted granted) {
    Acquire(absl::StrCat("address:", address), per_address_, "address", std::move(granted));
  }
  void ReleaseAddress(const std::string& address) {
    Release(absl::StrCat("address:", address), "address");
  }

 private:
  static constexpr char kGlobalKey[] = "global";

  struct Waiter {
    Granted granted;
    absl::Time since;
  };
  struct Slots {
    int in_use = 0;
    std::deque<Waiter> waiting;
  };

  void Acquire(const std::string& key, int limit, absl::string_view label, Granted granted) {
    {
      absl::MutexLock lock(&mutex_);
      Slots& slots = slots_[key];
      if (slots.in_use >= limit) {
        slots.waiting.push_back(Waiter{std::move(granted), clock_->Now()});
        observer_->OnQueued(label);
        return;
      }
      ++slots.in_use;
    }
    std::move(granted)();
  }

  void Release(const std::string& key, absl::string_view label) {
    std::optional<Waiter> next;
    {
      absl::MutexLock lock(&mutex_);
      const auto it = slots_.find(key);
      if (it == slots_.end()) {
        return;
      }
      Slots& slots = it->second;
      if (!slots.waiting.empty()) {
        next = std::move(slots.waiting.front());  // the slot passes on, in_use unchanged
        slots.waiting.pop_front();
      } else if (--slots.in_use == 0) {
        slots_.erase(it);
      }
    }
    if (!next.has_value()) {
      return;
    }
    observer_->OnDequeued(label, clock_->Now() - next->since);
    // A granted waiter can end its fetch at once (a refusal, a client shutting down) and so
    // release again: run such nested grants one after another here, not one inside the other,
    // so that a thousand waiters never make a thousand-deep stack.
    if (deferred_ != nullptr) {
      deferred_->push_back(std::move(next->granted));
      return;
    }
    std::deque<Granted> deferred;
    deferred_ = &deferred;
    std::move(next->granted)();
    while (!deferred.empty()) {
      Granted granted = std::move(deferred.front());
      deferred.pop_front();
      std::move(granted)();
    }
    deferred_ = nullptr;
  }

  // The grants waiting to run on this thread while an outer Release runs one.
  static thread_local std::deque<Granted>* deferred_;

  const int per_host_;
  const int per_address_;
  const int in_flight_;
  FetchObserver* const observer_;
  const Clock* const clock_;
  absl::Mutex mutex_;
  std::map<std::string, Slots> slots_ ABSL_GUARDED_BY(mutex_);
};

thread_local std::deque<SafeFetcher::Limiter::Granted>* SafeFetcher::Limiter::deferred_ = nullptr;

struct SafeFetcher::FetchState {
  std::string input;
  Callback done;
  absl::Time accepted;
  absl::Time deadline;
  FetchLimits limits;
  absl::Time lookup_started;
  std::optional<url::Url> current;
  int redirects = 0;
  // The host slot held by the hop in flight ("" when none).
  std::string host_slot;
  // The address slot held by the connection in flight ("" when none).
  std::string address_slot;
  bool holds_global = false;
  // Set for Post: the request is a POST of this, and any 2xx is kOk.
  std::optional<OutboundPost> post;
  FetchResult result;
};

namespace {
// Observes nothing: the observer when none is given.
FetchObserver* NoObserver() {
  static FetchObserver* observer = new FetchObserver();
  return observer;
}
}  // namespace

SafeFetcher::SafeFetcher(SafeFetcherConfig config, const EgressPolicy* policy, Resolver* resolver,
                         HttpClient* http, FetchObserver* observer, const Clock* clock)
    : config_(std::move(config)),
      policy_(policy),
      resolver_(resolver),
      http_(http),
      observer_(observer != nullptr ? observer : NoObserver()),
      clock_(clock != nullptr ? clock : RealClock()),
      limiter_(std::make_unique<Limiter>(config_.max_per_host, config_.max_per_address,
                                         config_.max_in_flight, observer_, clock_)) {}

SafeFetcher::~SafeFetcher() = default;

absl::StatusOr<std::unique_ptr<SafeFetcher>> SafeFetcher::Create(SafeFetcherConfig config,
                                                                 const EgressPolicy* policy,
                                                                 Resolver* resolver,
                                                                 HttpClient* http,
                                                                 FetchObserver* observer,
                                                                 const Clock* clock) {
  if (policy == nullptr || resolver == nullptr || http == nullptr) {
    return absl::InvalidArgumentError("SafeFetcher needs a policy, a resolver and an HTTP client");
  }
  if (config.max_redirects < 0 || config.total_timeout <= absl::ZeroDuration() ||
      config.max_body_bytes <= 0 || config.low_speed_bytes_per_second < 0 ||
      config.low_speed_time < absl::Seconds(1) || config.max_per_host < 1 ||
      config.max_per_address < 1 || config.max_in_flight < 1) {
    return absl::InvalidArgumentError(
        "fetch limits: max_redirects >= 0, a positive timeout and body cap, low_speed_time >= 1s, "
        "max_per_host, max_per_address and max_in_flight >= 1");
  }
  return std::unique_ptr<SafeFetcher>(
      new SafeFetcher(std::move(config), policy, resolver, http, observer, clock));
}

std::string SafeFetcher::RefusalReason(const net::IpAddress& address) const {
  const net::AddressVerdict verdict = policy_->address_policy().Classify(address);
  if (verdict.basis == net::AddressVerdict::Basis::kBuiltInRange && verdict.range != nullptr) {
    return std::string(verdict.range->name);
  }
  return std::string(net::BasisLabel(verdict.basis));
}

FetchOutcome SafeFetcher::RefusedUrl(absl::string_view stage, const absl::Status& status) const {
  FetchOutcome outcome = FetchOutcome::kBadUrl;
  std::string reason;
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented:
      outcome = FetchOutcome::kBadScheme;
      break;
    case absl::StatusCode::kPermissionDenied: {
      // The policy says what it refused: the address of an IP-literal host (a forbidden address),
      // or the URL itself (credentials, port, special-use names, ambiguous spellings).
      outcome = FetchOutcome::kForbiddenUrl;
      if (RefusalOf(status) == EgressRefusal::kAddress) {
        outcome = FetchOutcome::kForbiddenAddress;
        if (const std::optional<net::IpAddress> address = RefusedAddress(status)) {
          reason = RefusalReason(*address);
        }
      }
      break;
    }
    default:
      break;
  }
  observer_->OnRefused(stage, reason.empty() ? FetchOutcomeName(outcome) : reason);
  return outcome;
}

void SafeFetcher::Fetch(absl::string_view input, Callback done) {
  Fetch(input, max_limits(), std::move(done));
}

void SafeFetcher::Fetch(absl::string_view input, FetchLimits limits, Callback done) {
  Start(input, limits, std::nullopt, std::move(done));
}

void SafeFetcher::Post(absl::string_view input, OutboundPost post, FetchLimits limits,
                       Callback done) {
  Start(input, limits, std::move(post), std::move(done));
}

void SafeFetcher::Start(absl::string_view input, FetchLimits limits,
                        std::optional<OutboundPost> post, Callback done) {
  auto fetch = std::make_shared<FetchState>();
  fetch->post = std::move(post);
  fetch->limits.max_redirects = std::clamp(limits.max_redirects, 0, config_.max_redirects);
  fetch->limits.total_timeout =
      std::clamp(limits.total_timeout, absl::ZeroDuration(), config_.total_timeout);
  fetch->limits.max_body_bytes =
      std::clamp<int64_t>(limits.max_body_bytes, 0, config_.max_body_bytes);
  fetch->limits.media_types = std::move(limits.media_types);
  fetch->input = std::string(input);
  fetch->done = std::move(done);
  fetch->result.final_url = fetch->input;
  fetch->accepted = clock_->Now();
  observer_->OnFetchStarted();
  limiter_->AcquireGlobal([this, fetch]() mutable {
    fetch->holds_global = true;
    fetch->deadline = clock_->Now() + fetch->limits.total_timeout;
    absl::StatusOr<url::Url> url = policy_->ParseAndCheckUrl(fetch->input);
    if (!url.ok()) {
      Finish(fetch, RefusedUrl("url", url.status()), std::string(url.status().message()));
      return;
    }
    fetch->current = *std::move(url);
    StartHop(std::move(fetch));
  });
}

void SafeFetcher::StartHop(std::shared_ptr<FetchState> fetch) {
  fetch->result.final_url = fetch->current->href();
  const std::string host = fetch->current->host();
  limiter_->AcquireHost(host, [this, fetch, host]() mutable {
    fetch->host_slot = host;
    const absl::Duration left = fetch->deadline - clock_->Now();
    if (left < MinimumHopTime(fetch->limits.total_timeout) || left <= absl::ZeroDuration()) {
      Finish(fetch, FetchOutcome::kTimeout, "too little of the deadline left to start a hop");
      return;
    }
    if (IsIpLiteralHost(*fetch->current)) {
      // Checked by ParseAndCheckUrl already; connected to directly, never resolved.
      const std::optional<net::IpAddress> literal = net::IpAddress::FromUrl(*fetch->current);
      if (!literal.has_value()) {
        Finish(fetch, FetchOutcome::kBadUrl, "IP-literal host without an address");
        return;
      }
      Connect(std::move(fetch), *literal);
      return;
    }
    fetch->lookup_started = clock_->Now();
    resolver_->Resolve(host,
                       [this, fetch](absl::StatusOr<std::vector<net::IpAddress>> answers) mutable {
                         Resolved(std::move(fetch), std::move(answers));
                       });
  });
}

void SafeFetcher::Resolved(std::shared_ptr<FetchState> fetch,
                           absl::StatusOr<std::vector<net::IpAddress>> answers) {
  observer_->OnLookup(answers.status(), clock_->Now() - fetch->lookup_started);
  if (!answers.ok()) {
    const FetchOutcome outcome =
        answers.status().code() == absl::StatusCode::kNotFound    ? FetchOutcome::kDnsNotFound
        : answers.status().code() == absl::StatusCode::kCancelled ? FetchOutcome::kCancelled
        : answers.status().code() == absl::StatusCode::kInvalidArgument
            ? FetchOutcome::kBadUrl
            : FetchOutcome::kDnsTemporary;
    Finish(std::move(fetch), outcome, std::string(answers.status().message()));
    return;
  }
  // Refused when ANY answer is refused: a mixed answer is a rebinding tool.
  if (absl::Status status = policy_->CheckAddresses(*fetch->current, *answers); !status.ok()) {
    for (const net::IpAddress& address : *answers) {
      if (!policy_->CheckAddress(address).ok()) {
        observer_->OnRefused("dns", RefusalReason(address));
        break;
      }
    }
    Finish(std::move(fetch), FetchOutcome::kForbiddenAddress, std::string(status.message()));
    return;
  }
  // Pinned: this hop connects to this one checked answer and nowhere else.
  const net::IpAddress address = answers->front();
  Connect(std::move(fetch), address);
}

void SafeFetcher::Connect(std::shared_ptr<FetchState> fetch, const net::IpAddress& address) {
  const std::string key = address.ToString();
  limiter_->AcquireAddress(key, [this, fetch, address, key]() mutable {
    fetch->address_slot = key;
    ConnectPinned(std::move(fetch), address);
  });
}

void SafeFetcher::ConnectPinned(std::shared_ptr<FetchState> fetch, const net::IpAddress& address) {
  const absl::Duration left = fetch->deadline - clock_->Now();
  if (left < MinimumHopTime(fetch->limits.total_timeout) || left <= absl::ZeroDuration()) {
    Finish(std::move(fetch), FetchOutcome::kTimeout, "too little of the deadline left to connect");
    return;
  }
  HttpRequest request;
  request.url = *fetch->current;
  request.address = address;
  request.timeout = left;
  request.low_speed_bytes_per_second = config_.low_speed_bytes_per_second;
  request.low_speed_time = config_.low_speed_time;
  request.max_body_bytes = fetch->limits.max_body_bytes;
  request.body_media_types = fetch->limits.media_types;
  if (fetch->post.has_value()) {
    request.method = "POST";
    request.post_body = fetch->post->body;
    request.headers = fetch->post->headers;
    request.body_media_types.clear();  // a receiver's answer body is never read
  }
  http_->Fetch(std::move(request), [this, fetch](absl::StatusOr<HttpResponse> response) mutable {
    Responded(std::move(fetch), std::move(response));
  });
}

void SafeFetcher::Responded(std::shared_ptr<FetchState> fetch,
                            absl::StatusOr<HttpResponse> response) {
  limiter_->ReleaseAddress(fetch->address_slot);
  fetch->address_slot.clear();
  limiter_->ReleaseHost(fetch->host_slot);
  fetch->host_slot.clear();
  if (!response.ok()) {
    const absl::Status& status = response.status();
    FetchOutcome outcome = FetchOutcome::kConnectionFailed;
    switch (status.code()) {
      case absl::StatusCode::kPermissionDenied:
        outcome = FetchOutcome::kForbiddenAddress;
        observer_->OnRefused("connect", "connect_check");
        break;
      case absl::StatusCode::kResourceExhausted:
        outcome = FetchOutcome::kTooLarge;
        break;
      case absl::StatusCode::kDeadlineExceeded:
        outcome = FetchOutcome::kTimeout;
        break;
      case absl::StatusCode::kFailedPrecondition:
        outcome = FetchOutcome::kTlsFailed;
        break;
      case absl::StatusCode::kCancelled:
        outcome = FetchOutcome::kCancelled;
        break;
      default:
        break;
    }
    Finish(std::move(fetch), outcome, std::string(status.message()));
    return;
  }
  FetchResult& result = fetch->result;
  result.status = response->status;
  result.content_type = response->content_type;
  result.retry_after = response->retry_after;
  result.location = response->location;
  result.content_length = response->content_length;
  result.etag = response->etag;
  result.last_modified = response->last_modified;
  const int code = response->status;
  if (IsRedirect(code)) {
    if (!response->location.has_value()) {
      Finish(std::move(fetch), FetchOutcome::kBadRedirect,
             absl::StrCat("HTTP ", code, " without a Location"));
      return;
    }
    if (fetch->redirects >= fetch->limits.max_redirects) {
      const int max_redirects = fetch->limits.max_redirects;
      Finish(std::move(fetch), FetchOutcome::kTooManyRedirects,
             absl::StrCat("more than ", max_redirects, " redirects"));
      return;
    }
    ++fetch->redirects;
    result.redirects = fetch->redirects;
    const url::Url base = *fetch->current;
    absl::StatusOr<url::Url> next = policy_->ParseAndCheckUrl(*response->location, &base);
    if (!next.ok()) {
      Finish(std::move(fetch), RefusedUrl("redirect", next.status()),
             absl::StrCat("redirect to \"", *response->location,
                          "\" refused: ", next.status().message()));
      return;
    }
    fetch->current = *std::move(next);
    StartHop(std::move(fetch));
    return;
  }
  if (code >= 200 && code < 300 && fetch->post.has_value()) {
    Finish(std::move(fetch), FetchOutcome::kOk, "");
    return;
  }
  if (code >= 200 && code < 300) {
    const std::vector<std::string>& allowed = fetch->limits.media_types;
    if (response->body_skipped || std::find(allowed.begin(), allowed.end(),
                                            MediaTypeOf(response->content_type)) == allowed.end()) {
      Finish(std::move(fetch), FetchOutcome::kUnsupportedContentType,
             absl::StrCat("content type \"", response->content_type, "\" is not ",
                          absl::StrJoin(allowed, " or ")));
      return;
    }
    result.body = std::move(response->body);
    Finish(std::move(fetch), FetchOutcome::kOk, "");
    return;
  }
  const std::string detail = absl::StrCat("HTTP ", code);
  if (code == 410) {
    Finish(std::move(fetch), FetchOutcome::kGone, detail);
  } else if (code == 429) {
    Finish(std::move(fetch), FetchOutcome::kHttp429, detail);
  } else if (code >= 500 && code < 600) {
    Finish(std::move(fetch), FetchOutcome::kHttp5xx, detail);
  } else {
    Finish(std::move(fetch), FetchOutcome::kHttp4xx, detail);
  }
}

void SafeFetcher::Finish(std::shared_ptr<FetchState> fetch, FetchOutcome outcome,
                         std::string detail) {
  if (!fetch->address_slot.empty()) {
    limiter_->ReleaseAddress(fetch->address_slot);
    fetch->address_slot.clear();
  }
  if (!fetch->host_slot.empty()) {
    limiter_->ReleaseHost(fetch->host_slot);
    fetch->host_slot.clear();
  }
  fetch->result.outcome = outcome;
  fetch->result.detail = std::move(detail);
  if (outcome != FetchOutcome::kOk) {
    fetch->result.body.clear();
  }
  Callback done = std::move(fetch->done);
  FetchResult result = std::move(fetch->result);
  const absl::Time accepted = fetch->accepted;
  const bool holds_global = fetch->holds_global;
  fetch->holds_global = false;
  fetch.reset();
  // Every slot is given back before `done` runs: the caller may destroy the fetcher in it.
  if (holds_global) {
    limiter_->ReleaseGlobal();
  }
  observer_->OnFetchFinished(result, clock_->Now() - accepted);
  std::move(done)(std::move(result));
}

}  // namespace portcullis::verifier::fetch
