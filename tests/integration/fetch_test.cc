// The SSRF-guarded fetch path for real, on loopback only: CaresResolver asking a fake DNS server,
// CurlHttpClient connecting to local origin servers, SafeFetcher composing them. The allow list
// holds 127.0.0.1/32 only (as the policy permits for tests, never in production), so 127.0.0.2 —
// a live "internal" server on the same machine — stays a forbidden address that must never see a
// connection.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/fake_dns_server.h"
#include "verifier-service/src/fetch/cares_resolver.h"
#include "verifier-service/src/fetch/curl_http_client.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::IpAddress;
using ::portcullis::testing::FakeDnsAnswer;
using ::portcullis::testing::FakeDnsServer;
using ::testing::HasSubstr;

constexpr int64_t kCap = 1 << 20;

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

std::string Head(int status, const std::vector<std::string>& headers, int64_t length) {
  std::string head = absl::StrCat("HTTP/1.1 ", status, " X\r\nConnection: close\r\n");
  for (const std::string& header : headers) {
    absl::StrAppend(&head, header, "\r\n");
  }
  if (length >= 0) {
    absl::StrAppend(&head, "Content-Length: ", length, "\r\n");
  }
  return head + "\r\n";
}

// An HTTP/1.1 origin on `address`:0, a thread per connection, one response per connection.
class Origin {
 public:
  // Writes the whole response to the socket; may take as long as it likes (checks stopping()).
  using Handler = std::function<void(int fd, Origin& origin)>;

  // `address`: an IPv4 or IPv6 literal.
  explicit Origin(const char* address) {
    const bool v6 = std::string(address).find(':') != std::string::npos;
    fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_storage bind_address{};
    socklen_t length = 0;
    if (v6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&bind_address);
      in6->sin6_family = AF_INET6;
      inet_pton(AF_INET6, address, &in6->sin6_addr);
      length = sizeof(sockaddr_in6);
    } else {
      auto* in4 = reinterpret_cast<sockaddr_in*>(&bind_address);
      in4->sin_family = AF_INET;
      inet_pton(AF_INET, address, &in4->sin_addr);
      length = sizeof(sockaddr_in);
    }
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&bind_address), length) == 0 &&
          listen(fd_, 1024) == 0;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&bind_address), &length);
    port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&bind_address)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&bind_address)->sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~Origin() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    acceptor_.join();
    std::vector<std::thread> connections;
    {
      absl::MutexLock lock(&mutex_);
      connections.swap(connections_);
    }
    for (std::thread& thread : connections) {
      thread.join();
    }
  }

  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }
  int requests(const std::string& path) {
    absl::MutexLock lock(&mutex_);
    return requests_[path];
  }
  bool stopping() const { return stopping_; }
  void Route(const std::string& path, Handler handler) {
    absl::MutexLock lock(&mutex_);
    routes_[path] = std::move(handler);
  }

 private:
  void Accept() {
    while (!stopping_) {
      const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) {
        continue;
      }
      ++accepted_;
      absl::MutexLock lock(&mutex_);
      connections_.emplace_back([this, connection] { Serve(connection); });
    }
  }

  void Serve(int connection) {
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
      const ssize_t got = recv(connection, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        close(connection);
        return;
      }
      request.append(buffer, static_cast<size_t>(got));
    }
    const size_t start = request.find(' ') + 1;
    const std::string path = request.substr(start, request.find(' ', start) - start);
    Handler handler;
    {
      absl::MutexLock lock(&mutex_);
      ++requests_[path];
      last_request_ = request;
      const auto it = routes_.find(path);
      if (it != routes_.end()) {
        handler = it->second;
      }
    }
    if (handler) {
      handler(connection, *this);
    } else {
      WriteAll(connection, Head(404, {"Content-Type: text/html"}, 0));
    }
    close(connection);
  }

 public:
  std::string last_request() {
    absl::MutexLock lock(&mutex_);
    return last_request_;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  absl::Mutex mutex_;
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, Handler> routes_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, int> requests_ ABSL_GUARDED_BY(mutex_);
  std::string last_request_ ABSL_GUARDED_BY(mutex_);
};

Origin::Handler Html(std::string body, int status = 200, std::vector<std::string> extra = {}) {
  return [body = std::move(body), status, extra = std::move(extra)](int fd, Origin&) {
    std::vector<std::string> headers = extra;
    headers.push_back("Content-Type: text/html; charset=utf-8");
    WriteAll(fd, Head(status, headers, static_cast<int64_t>(body.size())) + body);
  };
}

