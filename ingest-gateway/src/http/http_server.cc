#include "ingest-gateway/src/http/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "boost/asio/bind_executor.hpp"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/crypto/random.h"
#include "common/lifecycle/thread_name.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/http/connection_limits.h"
#include "ingest-gateway/src/http/request_reader.h"

namespace portcullis::gateway::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// How long a closing connection keeps reading (and discarding) what the client still sends, so
// that our last response is not destroyed by a TCP reset.
constexpr absl::Duration kMaxLinger = absl::Seconds(2);
// A refused connection's response write and linger: a peer that never reads costs little.
constexpr absl::Duration kRefusalTimeout = absl::Seconds(1);
constexpr size_t kReadChunk = 4096;
// Reads after the first byte (Beast's own read loop uses up to 64 KiB).
constexpr size_t kBodyReadChunk = 65536;
constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

std::chrono::steady_clock::duration ToSteady(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(d));
}

class Session;

// What the listener and every session share. Outlives the io_context (sessions hold it).
struct ServerState {
  ServerState(HttpServerOptions server_options, Handler server_handler)
      : options(std::move(server_options)),
        handler(std::move(server_handler)),
        limits({.max_total = options.max_connections,
                .max_per_address = options.max_connections_per_address,
                .exempt = options.per_address_exempt}) {}

  const HttpServerOptions options;
  const Handler handler;
  std::atomic<bool> draining{false};

  std::mutex mu;
  std::condition_variable sessions_changed;
  // Every session, by id (rejected ones too, so that Stop can close them).
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions;
  // Sessions that count against max_connections and max_connections_per_address (all but
  // refused ones).
  ConnectionLimits limits;
  uint64_t next_id = 1;

  void Unregister(uint64_t id, ConnectionLimits::Slot* slot) {
    std::lock_guard<std::mutex> lock(mu);
    sessions.erase(id);
    limits.Release(slot);
    sessions_changed.notify_all();
  }
};

