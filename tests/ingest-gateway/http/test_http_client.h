#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"

// A blocking HTTP/1.1 client over loopback for the gateway's tests: raw bytes in, parsed
// responses out, so tests can also send what no well-behaved client would.
namespace portcullis::gateway::testing {

struct TestResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // Names lowercased.
  std::string body;
  bool keep_alive = false;

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? "" : it->second;
  }
};

class TestConnection {
 public:
  // Connects to 127.0.0.1:`port` (from `source_address` when given, e.g. "127.0.0.2": any
  // 127.x address is local on Linux); the connect and each read give up after
  // `receive_timeout`.
  explicit TestConnection(uint16_t port, absl::Duration receive_timeout = absl::Seconds(5),
                          const std::string& source_address = "");

  bool connected() const { return connected_; }

  // Writes raw bytes; false on error.
  bool Send(absl::string_view bytes);

  // Reads one response; nullopt on error, EOF or timeout.
  std::optional<TestResponse> ReadResponse();

  // Sends a request and reads its response.
  std::optional<TestResponse> Request(absl::string_view method, absl::string_view target,
                                      absl::string_view body = "",
                                      absl::string_view extra_headers = "");

  // True when the server closes the connection (EOF or reset) within the receive timeout;
  // discards anything read before that.
  bool WaitForClose();

  // Closes our side, as a well-behaved client does after Connection: close.
  void Close();

  // Reads exactly what is available up to `bytes` (for interim responses).
  std::string ReadSome(size_t bytes);

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_{io_};
  std::string buffered_;
  bool connected_ = false;
};

// A full request text.
std::string RequestText(absl::string_view method, absl::string_view target,
                        absl::string_view body = "", absl::string_view extra_headers = "");

// A port on 127.0.0.1 with nothing listening (bound, then released).
uint16_t UnusedPort();

}  // namespace portcullis::gateway::testing