Origin::Handler Redirect(int status, std::string location) {
  return [status, location = std::move(location)](int fd, Origin&) {
    WriteAll(fd, Head(status, {"Location: " + location, "Content-Type: text/html"}, 0));
  };
}

// Holds the connection open, sending nothing, until the origin stops.
void Tarpit(int, Origin& origin) {
  while (!origin.stopping()) {
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::string GzipOfZeros(size_t size) {
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  const std::string zeros(1 << 20, '\0');
  std::string out;
  char buffer[65536];
  size_t fed = 0;
  int flush = Z_NO_FLUSH;
  do {
    if (stream.avail_in == 0 && fed < size) {
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
      stream.avail_in = static_cast<uInt>(std::min(zeros.size(), size - fed));
      fed += stream.avail_in;
    }
    flush = fed >= size ? Z_FINISH : Z_NO_FLUSH;
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    deflate(&stream, flush);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  } while (!(flush == Z_FINISH && stream.avail_out != 0));
  deflateEnd(&stream);
  return out;
}

IpAddress Ip(absl::string_view text) { return *IpAddress::Parse(text); }

// A self-signed certificate (its own CA) for `dns_name`, and its key, as PEM.
struct TlsIdentity {
  std::string certificate;
  std::string key;
};

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(length));
}

TlsIdentity SelfSigned(const std::string& dns_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(dns_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       std::vector<std::pair<int, std::string>>{{NID_subject_alt_name, "DNS:" + dns_name},
                                                {NID_basic_constraints, "critical,CA:TRUE"},
                                                {NID_key_usage, "digitalSignature,keyCertSign"}}) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
    X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
  }
  X509_sign(cert, key, EVP_sha256());
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, cert);
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  TlsIdentity identity{BioText(cert_bio), BioText(key_bio)};
  BIO_free(cert_bio);
  BIO_free(key_bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return identity;
}

// An HTTPS origin on 127.0.0.1:0 serving one HTML page, recording the SNI name of each handshake.
class TlsOrigin {
 public:
  explicit TlsOrigin(const TlsIdentity& identity) {
    context_ = SSL_CTX_new(TLS_server_method());
    BIO* cert_bio =
        BIO_new_mem_buf(identity.certificate.data(), static_cast<int>(identity.certificate.size()));
    X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    BIO* key_bio = BIO_new_mem_buf(identity.key.data(), static_cast<int>(identity.key.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    ok_ =
        SSL_CTX_use_certificate(context_, cert) == 1 && SSL_CTX_use_PrivateKey(context_, key) == 1;
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cert_bio);
    BIO_free(key_bio);
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ok_ && bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
          listen(fd_, 16) == 0;
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~TlsOrigin() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    SSL_CTX_free(context_);
  }

  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  std::vector<std::string> server_names() {
    absl::MutexLock lock(&mutex_);
    return server_names_;
  }

 private:
  // One connection at a time: enough for these tests.
  void Serve() {
    sigset_t pipe;  // OpenSSL writes with write(): a client that hung up must not kill the test
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    while (!stopping_) {
      const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) {
        continue;
      }
      timeval timeout{5, 0};
      setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      SSL* ssl = SSL_new(context_);
      SSL_set_fd(ssl, connection);
      if (SSL_accept(ssl) == 1) {
        const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        {
          absl::MutexLock lock(&mutex_);
          server_names_.push_back(sni != nullptr ? sni : "");
        }
        std::string request;
        char buffer[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
          const int got = SSL_read(ssl, buffer, sizeof(buffer));
          if (got <= 0) {
            break;
          }
          request.append(buffer, static_cast<size_t>(got));
        }
        const std::string body = "<p>secure</p>";
        const std::string response =
            Head(200, {"Content-Type: text/html"}, static_cast<int64_t>(body.size())) + body;
        SSL_write(ssl, response.data(), static_cast<int>(response.size()));
        SSL_shutdown(ssl);
      } else {
        absl::MutexLock lock(&mutex_);
        server_names_.push_back("(handshake failed)");
      }
      SSL_free(ssl);
      close(connection);
    }
  }

  SSL_CTX* context_ = nullptr;
  int fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  absl::Mutex mutex_;
  std::vector<std::string> server_names_ ABSL_GUARDED_BY(mutex_);
};

class FetchIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    origin_ = std::make_unique<Origin>("127.0.0.1");
    internal_ = std::make_unique<Origin>("127.0.0.2");
    ASSERT_TRUE(origin_->ok());
    ASSERT_TRUE(internal_->ok()) << "cannot listen on 127.0.0.2";
    internal_->Route("/", Html("<h1>internal admin</h1>"));

    auto dns = FakeDnsServer::Start();
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
    dns_->Set("origin.test", {Ip("127.0.0.1")});
    dns_->Set("internal.test", {Ip("127.0.0.2")});
    dns_->Set("mixed.test", {Ip("127.0.0.1"), Ip("127.0.0.2")});
    dns_->Set("silent.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::Silent()});
    dns_->Set("servfail.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::ServFail()});

    EgressPolicyConfig policy;
    policy.allow = {*net::Cidr::Parse("127.0.0.1/32")};
    policy.extra_allowed_ports = {origin_->port(), internal_->port()};
    auto created = EgressPolicy::Create(policy);
    ASSERT_TRUE(created.ok()) << created.status();
    policy_ = std::make_unique<EgressPolicy>(*std::move(created));

    CaresResolverConfig resolver;
    resolver.servers = dns_->address();
    resolver.timeout = absl::Milliseconds(500);
    auto cares = CaresResolver::Create(resolver);
    ASSERT_TRUE(cares.ok()) << cares.status();
    resolver_ = *std::move(cares);
    auto http = CurlHttpClient::Create({}, policy_.get());
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
  }

  void TearDown() override {
    // Clients first (their loops end every transfer), then the servers they talk to.
    http_.reset();
    resolver_.reset();
    origin_.reset();
    internal_.reset();
  }

  std::string OriginUrl(const std::string& path, const std::string& host = "origin.test") {
    return absl::StrCat("http://", host, ":", origin_->port(), path);
  }
  std::string InternalUrl(const std::string& host = "internal.test") {
    return absl::StrCat("http://", host, ":", internal_->port(), "/");
  }

  std::unique_ptr<SafeFetcher> Fetcher(SafeFetcherConfig config = {}) {
    auto fetcher = SafeFetcher::Create(config, policy_.get(), resolver_.get(), http_.get());
    EXPECT_TRUE(fetcher.ok()) << fetcher.status();
    return *std::move(fetcher);
  }

  FetchResult Fetch(const std::string& url, SafeFetcherConfig config = {}) {
    std::unique_ptr<SafeFetcher> fetcher = Fetcher(config);
    absl::Notification done;
    FetchResult result;
    fetcher->Fetch(url, [&](FetchResult fetched) {
      result = std::move(fetched);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30))) << url;
    return result;
  }

  std::unique_ptr<Origin> origin_;
  std::unique_ptr<Origin> internal_;
  std::unique_ptr<FakeDnsServer> dns_;
  std::unique_ptr<EgressPolicy> policy_;
  std::unique_ptr<CaresResolver> resolver_;
  std::unique_ptr<CurlHttpClient> http_;
};

TEST_F(FetchIntegrationTest, Follows301Then302Then200WithOneLookupPerHop) {
  origin_->Route("/one", Redirect(301, "/two"));
  origin_->Route("/two", Redirect(302, OriginUrl("/three")));
  origin_->Route("/three", Html("<p>hello</p>"));
  const FetchResult result = Fetch(OriginUrl("/one"));
  EXPECT_EQ(result.outcome, FetchOutcome::kOk) << result.detail;
  EXPECT_EQ(result.final_url, OriginUrl("/three"));
  EXPECT_EQ(result.redirects, 2);
  EXPECT_EQ(result.body, "<p>hello</p>");
  EXPECT_EQ(dns_->Queries("origin.test", 1), 3);  // one A lookup per hop
  const std::string request = origin_->last_request();
  EXPECT_THAT(request, HasSubstr("Accept: text/html, application/xhtml+xml;q=0.9, */*;q=0.1"));
  EXPECT_THAT(request, HasSubstr("User-Agent: Portcullis/"));
  EXPECT_THAT(request, HasSubstr(absl::StrCat("Host: origin.test:", origin_->port())));
  EXPECT_THAT(request, ::testing::Not(HasSubstr("Cookie")));
}

TEST_F(FetchIntegrationTest, FourthRedirectRefused) {
  for (int i = 1; i <= 4; ++i) {
    origin_->Route(absl::StrCat("/r", i), Redirect(302, absl::StrCat("/r", i + 1)));
  }
  origin_->Route("/r5", Html("never"));
  const FetchResult result = Fetch(OriginUrl("/r1"));
  EXPECT_EQ(result.outcome, FetchOutcome::kTooManyRedirects) << result.detail;
  EXPECT_EQ(origin_->requests("/r5"), 0);
}

