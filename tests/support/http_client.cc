#include "tests/support/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace portcullis::testing {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

HttpResult SendHttp(int port, const std::string& method, const std::string& target,
                    const std::string& body, const std::string& content_type,
                    absl::Duration timeout, const std::map<std::string, std::string>& headers) {
  HttpResult result;
  try {
    boost::asio::io_context io;
    beast::tcp_stream stream(io);
    stream.expires_after(absl::ToChronoMilliseconds(timeout));
    stream.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                 static_cast<unsigned short>(port)));
    http::request<http::string_body> request(http::string_to_verb(method), target, 11);
    request.set(http::field::host, absl::StrFormat("127.0.0.1:%d", port));
    request.set(http::field::connection, "close");
    if (!content_type.empty()) {
      request.set(http::field::content_type, content_type);
    }
    for (const auto& [name, value] : headers) {
      request.set(name, value);
    }
    request.body() = body;
    if (!body.empty() || method == "POST") {
      request.prepare_payload();
    }
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    http::read(stream, buffer, parser);
    const auto& response = parser.get();
    result.status = response.result_int();
    for (const auto& field : response) {
      result.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
          std::string(field.value());
    }
    result.body = response.body();
  } catch (const std::exception& e) {
    result.status = 0;
    result.error = e.what();
  }
  return result;
}

std::string FormEncode(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out += absl::StrFormat("%%%02X", c);
    }
  }
  return out;
}

}  // namespace portcullis::testing