// A connection. Respond reaches it through a weak reference (ResponseTarget) and the number of the
// request it answers, so an answer that comes late, twice, or after the connection moved on to its
// next request is dropped here, on the connection's strand.
class Session final : public ResponseTarget, public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerState> state, uint64_t id,
          ConnectionLimits::Slot slot, std::string client_address,
          std::chrono::steady_clock::time_point accepted_at)
      : registration_{std::move(state), id, std::move(slot)},
        stream_(std::move(socket)),
        client_address_(std::move(client_address)),
        accepted_at_(accepted_at),
        reader_({.max_body_bytes = options().max_body_bytes,
                 .max_header_bytes = options().max_header_bytes,
                 .body_limit_for_path = options().body_limit_for_path}) {}

  // Reads and answers requests until the connection closes.
  void Run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(true); });
  }

  // Answers `answer` (kServerBusy, kTooManyConnections) without reading anything, then closes;
  // the write and the linger after it are short.
  void Reject(Answer answer) {
    net::dispatch(stream_.get_executor(), [self = shared_from_this(), answer] {
      self->request_id_ = crypto::UniqueIdHex();
      self->close_after_response_ = true;
      self->refused_ = true;
      self->SendResponse(
          ErrorAnswer(answer, {.retry_after_seconds = self->options().retry_after_seconds}));
    });
  }

  // Drain: closes the connection now when it is between requests; otherwise the response in
  // progress will say Connection: close.
  void OnDrain() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->phase_ == Phase::kIdle) {
        self->Close();
      }
    });
  }

  void ForceClose() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Close(); });
  }

  // Called by Respond from any thread.
  void Deliver(uint64_t request, HttpResponse response) override {
    net::post(stream_.get_executor(), [self = shared_from_this(), request,
                                       response = std::move(response)]() mutable {
      if (self->phase_ != Phase::kHandling || self->closed_ || request != self->request_number_) {
        return;
      }
      self->keep_self_.reset();
      self->SendResponse(std::move(response));
    });
  }

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kClosing };

  ServerState& state() const { return *registration_.state; }
  const HttpServerOptions& options() const { return state().options; }

  void ReadRequest(bool first) {
    if (closed_) {
      return;
    }
    if (!first && state().draining.load()) {
      // Between requests while draining: like an idle connection, closed at once.
      Close();
      return;
    }
    reader_.Start();
    request_id_.clear();
    request_keep_alive_ = false;
    close_after_response_ = false;
    if (reader_.HasBufferedBytes()) {
      // Pipelined bytes already here: the request has started.
      phase_ = Phase::kReading;
      stream_.expires_at(std::chrono::steady_clock::now() + ToSteady(options().read_timeout));
      Advance(reader_.Parse());
      return;
    }
    // Wait for the first byte: on a new connection within the read timeout counted from the
    // accept, on a keep-alive connection within the idle timeout.
    phase_ = Phase::kIdle;
    if (first) {
      stream_.expires_at(accepted_at_ + ToSteady(options().read_timeout));
    } else {
      stream_.expires_after(ToSteady(options().idle_timeout));
    }
    const absl::Span<char> room = reader_.Prepare(kReadChunk);
    stream_.async_read_some(
        net::buffer(room.data(), room.size()),
        [self = shared_from_this(), first](beast::error_code ec, size_t n) {
          if (ec) {
            self->Close();
            return;
          }
          self->phase_ = Phase::kReading;
          self->stream_.expires_at((first ? self->accepted_at_ : std::chrono::steady_clock::now()) +
                                   ToSteady(self->options().read_timeout));
          self->Advance(self->reader_.Received(n));
        });
  }

  // Does what the reader says next.
  void Advance(ReadStep step) {
    switch (step) {
      case ReadStep::kNeedMore:
        ReadMore();
        return;
      case ReadStep::kSendContinue:
        net::async_write(stream_, net::buffer(kContinue, sizeof(kContinue) - 1),
                         [self = shared_from_this()](beast::error_code write_ec, size_t) {
                           if (write_ec) {
                             self->Close();
                             return;
                           }
                           self->Advance(self->reader_.Parse());
                         });
        return;
      case ReadStep::kRequest:
        OnRequest(reader_.TakeRequest());
        return;
      case ReadStep::kRefuse:
        request_id_ = reader_.request_id();
        SendRefusal(reader_.refusal());
        return;
      case ReadStep::kClose:
        Close();
        return;
    }
  }

  void ReadMore() {
    const absl::Span<char> room = reader_.Prepare(kBodyReadChunk);
    stream_.async_read_some(net::buffer(room.data(), room.size()),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec == net::error::eof) {
                                self->Advance(self->reader_.ReceivedEnd());
                              } else if (ec) {
                                self->OnSocketError(ec);
                              } else {
                                self->Advance(self->reader_.Received(n));
                              }
                            });
  }

  // Timeout, reset, cancel: the connection goes without an answer.
  void OnSocketError(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      logging::Debug("request_id={} {} connection from {} timed out while reading",
                     reader_.request_id().empty() ? "-" : reader_.request_id(), options().name,
                     client_address_);
    }
    Close();
  }

  // A request the server answers itself (400, 413, 431), then closes.
  void SendRefusal(Answer answer) {
    if (options().on_protocol_error) {
      options().on_protocol_error(RowFor(answer).status);
    }
    close_after_response_ = (RowFor(answer).headers & kClose) != 0;
    SendResponse(ErrorAnswer(answer));
  }

  void OnRequest(HttpRequest request) {
    request.client_address = client_address_;
    request_id_ = request.request_id;
    request_keep_alive_ = reader_.keep_alive();
    request_version_ = reader_.version();
    request_method_ = request.method;
    request_path_ = request.path;

    phase_ = Phase::kHandling;
    stream_.expires_never();
    keep_self_ = shared_from_this();
    ++request_number_;
    Dispatch(state().handler, std::move(request), request_id_,
             Respond::ToTarget(weak_from_this(), request_number_));
  }

  void SendResponse(HttpResponse response) {
    if (closed_) {
      return;
    }
    const bool keep_alive =
        request_keep_alive_ && !close_after_response_ && !state().draining.load();
    response_.emplace();
    response_->version(request_version_);
    response_->result(static_cast<unsigned>(response.status));
    for (const auto& [name, value] : response.headers.fields()) {
      response_->insert(beast::string_view(name.data(), name.size()),
                        beast::string_view(value.data(), value.size()));
    }
    response_->set("X-Request-Id", request_id_);
    response_->keep_alive(keep_alive);
    response_->body() = std::move(response.body);
    response_->prepare_payload();
    // One access line per request: at info for server errors, at debug otherwise, so that a
    // busy gateway does not spend its time writing stderr.
    if (!request_method_.empty() && response.status >= 500) {
      logging::Info("request_id={} {} {} {} status={} client={}", request_id_, options().name,
                    request_method_, absl::CHexEscape(request_path_), response.status,
                    client_address_);
    } else if (!request_method_.empty()) {
      logging::Debug("request_id={} {} {} {} status={} client={}", request_id_, options().name,
                     request_method_, absl::CHexEscape(request_path_), response.status,
                     client_address_);
    }
    phase_ = Phase::kWriting;
    stream_.expires_after(ToSteady(refused_ ? kRefusalTimeout : options().write_timeout));
    bhttp::async_write(stream_, *response_,
                       [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                         self->response_.reset();
                         self->request_method_.clear();
                         if (ec) {
                           self->Close();
                         } else if (!keep_alive) {
                           self->GracefulClose();
                         } else {
                           self->ReadRequest(false);
                         }
                       });
  }

  // Sends FIN, then reads and discards what the client still sends for a short while, so the
  // client can read our last response before the connection goes.
  void GracefulClose() {
    if (closed_) {
      return;
    }
    phase_ = Phase::kClosing;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(
        ToSteady(refused_ ? kRefusalTimeout : std::min(kMaxLinger, options().read_timeout)));
    buffer_.consume(buffer_.size());
    Discard();
  }

  void Discard() {
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->buffer_.consume(n);
                              if (ec) {
                                self->Close();
                                return;
                              }
                              self->Discard();
                            });
  }

  void Close() {
    keep_self_.reset();
    if (closed_) {
      return;
    }
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  // The session's place in the server (state() reads the server's state through it). Every way
  // a connection ends (error, timeout, drain, stop) ends in this destructor: its slot is given
  // back and the server stops waiting for it. A session may be destroyed on any thread (a
  // Respond called on another thread can hold it last), and ~BeastHttpServer destroys the
  // io_context once every session is unregistered, so this member is declared first: destroyed
  // last, after the socket and timers that belong to that io_context.
  struct Registration {
    std::shared_ptr<ServerState> state;
    uint64_t id;
    // Not counted for connections refused for being over a limit.
    ConnectionLimits::Slot slot;
    ~Registration() { state->Unregister(id, &slot); }
  };
  Registration registration_;
  beast::tcp_stream stream_;
  const std::string client_address_;
  const std::chrono::steady_clock::time_point accepted_at_;

  RequestReader reader_;
  // Discarded bytes while lingering.
  beast::flat_buffer buffer_;
  std::optional<bhttp::response<bhttp::string_body>> response_;
  Phase phase_ = Phase::kIdle;
  bool closed_ = false;
  std::string request_id_;
  // Counts the requests handed to the handler; a Respond answers only its own.
  uint64_t request_number_ = 0;
  std::string request_method_;
  std::string request_path_;
  bool request_keep_alive_ = false;
  unsigned request_version_ = 11;
  bool close_after_response_ = false;
  // Refused for being over a connection limit: short write timeout and linger.
  bool refused_ = false;
  // Keeps the session alive while a handler works on its request (a Respond only holds a weak
  // reference, so no handler keeps a session beyond the server; see ~BeastHttpServer).
  std::shared_ptr<Session> keep_self_;
};