TEST_F(FetchIntegrationTest, RedirectToAForbiddenAddressRefusedWithoutConnecting) {
  origin_->Route("/to-name", Redirect(302, InternalUrl()));
  origin_->Route("/to-literal", Redirect(307, InternalUrl("127.0.0.2")));
  origin_->Route("/to-mapped", Redirect(308, InternalUrl("[::ffff:127.0.0.2]")));
  for (const char* path : {"/to-name", "/to-literal", "/to-mapped"}) {
    const FetchResult result = Fetch(OriginUrl(path));
    EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress) << path << ": " << result.detail;
    EXPECT_THAT(result.detail, HasSubstr("127.0.0.2")) << path;
  }
  EXPECT_EQ(internal_->accepted(), 0);
}

TEST_F(FetchIntegrationTest, MixedAnswerRefusedWhole) {
  const FetchResult result = Fetch(OriginUrl("/", "mixed.test"));
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress) << result.detail;
  EXPECT_EQ(origin_->accepted(), 0);
  EXPECT_EQ(internal_->accepted(), 0);
}

TEST_F(FetchIntegrationTest, DnsRebindingAnswerRefused) {
  // First lookup: the allowed origin, which redirects back to the same name; second lookup: the
  // internal address. The second hop is refused on its own fresh answer and never connects.
  dns_->Set("rebind.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::Addresses({Ip("127.0.0.1")}),
                                                      FakeDnsAnswer::Addresses({Ip("127.0.0.2")})});
  origin_->Route("/first", Redirect(302, "/second"));
  const FetchResult result = Fetch(OriginUrl("/first", "rebind.test"));
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress) << result.detail;
  EXPECT_EQ(dns_->Queries("rebind.test", 1), 2);
  EXPECT_EQ(origin_->requests("/first"), 1);
  EXPECT_EQ(internal_->accepted(), 0);
}

