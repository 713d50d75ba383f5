#include "tests/support/fake_dns_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace portcullis::testing {
namespace {

constexpr int kTypeA = 1;
constexpr int kTypeAaaa = 28;
constexpr int kRcodeServFail = 2;
constexpr int kRcodeNxDomain = 3;

uint16_t Read16(const std::string& data, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(data[at]) << 8) |
                               static_cast<uint8_t>(data[at + 1]));
}

void Put16(std::string& out, uint16_t value) {
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value & 0xff));
}

void Put32(std::string& out, uint32_t value) {
  Put16(out, static_cast<uint16_t>(value >> 16));
  Put16(out, static_cast<uint16_t>(value & 0xffff));
}

struct Question {
  std::string name;  // lowercase, dotted, no trailing dot
  int type = 0;
  size_t end = 0;  // offset just past the question
};

std::optional<Question> ParseQuestion(const std::string& query) {
  if (query.size() < 12 || Read16(query, 4) < 1) {
    return std::nullopt;
  }
  Question question;
  size_t at = 12;
  while (true) {
    if (at >= query.size()) {
      return std::nullopt;
    }
    const uint8_t length = static_cast<uint8_t>(query[at++]);
    if (length == 0) {
      break;
    }
    if ((length & 0xc0) != 0 || at + length > query.size()) {
      return std::nullopt;
    }
    if (!question.name.empty()) {
      question.name.push_back('.');
    }
    question.name += absl::AsciiStrToLower(query.substr(at, length));
    at += length;
  }
  if (at + 4 > query.size()) {
    return std::nullopt;
  }
  question.type = Read16(query, at);
  question.end = at + 4;
  return question;
}

int Bind(int type) {
  const int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -1;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  return fd;
}

bool ReadExactly(int fd, char* data, size_t length) {
  size_t done = 0;
  while (done < length) {
    const ssize_t got = recv(fd, data + done, length - done, 0);
    if (got <= 0) {
      return false;
    }
    done += static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FakeDnsServer>> FakeDnsServer::Start() {
  // One port for both: take a free TCP port, then the same UDP port (retried when some UDP
  // socket already holds it).
  for (int attempt = 0; attempt < 50; ++attempt) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    const int tcp = Bind(SOCK_STREAM);
    if (tcp < 0 || bind(tcp, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(tcp, 16) != 0) {
      if (tcp >= 0) {
        close(tcp);
      }
      return absl::InternalError(absl::StrCat("fake DNS: TCP bind: ", strerror(errno)));
    }
    socklen_t length = sizeof(address);
    getsockname(tcp, reinterpret_cast<sockaddr*>(&address), &length);
    const int udp = Bind(SOCK_DGRAM);
    const int buffer_size = 4 << 20;
    if (udp >= 0) {
      setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &buffer_size, sizeof(buffer_size));
    }
    if (udp < 0 || bind(udp, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      if (udp >= 0) {
        close(udp);
      }
      close(tcp);
      continue;
    }
    std::unique_ptr<FakeDnsServer> server(new FakeDnsServer(udp, tcp, ntohs(address.sin_port)));
    server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
    return server;
  }
  return absl::InternalError("fake DNS: no port free for both UDP and TCP");
}

FakeDnsServer::FakeDnsServer(int udp_fd, int tcp_fd, uint16_t port)
    : udp_fd_(udp_fd), tcp_fd_(tcp_fd), port_(port) {}

FakeDnsServer::~FakeDnsServer() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
  }
  close(udp_fd_);
  close(tcp_fd_);
}

std::string FakeDnsServer::address() const { return absl::StrCat("127.0.0.1:", port_); }

void FakeDnsServer::Set(const std::string& name, std::vector<FakeDnsAnswer> script) {
  absl::MutexLock lock(&mutex_);
  table_[absl::AsciiStrToLower(name)] = std::move(script);
}

void FakeDnsServer::Set(const std::string& name, std::vector<net::IpAddress> addresses) {
  Set(name, std::vector<FakeDnsAnswer>{FakeDnsAnswer::Addresses(std::move(addresses))});
}

int FakeDnsServer::Queries(const std::string& name, int type) const {
  absl::MutexLock lock(&mutex_);
  int count = 0;
  for (const auto& [key, queries] : queries_) {
    if (key.first == absl::AsciiStrToLower(name) && (type == 0 || key.second == type)) {
      count += queries;
    }
  }
  return count;
}

