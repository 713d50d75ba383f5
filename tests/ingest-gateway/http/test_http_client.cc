#include "tests/ingest-gateway/http/test_http_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/buffer.hpp"
#include "boost/asio/connect.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/http.hpp"

namespace portcullis::gateway::testing {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

TestConnection::TestConnection(uint16_t port, absl::Duration receive_timeout,
                               const std::string& source_address) {
  boost::system::error_code ec;
  socket_.open(tcp::v4(), ec);
  if (!ec && !source_address.empty()) {
    const net::ip::address source = net::ip::make_address(source_address, ec);
    if (!ec) {
      socket_.bind(tcp::endpoint(source, 0), ec);
    }
  }
  if (ec) {
    return;
  }
  // The connect gives up after `receive_timeout` too: a listener that drops the SYN would
  // otherwise hold the test for the kernel's two minutes of SYN retries.
  socket_.non_blocking(true, ec);
  socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (ec == net::error::in_progress || ec == net::error::would_block) {
    pollfd writable{socket_.native_handle(), POLLOUT, 0};
    const int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(receive_timeout));
    int error = ETIMEDOUT;
    if (::poll(&writable, 1, timeout_ms) == 1) {
      socklen_t length = sizeof(error);
      getsockopt(socket_.native_handle(), SOL_SOCKET, SO_ERROR, &error, &length);
    }
    ec = boost::system::error_code(error, boost::system::system_category());
  }
  connected_ = !ec;
  if (connected_) {
    socket_.non_blocking(false, ec);
    timeval tv{};
    tv.tv_sec = absl::ToInt64Seconds(receive_timeout);
    tv.tv_usec = absl::ToInt64Microseconds(receive_timeout) % 1000000;
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
}

bool TestConnection::Send(absl::string_view bytes) {
  boost::system::error_code ec;
  net::write(socket_, net::buffer(bytes.data(), bytes.size()), ec);
  return !ec;
}

std::optional<TestResponse> TestConnection::ReadResponse() {
  boost::beast::flat_buffer buffer;
  if (!buffered_.empty()) {
    auto space = buffer.prepare(buffered_.size());
    net::buffer_copy(space, net::buffer(buffered_));
    buffer.commit(buffered_.size());
    buffered_.clear();
  }
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  boost::system::error_code ec;
  bhttp::read(socket_, buffer, parser, ec);
  if (ec) {
    return std::nullopt;
  }
  // Keep bytes of a following response.
  buffered_.assign(static_cast<const char*>(buffer.data().data()), buffer.size());
  const auto& message = parser.get();
  TestResponse response;
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    response.headers[absl::AsciiStrToLower(absl::string_view(
        field.name_string().data(), field.name_string().size()))] = std::string(field.value());
  }
  response.body = message.body();
  response.keep_alive = message.keep_alive();
  return response;
}

std::optional<TestResponse> TestConnection::Request(absl::string_view method,
                                                    absl::string_view target,
                                                    absl::string_view body,
                                                    absl::string_view extra_headers) {
  if (!Send(RequestText(method, target, body, extra_headers))) {
    return std::nullopt;
  }
  return ReadResponse();
}

bool TestConnection::WaitForClose() {
  char scratch[4096];
  for (;;) {
    boost::system::error_code ec;
    socket_.read_some(net::buffer(scratch), ec);
    if (ec == net::error::eof || ec == net::error::connection_reset) {
      return true;
    }
    if (ec) {
      return false;  // Timeout (EAGAIN) or another error: not closed in time.
    }
  }
}

void TestConnection::Close() {
  boost::system::error_code ignored;
  socket_.close(ignored);
}

std::string TestConnection::ReadSome(size_t bytes) {
  std::string out(bytes, '\0');
  boost::system::error_code ec;
  const size_t n = socket_.read_some(net::buffer(out), ec);
  out.resize(ec ? 0 : n);
  return out;
}

std::string RequestText(absl::string_view method, absl::string_view target, absl::string_view body,
                        absl::string_view extra_headers) {
  std::string text =
      absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n", extra_headers);
  if (!body.empty() || method == "POST") {
    absl::StrAppend(&text, "Content-Length: ", body.size(), "\r\n");
  }
  absl::StrAppend(&text, "\r\n", body);
  return text;
}

uint16_t UnusedPort() {
  net::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

}  // namespace portcullis::gateway::testing