TEST_F(FetchIntegrationTest, ConnectTimeCheckRefusesAnAddressThePolicyRefuses) {
  // Defense in depth: even handed a refused address directly, CurlHttpClient opens no socket.
  HttpRequest request;
  request.url = *url::ParseUrl(InternalUrl());
  request.address = Ip("127.0.0.2");
  absl::Notification done;
  absl::StatusOr<HttpResponse> response = absl::UnknownError("none");
  http_->Fetch(request, [&](absl::StatusOr<HttpResponse> got) {
    response = std::move(got);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kPermissionDenied) << response.status();
  EXPECT_EQ(internal_->accepted(), 0);
}

TEST_F(FetchIntegrationTest, PinsToAnIpv6Answer) {
  Origin v6("::1");
  if (!v6.ok()) {
    PORTCULLIS_SKIP_OR_FAIL_UNDER_CI("cannot listen on the IPv6 loopback [::1]");
  }
  v6.Route("/", Html("<p>six</p>"));
  EgressPolicyConfig config;
  config.allow = {*net::Cidr::Parse("::1/128")};
  config.extra_allowed_ports = {v6.port()};
  const EgressPolicy policy = *EgressPolicy::Create(config);
  auto http = *CurlHttpClient::Create({}, &policy);
  auto fetcher = *SafeFetcher::Create({}, &policy, resolver_.get(), http.get());
  dns_->Set("six.test", {Ip("::1")});
  for (const std::string host : {"six.test", "[::1]"}) {
    absl::Notification done;
    FetchResult result;
    fetcher->Fetch(absl::StrCat("http://", host, ":", v6.port(), "/"), [&](FetchResult fetched) {
      result = std::move(fetched);
      done.Notify();
    });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_EQ(result.outcome, FetchOutcome::kOk) << host << ": " << result.detail;
    EXPECT_EQ(result.body, "<p>six</p>");
  }
  EXPECT_EQ(v6.accepted(), 2);
}

TEST_F(FetchIntegrationTest, TlsVerifiesTheUrlHostWhileConnectingToThePinnedAddress) {
  const TlsIdentity identity = SelfSigned("origin.test");
  TlsOrigin tls(identity);
  ASSERT_TRUE(tls.ok());
  const std::string ca_file = (std::filesystem::temp_directory_path() /
                               absl::StrCat("portcullis-fetch-ca-", getpid(), ".pem"))
                                  .string();
  std::ofstream(ca_file) << identity.certificate;
  dns_->Set("impostor.test", {Ip("127.0.0.1")});
  EgressPolicyConfig config;
  config.allow = {*net::Cidr::Parse("127.0.0.1/32")};
  config.extra_allowed_ports = {tls.port()};
  const EgressPolicy policy = *EgressPolicy::Create(config);
  CurlHttpClientConfig http_config;
  http_config.ca_file = ca_file;
  auto http = *CurlHttpClient::Create(http_config, &policy);
  auto fetcher = *SafeFetcher::Create({}, &policy, resolver_.get(), http.get());
  const auto fetch = [&](const std::string& host) {
    absl::Notification done;
    FetchResult result;
    fetcher->Fetch(absl::StrCat("https://", host, ":", tls.port(), "/"), [&](FetchResult got) {
      result = std::move(got);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    return result;
  };
  const FetchResult good = fetch("origin.test");
  EXPECT_EQ(good.outcome, FetchOutcome::kOk) << good.detail;
  EXPECT_EQ(good.body, "<p>secure</p>");
  // The same address under another name: the certificate does not name it.
  const FetchResult impostor = fetch("impostor.test");
  EXPECT_EQ(impostor.outcome, FetchOutcome::kTlsFailed) << impostor.detail;
  EXPECT_FALSE(IsTransient(impostor.outcome));
  // SNI carried the URL's host, not the address (the impostor's handshake may still be ending).
  ASSERT_FALSE(tls.server_names().empty());
  EXPECT_EQ(tls.server_names().front(), "origin.test");
  std::remove(ca_file.c_str());
}

TEST_F(FetchIntegrationTest, SlowTrickleCutByTheMinimumSpeed) {
  origin_->Route("/trickle", [](int fd, Origin& origin) {
    if (!WriteAll(fd, Head(200, {"Content-Type: text/html"}, 100000))) {
      return;
    }
    while (!origin.stopping() && WriteAll(fd, "x")) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
  SafeFetcherConfig config;
  config.total_timeout = absl::Seconds(20);
  config.low_speed_bytes_per_second = 1000;
  config.low_speed_time = absl::Seconds(1);
  const absl::Time start = absl::Now();
  const FetchResult result = Fetch(OriginUrl("/trickle"), config);
  EXPECT_EQ(result.outcome, FetchOutcome::kTimeout) << result.detail;
  EXPECT_TRUE(IsTransient(result.outcome));
  EXPECT_LT(absl::Now() - start, absl::Seconds(6)) << "cut by the speed floor, not the deadline";
}

// How many times the fetch loops of this process have gone to sleep and been woken: the
// voluntary context switches of the threads named "fetch-loop".
int64_t FetchLoopWakeups() {
  int64_t total = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name != "fetch-loop") {
      continue;
    }
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        total += std::atoll(line.c_str() + 24);
      }
    }
  }
  return total;
}

// Sends `bytes` bytes of `<p>` text one at a time, `every` apart, then ends (Content-Length set).
Origin::Handler Trickle(int bytes, absl::Duration every) {
  return [bytes, every](int fd, Origin& origin) {
    if (!WriteAll(fd, Head(200, {"Content-Type: text/html"}, bytes))) {
      return;
    }
    for (int i = 0; i < bytes && !origin.stopping(); ++i) {
      absl::SleepFor(every);
      if (!WriteAll(fd, std::string(1, static_cast<char>('a' + i % 26)))) {
        return;
      }
    }
  };
}

std::string TrickledBody(int bytes) {
  std::string body;
  for (int i = 0; i < bytes; ++i) {
    body.push_back(static_cast<char>('a' + i % 26));
  }
  return body;
}

// A trickling origin is read a batch at a time once it has proved slow, not once per packet, and
// its body arrives whole.
TEST_F(FetchIntegrationTest, ATrickledBodyIsReadInBatchesAndArrivesWhole) {
  constexpr int kBytes = 150;  // one every 10 ms: 1.5 s, 150 packets
  origin_->Route("/trickle", Trickle(kBytes, absl::Milliseconds(10)));
  CurlHttpClientConfig paced;
  paced.pacing.after = absl::Milliseconds(100);
  paced.pacing.pause = absl::Milliseconds(250);
  auto http = CurlHttpClient::Create(paced, policy_.get());
  ASSERT_TRUE(http.ok()) << http.status();
  SafeFetcherConfig config;
  config.total_timeout = absl::Seconds(20);
  config.low_speed_bytes_per_second = 10;
  auto fetcher = SafeFetcher::Create(config, policy_.get(), resolver_.get(), http->get());
  ASSERT_TRUE(fetcher.ok()) << fetcher.status();

  const int64_t wakeups_before = FetchLoopWakeups();
  const absl::Time start = absl::Now();
  absl::Notification done;
  FetchResult result;
  (*fetcher)->Fetch(OriginUrl("/trickle"), [&](FetchResult fetched) {
    result = std::move(fetched);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  const absl::Duration took = absl::Now() - start;
  const int64_t wakeups = FetchLoopWakeups() - wakeups_before;
  ASSERT_EQ(result.outcome, FetchOutcome::kOk) << result.detail;
  EXPECT_EQ(result.body, TrickledBody(kBytes));
  // Unpaced, each of the 150 packets wakes the loop. Paced: ~10 in the first 100 ms, then about
  // one per 250 ms pause, the timers of libcurl and both clients' idle loops.
  EXPECT_LT(wakeups, 50) << "fetch-loop wakeups for " << kBytes << " packets in " << took;
  std::cout << "fetch-loop wakeups for " << kBytes << " packets, paced: " << wakeups << std::endl;
  EXPECT_LT(took, absl::Seconds(1.5) + absl::Milliseconds(250) + absl::Seconds(1))
      << "no later than one pause after the last packet (and some scheduling slack)";
}

// Pausing a trickle defers its reads, not its limits: the minimum speed and the deadline still
// end it.
TEST_F(FetchIntegrationTest, APacedTrickleIsStillCutByTheMinimumSpeedAndTheDeadline) {
  origin_->Route("/trickle", Trickle(100000, absl::Milliseconds(10)));  // 100 bytes/s
  CurlHttpClientConfig paced;
  paced.pacing.after = absl::Milliseconds(100);
  paced.pacing.pause = absl::Milliseconds(250);
  auto http = CurlHttpClient::Create(paced, policy_.get());
  ASSERT_TRUE(http.ok()) << http.status();
  const auto fetch = [&](SafeFetcherConfig config) {
    auto fetcher = SafeFetcher::Create(config, policy_.get(), resolver_.get(), http->get());
    EXPECT_TRUE(fetcher.ok()) << fetcher.status();
    absl::Notification done;
    FetchResult result;
    (*fetcher)->Fetch(OriginUrl("/trickle"), [&](FetchResult fetched) {
      result = std::move(fetched);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return result;
  };

  SafeFetcherConfig speed_floor;
  speed_floor.total_timeout = absl::Seconds(20);
  speed_floor.low_speed_bytes_per_second = 1000;
  speed_floor.low_speed_time = absl::Seconds(1);
  absl::Time start = absl::Now();
  FetchResult result = fetch(speed_floor);
  EXPECT_EQ(result.outcome, FetchOutcome::kTimeout) << result.detail;
  EXPECT_LT(absl::Now() - start, absl::Seconds(6)) << "cut by the speed floor, not the deadline";

  SafeFetcherConfig deadline;
  deadline.total_timeout = absl::Milliseconds(1500);
  deadline.low_speed_bytes_per_second = 10;
  start = absl::Now();
  result = fetch(deadline);
  EXPECT_EQ(result.outcome, FetchOutcome::kTimeout) << result.detail;
  EXPECT_LT(absl::Now() - start, absl::Seconds(4)) << "cut at the deadline";
}

TEST_F(FetchIntegrationTest, TotalDeadline) {
  origin_->Route("/tarpit", &Tarpit);
  SafeFetcherConfig config;
  config.total_timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  const FetchResult result = Fetch(OriginUrl("/tarpit"), config);
  EXPECT_EQ(result.outcome, FetchOutcome::kTimeout) << result.detail;
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
}

TEST_F(FetchIntegrationTest, GzipBombCappedAfterDecoding) {
  const std::string bomb = GzipOfZeros(50u << 20);
  ASSERT_LT(bomb.size(), 200u * 1024) << "50 MiB of zeros compress to about 50 KiB";
  origin_->Route("/bomb", [&bomb](int fd, Origin&) {
    WriteAll(fd, Head(200, {"Content-Type: text/html", "Content-Encoding: gzip"},
                      static_cast<int64_t>(bomb.size())) +
                     bomb);
  });
  const FetchResult result = Fetch(OriginUrl("/bomb"));
  EXPECT_EQ(result.outcome, FetchOutcome::kTooLarge) << result.detail;
  EXPECT_TRUE(result.body.empty());
}

TEST_F(FetchIntegrationTest, FiftyMegabyteBodyCapped) {
  origin_->Route("/big", [](int fd, Origin& origin) {
    const int64_t size = 50 << 20;
    if (!WriteAll(fd, Head(200, {"Content-Type: text/html"}, size))) {
      return;
    }
    const std::string chunk(64 * 1024, 'a');
    for (int64_t sent = 0; sent < size && !origin.stopping(); sent += chunk.size()) {
      if (!WriteAll(fd, chunk)) {
        return;
      }
    }
  });
  const FetchResult result = Fetch(OriginUrl("/big"));
  EXPECT_EQ(result.outcome, FetchOutcome::kTooLarge) << result.detail;
  EXPECT_THAT(result.detail, HasSubstr(absl::StrCat(kCap)));
}

TEST_F(FetchIntegrationTest, StatusClassesAndContentTypes) {
  origin_->Route("/pdf", [](int fd, Origin&) {
    WriteAll(fd, Head(200, {"Content-Type: application/pdf"}, 5 << 20) + std::string(4096, '%'));
  });
  origin_->Route("/gone", Html("gone", 410));
  origin_->Route("/error", Html("oops", 500));
  origin_->Route("/busy", Html("slow down", 429, {"Retry-After: 120"}));
  origin_->Route("/xhtml", [](int fd, Origin&) {
    WriteAll(fd, Head(200, {"Content-Type: application/xhtml+xml"}, 5) + "<x/>\n");
  });
  EXPECT_EQ(Fetch(OriginUrl("/pdf")).outcome, FetchOutcome::kUnsupportedContentType);
  EXPECT_EQ(Fetch(OriginUrl("/gone")).outcome, FetchOutcome::kGone);
  EXPECT_EQ(Fetch(OriginUrl("/error")).outcome, FetchOutcome::kHttp5xx);
  EXPECT_EQ(Fetch(OriginUrl("/missing")).outcome, FetchOutcome::kHttp4xx);
  const FetchResult busy = Fetch(OriginUrl("/busy"));
  EXPECT_EQ(busy.outcome, FetchOutcome::kHttp429);
  EXPECT_EQ(busy.retry_after, "120");
  const FetchResult xhtml = Fetch(OriginUrl("/xhtml"));
  EXPECT_EQ(xhtml.outcome, FetchOutcome::kOk) << xhtml.detail;
  EXPECT_EQ(xhtml.body, "<x/>\n");
}

TEST_F(FetchIntegrationTest, DnsFailuresAreClassified) {
  EXPECT_EQ(Fetch(OriginUrl("/", "silent.test")).outcome, FetchOutcome::kDnsTemporary);
  EXPECT_EQ(Fetch(OriginUrl("/", "servfail.test")).outcome, FetchOutcome::kDnsTemporary);
  EXPECT_EQ(Fetch(OriginUrl("/", "nowhere.test")).outcome, FetchOutcome::kDnsNotFound);
  EXPECT_EQ(origin_->accepted(), 0);
}

TEST_F(FetchIntegrationTest, ConnectionRefusedIsTransient) {
  // A port nothing listens on: bind one, remember it, close it.
  const int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
  close(probe);
  const uint16_t port = ntohs(address.sin_port);
  EgressPolicyConfig config;
  config.allow = {*net::Cidr::Parse("127.0.0.1/32")};
  config.extra_allowed_ports = {port};
  const EgressPolicy policy = *EgressPolicy::Create(config);
  auto http = *CurlHttpClient::Create({}, &policy);
  auto fetcher = *SafeFetcher::Create({}, &policy, resolver_.get(), http.get());
  absl::Notification done;
  FetchResult result;
  fetcher->Fetch(absl::StrCat("http://origin.test:", port, "/"), [&](FetchResult fetched) {
    result = std::move(fetched);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.outcome, FetchOutcome::kConnectionFailed) << result.detail;
  EXPECT_TRUE(IsTransient(result.outcome));
}

// Accepts connections on 127.0.0.1:0 and holds them, never reading or answering: a tarpit. One
// thread whatever the number of connections.
class TarpitServer {
 public:
  TarpitServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
          listen(fd_, 4096) == 0;
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stopping_) {
        const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (connection >= 0) {
          absl::MutexLock lock(&mutex_);
          held_.push_back(connection);
        }
      }
    });
  }
  ~TarpitServer() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (const int connection : held_) {
      close(connection);
    }
  }
  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  int held() {
    absl::MutexLock lock(&mutex_);
    return static_cast<int>(held_.size());
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  absl::Mutex mutex_;
  std::vector<int> held_ ABSL_GUARDED_BY(mutex_);
};

// Resident memory of this process, from /proc/self/status; 0 when unknown.
int64_t ResidentKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::atoll(line.c_str() + 6);
    }
  }
  return 0;
}