int FakeDnsServer::TotalQueries() const {
  absl::MutexLock lock(&mutex_);
  return total_;
}

std::string FakeDnsServer::Answer(const std::string& query) {
  const std::optional<Question> question = ParseQuestion(query);
  if (!question.has_value()) {
    return "";
  }
  FakeDnsAnswer answer = FakeDnsAnswer::NxDomain();
  {
    absl::MutexLock lock(&mutex_);
    ++total_;
    const int index = queries_[{question->name, question->type}]++;
    const auto it = table_.find(question->name);
    if (it != table_.end() && !it->second.empty()) {
      answer = it->second[std::min<size_t>(static_cast<size_t>(index), it->second.size() - 1)];
    }
  }
  if (answer.kind == FakeDnsAnswer::Kind::kSilent) {
    return "";
  }
  int rcode = 0;
  std::vector<net::IpAddress> records;
  if (answer.kind == FakeDnsAnswer::Kind::kNxDomain) {
    rcode = kRcodeNxDomain;
  } else if (answer.kind == FakeDnsAnswer::Kind::kServFail) {
    rcode = kRcodeServFail;
  } else {
    for (const net::IpAddress& address : answer.addresses) {
      if ((question->type == kTypeA && address.is_ipv4()) ||
          (question->type == kTypeAaaa && address.is_ipv6())) {
        records.push_back(address);
      }
    }
  }
  std::string response;
  Put16(response, Read16(query, 0));  // id
  const uint16_t rd = Read16(query, 2) & 0x0100;
  Put16(response, static_cast<uint16_t>(0x8000 | 0x0400 | rd | 0x0080 | rcode));  // QR AA RD RA
  Put16(response, 1);
  Put16(response, static_cast<uint16_t>(records.size()));
  Put16(response, 0);
  Put16(response, 0);
  response.append(query, 12, question->end - 12);
  for (const net::IpAddress& address : records) {
    Put16(response, 0xc00c);  // the name of the question
    Put16(response, static_cast<uint16_t>(question->type));
    Put16(response, 1);  // IN
    Put32(response, 0);  // TTL 0: every lookup asks again
    if (address.is_ipv4()) {
      Put16(response, 4);
      Put32(response, address.ipv4());
    } else {
      Put16(response, 16);
      for (const uint16_t group : address.ipv6()) {
        Put16(response, group);
      }
    }
  }
  return response;
}

void FakeDnsServer::Serve() {
  while (true) {
    {
      absl::MutexLock lock(&mutex_);
      if (stopping_) {
        return;
      }
    }
    pollfd fds[2] = {{udp_fd_, POLLIN, 0}, {tcp_fd_, POLLIN, 0}};
    if (poll(fds, 2, 50) <= 0) {
      continue;
    }
    // Every datagram waiting, not one per wakeup: a burst of lookups must not overflow the buffer.
    while ((fds[0].revents & POLLIN) != 0) {
      char buffer[4096];
      sockaddr_storage from{};
      socklen_t from_length = sizeof(from);
      const ssize_t got = recvfrom(udp_fd_, buffer, sizeof(buffer), MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&from), &from_length);
      if (got <= 0) {
        break;
      }
      {
        const std::string response = Answer(std::string(buffer, static_cast<size_t>(got)));
        if (!response.empty()) {
          sendto(udp_fd_, response.data(), response.size(), 0, reinterpret_cast<sockaddr*>(&from),
                 from_length);
        }
      }
    }
    if ((fds[1].revents & POLLIN) != 0) {
      // One query per connection, answered in line (tests send few).
      const int connection = accept4(tcp_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) {
        continue;
      }
      timeval timeout{1, 0};
      setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      char length_bytes[2];
      while (ReadExactly(connection, length_bytes, 2)) {
        const size_t length =
            (static_cast<uint8_t>(length_bytes[0]) << 8) | static_cast<uint8_t>(length_bytes[1]);
        std::string query(length, '\0');
        if (!ReadExactly(connection, query.data(), length)) {
          break;
        }
        const std::string response = Answer(query);
        if (response.empty()) {
          continue;
        }
        std::string framed;
        Put16(framed, static_cast<uint16_t>(response.size()));
        framed += response;
        send(connection, framed.data(), framed.size(), MSG_NOSIGNAL);
      }
      close(connection);
    }
  }
}

}  // namespace portcullis::testing