class BeastHttpServer final : public HttpServer {
 public:
  BeastHttpServer(std::shared_ptr<ServerState> state) : state_(std::move(state)) {}

  // A session must not be destroyed after the io_context its socket belongs to. After Stop, a
  // session is held by what is queued on the io_context, or for a moment by a Respond being called
  // on another thread, which may queue its answer after Stop's last poll or drop the last
  // reference: close and run what is queued until every session has unregistered (the last step
  // of its destruction, wherever it runs). Whatever is left after the deadline (nothing, unless a
  // handler never returns) goes with the io_context's queue.
  ~BeastHttpServer() override {
    Stop();
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (!AllSessionsGone() && absl::Now() < deadline) {
      for (const std::shared_ptr<Session>& session : LiveSessions()) {
        session->ForceClose();
      }
      ioc_.restart();
      ioc_.poll();
      std::unique_lock<std::mutex> lock(state_->mu);
      state_->sessions_changed.wait_for(lock, std::chrono::milliseconds(1),
                                        [&] { return state_->sessions.empty(); });
    }
  }

  absl::Status Bind() {
    try {
      const auto address = net::ip::make_address(state_->options.listen.host);
      const tcp::endpoint endpoint(address, state_->options.listen.port);
      acceptor_.open(endpoint.protocol());
      acceptor_.set_option(net::socket_base::reuse_address(true));
      acceptor_.bind(endpoint);
      acceptor_.listen(net::socket_base::max_listen_connections);
      bound_ = acceptor_.local_endpoint();
    } catch (const std::exception& e) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", state_->options.listen.ToString(), ": ", e.what()));
    }
    return absl::OkStatus();
  }

  void Start() override {
    DoAccept();
    const int threads = std::max(1, state_->options.io_threads);
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        lifecycle::NameCurrentThread("http-io");
        ioc_.run();
      });
    }
  }

  uint16_t port() const override { return bound_.port(); }

  std::string address() const override {
    config::HostPort host_port{bound_.address().to_string(), bound_.port()};
    return host_port.ToString();
  }

  size_t open_connections() const override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->limits.open();
  }

  bool Drain(absl::Time deadline) override {
    state_->draining.store(true);
    CloseAcceptor();
    for (const std::shared_ptr<Session>& session : LiveSessions()) {
      session->OnDrain();
    }
    bool drained = false;
    {
      std::unique_lock<std::mutex> lock(state_->mu);
      drained = state_->sessions_changed.wait_until(lock, absl::ToChronoTime(deadline),
                                                    [&] { return state_->limits.open() == 0; });
    }
    Stop();
    return drained;
  }

  void Stop() override {
    std::lock_guard<std::mutex> stop_lock(stop_mu_);
    if (stopped_) {
      return;
    }
    stopped_ = true;
    state_->draining.store(true);
    CloseAcceptor();
    for (const std::shared_ptr<Session>& session : LiveSessions()) {
      session->ForceClose();
    }
    work_guard_.reset();
    ioc_.stop();
    for (std::thread& thread : threads_) {
      thread.join();
    }
    threads_.clear();
    // No I/O thread runs any more: finish the closes posted above on this thread, so that every
    // socket is closed when Stop returns.
    beast::error_code ignored;
    acceptor_.close(ignored);
    retry_timer_.cancel();
    ioc_.restart();
    ioc_.poll();
  }

 private:
  // Unlike LiveSessions().empty(), false while a session is still being destroyed.
  bool AllSessionsGone() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->sessions.empty();
  }

  std::vector<std::shared_ptr<Session>> LiveSessions() {
    std::vector<std::shared_ptr<Session>> live;
    std::lock_guard<std::mutex> lock(state_->mu);
    for (const auto& [id, weak] : state_->sessions) {
      if (std::shared_ptr<Session> session = weak.lock()) {
        live.push_back(std::move(session));
      }
    }
    return live;
  }

  void CloseAcceptor() {
    net::dispatch(acceptor_strand_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
    });
  }

  void DoAccept() {
    acceptor_.async_accept(
        net::make_strand(ioc_),
        net::bind_executor(acceptor_strand_, [this](beast::error_code ec, tcp::socket socket) {
          OnAccept(ec, std::move(socket));
        }));
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
      return;
    }
    if (ec) {
      // Out of file descriptors and the like: pause briefly instead of spinning.
      logging::Warn("{} accept failed: {}", state_->options.name, ec.message());
      retry_timer_.expires_after(std::chrono::milliseconds(50));
      retry_timer_.async_wait(net::bind_executor(acceptor_strand_, [this](beast::error_code e) {
        if (!e) {
          DoAccept();
        }
      }));
      return;
    }
    if (state_->draining.load()) {
      beast::error_code ignored;
      socket.close(ignored);
      return;
    }
    beast::error_code endpoint_ec;
    const tcp::endpoint peer = socket.remote_endpoint(endpoint_ec);
    std::string client = endpoint_ec
                             ? std::string("unknown")
                             : config::HostPort{peer.address().to_string(), peer.port()}.ToString();
    const auto now = std::chrono::steady_clock::now();
    std::shared_ptr<Session> session;
    ConnectionLimits::Verdict verdict;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ConnectionLimits::Slot slot;
      verdict = state_->limits.Admit(client, &slot);
      const uint64_t id = state_->next_id++;
      session = std::make_shared<Session>(std::move(socket), state_, id, std::move(slot),
                                          std::move(client), now);
      state_->sessions.emplace(id, session);
    }
    switch (verdict) {
      case ConnectionLimits::Verdict::kAdmitted:
        session->Run();
        break;
      case ConnectionLimits::Verdict::kOverTotalLimit:
        if (state_->options.on_connection_rejected) {
          state_->options.on_connection_rejected();
        }
        session->Reject(Answer::kServerBusy);
        break;
      case ConnectionLimits::Verdict::kOverAddressLimit:
        if (state_->options.on_connection_rejected_per_address) {
          state_->options.on_connection_rejected_per_address();
        }
        session->Reject(Answer::kTooManyConnections);
        break;
    }
    DoAccept();
  }

  std::shared_ptr<ServerState> state_;
  // Declared after state_: destroyed first, while the state it may touch still exists.
  net::io_context ioc_;
  net::executor_work_guard<net::io_context::executor_type> work_guard_{ioc_.get_executor()};
  net::strand<net::io_context::executor_type> acceptor_strand_{ioc_.get_executor()};
  tcp::acceptor acceptor_{acceptor_strand_};
  net::steady_timer retry_timer_{acceptor_strand_};
  tcp::endpoint bound_;
  std::vector<std::thread> threads_;
  std::mutex stop_mu_;
  bool stopped_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(HttpServerOptions options,
                                                               Handler handler) {
  auto state = std::make_shared<ServerState>(std::move(options), std::move(handler));
  auto server = std::make_unique<BeastHttpServer>(std::move(state));
  if (absl::Status bound = server->Bind(); !bound.ok()) {
    return bound;
  }
  return server;
}

}  // namespace portcullis::gateway::http
