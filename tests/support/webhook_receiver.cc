#include "tests/support/webhook_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace portcullis::testing {
namespace {

constexpr size_t kMaxHead = 16 * 1024;
constexpr size_t kMaxBody = 1 << 20;

void WriteAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      return;
    }
    sent += static_cast<size_t>(n);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<WebhookReceiver>> WebhookReceiver::Start() {
  std::unique_ptr<WebhookReceiver> receiver(new WebhookReceiver());
  receiver->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (receiver->listen_fd_ < 0) {
    return absl::UnavailableError("socket failed");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(receiver->listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(receiver->listen_fd_, 128) != 0 ||
      ::getsockname(receiver->listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(receiver->listen_fd_);
    return absl::UnavailableError("cannot listen on 127.0.0.1");
  }
  receiver->port_ = ntohs(address.sin_port);
  receiver->acceptor_ = std::thread([raw = receiver.get()] { raw->AcceptLoop(); });
  return receiver;
}

WebhookReceiver::~WebhookReceiver() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) {
    acceptor_.join();
  }
  ::close(listen_fd_);
  std::vector<std::thread> connections;
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (std::thread& thread : connections) {
    thread.join();
  }
}

std::string WebhookReceiver::Url(const std::string& path) const {
  return absl::StrCat("http://127.0.0.1:", port_, path);
}

void WebhookReceiver::Script(std::vector<ScriptedAnswer> answers) {
  absl::MutexLock lock(&mu_);
  for (ScriptedAnswer& answer : answers) {
    script_.push_back(std::move(answer));
  }
}

void WebhookReceiver::SetFallback(ScriptedAnswer answer) {
  absl::MutexLock lock(&mu_);
  fallback_ = std::move(answer);
}

std::vector<ReceivedRequest> WebhookReceiver::Requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

std::vector<ReceivedRequest> WebhookReceiver::WaitForRequests(size_t count,
                                                              absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const auto enough = [this, count]()
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requests_.size() >= count; };
  mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  return requests_;
}

void WebhookReceiver::AcceptLoop() {
  while (!stopping_) {
    const int connection = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    absl::MutexLock lock(&mu_);
    connections_.emplace_back([this, connection] {
      Serve(connection);
      ::close(connection);
    });
  }
}

void WebhookReceiver::Serve(int connection) {
  std::string data;
  size_t head_end = std::string::npos;
  size_t content_length = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  char buffer[8192];
  while (!stopping_ && absl::Now() < deadline) {
    if (head_end != std::string::npos && data.size() >= head_end + 4 + content_length) {
      break;
    }
    pollfd readable{connection, POLLIN, 0};
    if (::poll(&readable, 1, 100) <= 0) {
      continue;
    }
    const ssize_t n = ::recv(connection, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      return;
    }
    data.append(buffer, static_cast<size_t>(n));
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        if (data.size() > kMaxHead) {
          WriteAll(connection, "HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n");
          return;
        }
        continue;
      }
      const std::string head = data.substr(0, head_end);
      for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
        const size_t colon = line.find(':');
        if (colon != absl::string_view::npos &&
            absl::AsciiStrToLower(line.substr(0, colon)) == "content-length") {
          if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(colon + 1)),
                                &content_length) ||
              content_length > kMaxBody) {
            WriteAll(connection, "HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n");
            return;
          }
        }
      }
    }
  }
  if (head_end == std::string::npos || data.size() < head_end + 4 + content_length) {
    return;
  }
  ReceivedRequest request;
  request.at = absl::Now();
  const std::string head = data.substr(0, head_end);
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  std::vector<absl::string_view> start = absl::StrSplit(lines[0], ' ');
  request.method = std::string(start[0]);
  request.path = start.size() > 1 ? std::string(start[1]) : "";
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon != absl::string_view::npos) {
      request.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
          std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
  }
  request.body = data.substr(head_end + 4, content_length);
  ScriptedAnswer answer;
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(std::move(request));
    if (!script_.empty()) {
      answer = std::move(script_.front());
      script_.pop_front();
    } else {
      answer = fallback_;
    }
  }
  const absl::Time answer_at = absl::Now() + answer.delay;
  while (!stopping_ && absl::Now() < answer_at) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (stopping_ && answer.delay > absl::ZeroDuration()) {
    return;
  }
  std::string response = absl::StrCat("HTTP/1.1 ", answer.status, " Scripted\r\n");
  for (const auto& [name, value] : answer.headers) {
    absl::StrAppend(&response, name, ": ", value, "\r\n");
  }
  absl::StrAppend(&response, "Content-Length: 2\r\nConnection: close\r\n\r\nok");
  WriteAll(connection, response);
}

}  // namespace portcullis::testing
