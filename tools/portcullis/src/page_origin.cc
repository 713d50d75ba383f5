#include "tools/portcullis/src/page_origin.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/ip_address.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

constexpr size_t kMaxRequestHead = 16 * 1024;
constexpr int kMaxConnections = 64;
constexpr int kReadTimeoutSeconds = 5;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 404:
      return "Not Found";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PageOrigin>> PageOrigin::Start(const std::string& host, int port) {
  absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(host);
  const bool loopback =
      address.ok() && (address->is_ipv4() ? (address->ipv4() >> 24) == 127
                                          : address->ipv6_high() == 0 && address->ipv6_low() == 1);
  if (!loopback) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", host, "' is not a loopback address literal (127.0.0.1, ::1)"));
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", port, " is out of range"));
  }
  std::unique_ptr<PageOrigin> origin(new PageOrigin());
  origin->host_ = host;
  const bool v6 = host.find(':') != std::string::npos;
  origin->listen_fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(origin->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage bound{};
  socklen_t length = 0;
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&bound);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr);
    length = sizeof(sockaddr_in6);
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&bound);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &in4->sin_addr);
    length = sizeof(sockaddr_in);
  }
  if (origin->listen_fd_ < 0 ||
      bind(origin->listen_fd_, reinterpret_cast<sockaddr*>(&bound), length) != 0 ||
      listen(origin->listen_fd_, 128) != 0) {
    const std::string why = std::strerror(errno);
    if (origin->listen_fd_ >= 0) {
      close(origin->listen_fd_);
      origin->listen_fd_ = -1;
    }
    return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port, ": ", why));
  }
  getsockname(origin->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  origin->port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  origin->acceptor_ = std::thread([raw = origin.get()] { raw->AcceptLoop(); });
  return origin;
}

PageOrigin::~PageOrigin() {
  stopping_ = true;
  if (listen_fd_ >= 0) {
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
  }
  if (acceptor_.joinable()) {
    acceptor_.join();
  }
  std::vector<std::thread> connections;
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (std::thread& thread : connections) {
    thread.join();
  }
}

std::string PageOrigin::origin() const {
  return host_.find(':') != std::string::npos ? absl::StrCat("http://[", host_, "]:", port_)
                                              : absl::StrCat("http://", host_, ":", port_);
}

void PageOrigin::SetRoute(const std::string& path, PageResponse response) {
  absl::MutexLock lock(&mu_);
  routes_[path] = std::move(response);
}

int PageOrigin::requests(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  const auto it = requests_.find(path);
  return it == requests_.end() ? 0 : it->second;
}

void PageOrigin::AcceptLoop() {
  while (!stopping_) {
    const int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (stopping_) {
        return;
      }
      continue;
    }
    if (active_.load() >= kMaxConnections) {
      close(connection);
      continue;
    }
    ++active_;
    absl::MutexLock lock(&mu_);
    connections_.emplace_back([this, connection] {
      Serve(connection);
      --active_;
    });
  }
}

void PageOrigin::Serve(int connection) {
  timeval timeout{kReadTimeoutSeconds, 0};
  setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestHead) {
    const ssize_t got = recv(connection, buffer, sizeof(buffer), 0);
    if (got <= 0) {
      close(connection);
      return;
    }
    request.append(buffer, static_cast<size_t>(got));
  }
  // "GET /path?query HTTP/1.1"
  const std::vector<std::string> line =
      absl::StrSplit(request.substr(0, request.find("\r\n")), ' ');
  std::string path = line.size() >= 2 ? line[1] : "/";
  path = path.substr(0, path.find('?'));
  PageResponse response = PageResponse::Status(404);
  {
    absl::MutexLock lock(&mu_);
    ++requests_[path];
    const auto it = routes_.find(path);
    if (it != routes_.end()) {
      response = it->second;
    }
  }
  std::string head = absl::StrCat("HTTP/1.1 ", response.status, " ", Reason(response.status),
                                  "\r\nConnection: close\r\n");
  for (const auto& [name, value] : response.headers) {
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  }
  absl::StrAppend(&head, "Content-Length: ", response.body.size(), "\r\n\r\n");
  if (SendAll(connection, head) && !(line.size() >= 1 && line[0] == "HEAD")) {
    SendAll(connection, response.body);
  }
  close(connection);
}

int RunDemoServe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // args: "demo" "serve" HOST:PORT PATH=FILE...
  if (args.size() < 4) {
    err << "error: usage: portcullis demo serve HOST:PORT PATH=FILE...\n";
    return kExitUsage;
  }
  const std::string& listen = args[2];
  const size_t colon = listen.rfind(':');
  int port = 0;
  std::string host = listen.substr(0, colon);
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port)) {
    err << "error: '" << listen << "' is not HOST:PORT on loopback, e.g. 127.0.0.1:8081\n";
    return kExitUsage;
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::vector<std::pair<std::string, PageResponse>> routes;
  for (size_t i = 3; i < args.size(); ++i) {
    const size_t equals = args[i].find('=');
    if (equals == std::string::npos || equals == 0 || args[i][0] != '/') {
      err << "error: '" << args[i] << "' is not PATH=FILE (PATH starts with /)\n";
      return kExitUsage;
    }
    std::ifstream file(args[i].substr(equals + 1), std::ios::binary);
    if (!file) {
      err << "error: cannot read " << args[i].substr(equals + 1) << "\n";
      return kExitFailed;
    }
    std::stringstream body;
    body << file.rdbuf();
    routes.emplace_back(args[i].substr(0, equals), PageResponse::Html(body.str()));
  }
  // Wait for SIGINT/SIGTERM on this thread (blocked before any thread starts).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::StatusOr<std::unique_ptr<PageOrigin>> origin = PageOrigin::Start(host, port);
  if (!origin.ok()) {
    err << "error: " << origin.status().message() << "\n";
    return absl::IsInvalidArgument(origin.status()) ? kExitUsage : kExitFailed;
  }
  for (auto& [path, response] : routes) {
    (*origin)->SetRoute(path, std::move(response));
  }
  out << "serving " << (*origin)->origin() << std::endl;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  return kExitOk;
}

}  // namespace portcullis::cli