// The whole path under load: a thousand sources, each its own name resolved through the fake DNS
// server, stuck on a tarpit, do not slow a fetch of a fast origin.
TEST_F(FetchIntegrationTest, ThousandTarpitsInFlightDoNotDelayAFastSource) {
  // Two descriptors per tarpit (client and server side) and some room: raise the soft limit.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 4096));
  setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 2300) {
    PORTCULLIS_SKIP_OR_FAIL_UNDER_CI(absl::StrCat(
        "needs 2300 file descriptors, the hard limit is ", files.rlim_max));
  }
  constexpr int kTarpits = 1000;
  TarpitServer tarpit;
  ASSERT_TRUE(tarpit.ok());
  origin_->Route("/fast", Html("<p>fast</p>"));
  for (int i = 0; i < kTarpits; ++i) {
    dns_->Set(absl::StrCat("tarpit", i, ".test"), {Ip("127.0.0.1")});
  }
  EgressPolicyConfig policy_config;
  policy_config.allow = {*net::Cidr::Parse("127.0.0.1/32")};
  policy_config.extra_allowed_ports = {origin_->port(), tarpit.port()};
  const EgressPolicy policy = *EgressPolicy::Create(policy_config);
  auto http = *CurlHttpClient::Create({}, &policy);
  SafeFetcherConfig config;
  config.total_timeout = absl::Seconds(30);
  config.max_in_flight = kTarpits + 100;
  config.max_per_address = kTarpits + 100;  // on loopback every source is the same address
  CaresResolverConfig resolver_config;      // a thousand lookups at once: see cares_resolver_test
  resolver_config.servers = dns_->address();
  resolver_config.timeout = absl::Seconds(10);
  auto resolver = *CaresResolver::Create(resolver_config);
  auto fetcher = *SafeFetcher::Create(config, &policy, resolver.get(), http.get());

  const int64_t before_kib = ResidentKib();
  absl::Mutex outcomes_mutex;
  std::map<std::string, int> outcomes;  // of tarpits that ended early: none should
  absl::BlockingCounter tarpits_done(kTarpits);
  // However the test ends: the client's shutdown cancels every tarpit fetch, then all are answered.
  absl::Cleanup finish_tarpits = [&] {
    http.reset();
    tarpits_done.Wait();
  };
  for (int i = 0; i < kTarpits; ++i) {
    fetcher->Fetch(
        absl::StrCat("http://tarpit", i, ".test:", tarpit.port(), "/"), [&](FetchResult result) {
          {
            absl::MutexLock lock(&outcomes_mutex);
            ++outcomes[absl::StrCat(FetchOutcomeName(result.outcome), " ", result.detail)];
          }
          tarpits_done.DecrementCount();
        });
  }
  const absl::Time wait_until = absl::Now() + absl::Seconds(20);
  while (tarpit.held() < kTarpits && absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  {
    absl::MutexLock lock(&outcomes_mutex);
    for (const auto& [outcome, count] : outcomes) {
      ADD_FAILURE() << count << " tarpit fetches ended early: " << outcome;
    }
  }
  ASSERT_EQ(tarpit.held(), kTarpits) << "tarpit connections established";
  absl::SleepFor(absl::Milliseconds(200));  // let every request be written
  const int64_t during_kib = ResidentKib();

  const absl::Time start = absl::Now();
  absl::Notification done;
  FetchResult fast;
  fetcher->Fetch(OriginUrl("/fast"), [&](FetchResult result) {
    fast = std::move(result);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(fast.outcome, FetchOutcome::kOk) << fast.detail;
  EXPECT_LT(took, absl::Milliseconds(500)) << "with " << kTarpits << " tarpits in flight";
  std::cout << "fast fetch with " << kTarpits << " tarpits in flight: " << took
            << "; resident memory per in-flight fetch: ~"
            << (during_kib - before_kib) * 1024 / kTarpits << " bytes (" << before_kib << " KiB -> "
            << during_kib << " KiB)" << std::endl;
}

}  // namespace
}  // namespace portcullis::verifier::fetch
