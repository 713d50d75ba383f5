// `portcullis url check` and `portcullis url fetch` against the real verifier-service, which
// fetches through its SSRF-guarded fetcher from a loopback origin (allow list 127.0.0.1/32, as
// the policy permits for tests). Loopback only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/support/http_client.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

// Answers every request on 127.0.0.1:<port> with one small HTML page, then closes.
class LoopbackOrigin {
 public:
  LoopbackOrigin() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd_, 16) != 0) {
      return;
    }
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~LoopbackOrigin() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  int port() const { return port_; }

 private:
  void Serve() {
    while (!stopping_) {
      const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) {
        return;
      }
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(connection, buffer, sizeof(buffer));
        if (n <= 0) {
          break;
        }
        request.append(buffer, static_cast<size_t>(n));
      }
      const std::string body = "<html><body><a href=\"https://blog.example/\">hi</a></body></html>";
      const std::string response = absl::StrCat(
          "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ",
          body.size(), "\r\nETag: \"abc\"\r\nConnection: close\r\n\r\n", body);
      (void)!write(connection, response.data(), response.size());
      close(connection);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// The CLI's JSON answer; a test failure naming the output when it is not JSON.
json::value Parse(const testing::CommandResult& result) {
  boost::system::error_code error;
  json::value value = json::parse(result.output, error);
  if (error) {
    ADD_FAILURE() << "not JSON: " << result.output;
    return json::object{};
  }
  return value;
}

// A port free right now on 127.0.0.1 (for a listener that cannot report the one it bound).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

class UrlCliTest : public StackTest {
 protected:
  void SetUp() override {
    start_stack_ = false;
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    ASSERT_NE(origin_.port(), 0);
    std::vector<std::string> args = {absl::StrCat("--fetch_allowed_ports=", origin_.port()),
                                     "--fetch_timeout=3s",
                                     absl::StrCat("--admin_listen=127.0.0.1:", admin_port_)};
    if (allow_loopback_) {
      args.push_back("--egress_allow_cidrs=127.0.0.1/32");
    }
    const absl::Status started = stack_->StartVerifier(args);
    ASSERT_TRUE(started.ok()) << started;
    // The url commands are refused (UNAVAILABLE) until the verifier's API tokens are loaded.
    const absl::Status ready = stack_->WaitForVerifierReady();
    ASSERT_TRUE(ready.ok()) << ready;
  }

  const int admin_port_ = FreePort();
  // Whether the verifier starts with the allow list 127.0.0.1/32 (set before SetUp).
  bool allow_loopback_ = true;

  testing::CommandResult Cli(std::vector<std::string> args) {
    args = stack_->CliArgs(std::move(args));
    args.insert(args.begin(), "--timeout=10s");
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, args);
  }

  std::string OriginUrl(const std::string& host = "127.0.0.1") const {
    return absl::StrCat("http://", host, ":", origin_.port(), "/page");
  }

  LoopbackOrigin origin_;
};

TEST_F(UrlCliTest, FetchesAPageFromAnAllowedOrigin) {
  testing::CommandResult result = Cli({"url", "fetch", OriginUrl()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const json::value answer = Parse(result);
  EXPECT_EQ(answer.at("outcome").as_string(), "ok");
  EXPECT_EQ(answer.at("status").to_number<int>(), 200);
  EXPECT_EQ(answer.at("final_url").as_string(), OriginUrl());
  const json::array headers = answer.at("headers").as_array();
  ASSERT_FALSE(headers.empty()) << result.output;
  EXPECT_EQ(headers[0].at("name").as_string(), "content-type");
  // The body, base64 as proto JSON writes bytes: non-empty.
  EXPECT_FALSE(answer.at("body").as_string().empty());

  // A smaller cap than the page: too_large, exit 1, the outcome still printed.
  result = Cli({"url", "fetch", OriginUrl(), "--max_body_bytes=10"});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_EQ(Parse(result).at("outcome").as_string(), "too_large");

  result = Cli({"url", "check", OriginUrl()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Parse(result).at("allowed").as_bool());
  EXPECT_EQ(Parse(result).at("resolved_addresses").as_array().at(0).as_string(), "127.0.0.1");
}

TEST_F(UrlCliTest, RefusesAnAddressOutsideTheAllowList) {
  // 127.0.0.2 is loopback too, but not in the allow list: refused before any connection.
  testing::CommandResult result = Cli({"url", "fetch", OriginUrl("127.0.0.2")});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const json::value answer = Parse(result);
  EXPECT_EQ(answer.at("outcome").as_string(), "forbidden_address");
  EXPECT_FALSE(answer.at("transient").as_bool());
  EXPECT_EQ(answer.at("status").to_number<int>(), 0);

  result = Cli({"url", "check", OriginUrl("127.0.0.2")});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_FALSE(Parse(result).at("allowed").as_bool());
  EXPECT_EQ(Parse(result).at("reason").as_string(), "forbidden_address");
}

TEST_F(UrlCliTest, FetchesAreCountedOnTheAdminMetricsPort) {
  EXPECT_EQ(Cli({"url", "fetch", OriginUrl()}).exit_code, 0);
  EXPECT_EQ(Cli({"url", "fetch", OriginUrl("127.0.0.2")}).exit_code, 1);
  const testing::HttpResult metrics = testing::SendHttp(admin_port_, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_NE(metrics.body.find("portcullis_verifier_fetch_fetches_total{outcome=\"ok\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(
      metrics.body.find("portcullis_verifier_fetch_fetches_total{outcome=\"forbidden_address\"} 1"),
      std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("portcullis_verifier_fetch_in_flight 0"), std::string::npos);
}

// The production policy (no allow list): a hexadecimal spelling of 127.0.0.1 is refused.
class UrlCliDefaultPolicyTest : public UrlCliTest {
 protected:
  void SetUp() override {
    allow_loopback_ = false;
    UrlCliTest::SetUp();
  }
};

TEST_F(UrlCliDefaultPolicyTest, CheckRefusesAHexLoopbackSpelling) {
  const testing::CommandResult result = Cli({"url", "check", "http://0x7f.1/"});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const json::value answer = Parse(result);
  EXPECT_FALSE(answer.at("allowed").as_bool());
  // Issue 22: refused as an ambiguous spelling (forbidden_url), before its address is looked at.
  EXPECT_EQ(answer.at("reason").as_string(), "forbidden_url");
}

TEST_F(UrlCliTest, BadRequestsAreUsageOrRpcErrors) {
  EXPECT_EQ(Cli({"url", "fetch"}).exit_code, 2);
  EXPECT_EQ(Cli({"url", "check", ""}).exit_code, 1);
}

// A bad fetch setting is a startup misconfiguration: one line naming the flag, exit 2, before
// listening (no database needed).
TEST(VerifierFetchFlagsTest, BadFetchSettingsExitTwoNamingTheFlag) {
  for (const std::string flag : {"--dns_servers=not a server", "--egress_allow_cidrs=nope",
                                 "--fetch_allowed_ports=0", "--fetch_max_redirects=x"}) {
    const testing::CommandResult result = testing::RunCommand(
        PORTCULLIS_VERIFIER_BINARY,
        {"--database_url=host=/nonexistent", "--grpc_listen=127.0.0.1:0", flag});
    EXPECT_EQ(result.exit_code, 2) << flag << ": " << result.output;
    EXPECT_NE(result.output.find(flag.substr(0, flag.find('='))), std::string::npos)
        << result.output;
  }
}

}  // namespace
}  // namespace portcullis::integration
