// The real CaresResolver against FakeDnsServer on 127.0.0.1: answers, failures, timeouts,
// rebinding between lookups, and many lookups on the one loop thread.

#include "verifier-service/src/fetch/cares_resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_dns_server.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::IpAddress;
using ::portcullis::testing::FakeDnsAnswer;
using ::portcullis::testing::FakeDnsServer;
using ::testing::UnorderedElementsAre;

IpAddress Ip(absl::string_view text) { return *IpAddress::Parse(text); }

class VerifierCaresResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeDnsServer>> dns = FakeDnsServer::Start();
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
    CaresResolverConfig config;
    config.servers = dns_->address();
    config.timeout = absl::Milliseconds(600);
    config.tries = 2;
    absl::StatusOr<std::unique_ptr<CaresResolver>> resolver = CaresResolver::Create(config);
    ASSERT_TRUE(resolver.ok()) << resolver.status();
    resolver_ = *std::move(resolver);
  }

  absl::StatusOr<std::vector<IpAddress>> Resolve(const std::string& host) {
    absl::Notification done;
    absl::StatusOr<std::vector<IpAddress>> result = absl::UnknownError("no answer");
    resolver_->Resolve(host, [&](absl::StatusOr<std::vector<IpAddress>> answers) {
      result = std::move(answers);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    return result;
  }

  std::unique_ptr<FakeDnsServer> dns_;
  std::unique_ptr<CaresResolver> resolver_;
};

TEST_F(VerifierCaresResolverTest, AnswersAAndAaaa) {
  dns_->Set("both.test", {Ip("93.184.216.34"), Ip("2606:4700:4700::1111")});
  const absl::StatusOr<std::vector<IpAddress>> answers = Resolve("both.test");
  ASSERT_TRUE(answers.ok()) << answers.status();
  EXPECT_THAT(*answers, UnorderedElementsAre(Ip("93.184.216.34"), Ip("2606:4700:4700::1111")));
  EXPECT_EQ(dns_->Queries("both.test", 1), 1);
  EXPECT_EQ(dns_->Queries("both.test", 28), 1);
}

TEST_F(VerifierCaresResolverTest, AsksForTheNameAsIsNeverWithSearchDomains) {
  dns_->Set("a.example.test", {Ip("93.184.216.34")});
  ASSERT_TRUE(Resolve("a.example.test").ok());
  ASSERT_TRUE(Resolve("nothing.test").status().code() == absl::StatusCode::kNotFound);
  // Only the two names asked, A and AAAA each: no "nothing.test.<search domain>".
  EXPECT_EQ(dns_->TotalQueries(), dns_->Queries("a.example.test") + dns_->Queries("nothing.test"));
}

TEST_F(VerifierCaresResolverTest, NxDomainIsNotFound) {
  dns_->Set("gone.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::NxDomain()});
  EXPECT_EQ(Resolve("gone.test").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Resolve("never-set.test").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(VerifierCaresResolverTest, NoDataIsNotFound) {
  dns_->Set("empty.test", std::vector<IpAddress>{});
  EXPECT_EQ(Resolve("empty.test").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(VerifierCaresResolverTest, ServFailIsTransient) {
  dns_->Set("broken.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::ServFail()});
  EXPECT_EQ(Resolve("broken.test").status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(VerifierCaresResolverTest, SilenceIsTransientWithinTheTimeout) {
  dns_->Set("silent.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::Silent()});
  const absl::Time start = absl::Now();
  const absl::Status status = Resolve("silent.test").status();
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_LT(took, absl::Seconds(2)) << "the lookup deadline is 600ms";
}

TEST_F(VerifierCaresResolverTest, EachLookupAsksAgainSoRebindingIsSeen) {
  dns_->Set("rebind.test",
            std::vector<FakeDnsAnswer>{FakeDnsAnswer::Addresses({Ip("93.184.216.34")}),
                                       FakeDnsAnswer::Addresses({Ip("127.0.0.1")})});
  EXPECT_THAT(*Resolve("rebind.test"), UnorderedElementsAre(Ip("93.184.216.34")));
  EXPECT_THAT(*Resolve("rebind.test"), UnorderedElementsAre(Ip("127.0.0.1")));
  EXPECT_EQ(dns_->Queries("rebind.test", 1), 2);
}

TEST_F(VerifierCaresResolverTest, MixedAnswersComeBackWholeForThePolicyToRefuse) {
  dns_->Set("mixed.test", {Ip("93.184.216.34"), Ip("10.0.0.1"), Ip("fd00:ec2::254")});
  EXPECT_THAT(*Resolve("mixed.test"),
              UnorderedElementsAre(Ip("93.184.216.34"), Ip("10.0.0.1"), Ip("fd00:ec2::254")));
}

// A thousand lookups at once on the one loop thread. The deadline is generous: where the kernel
// caps the socket receive buffer (net.core.rmem_max) below the configured 1 MiB, a burst of
// answers can still overflow it, and a dropped answer is only asked again after timeout / tries.
TEST_F(VerifierCaresResolverTest, ManyLookupsAtOnceOnOneLoop) {
  constexpr int kLookups = 1000;
  CaresResolverConfig config;
  config.servers = dns_->address();
  config.timeout = absl::Seconds(10);
  resolver_ = *CaresResolver::Create(config);
  for (int i = 0; i < kLookups; ++i) {
    dns_->Set(absl::StrCat("n", i, ".test"), {IpAddress::Ipv4(0x5db8d800 + i)});
  }
  const absl::Time start = absl::Now();
  absl::BlockingCounter done(kLookups);
  std::vector<std::optional<absl::StatusOr<std::vector<IpAddress>>>> results(kLookups);
  for (int i = 0; i < kLookups; ++i) {
    resolver_->Resolve(absl::StrCat("n", i, ".test"),
                       [&, i](absl::StatusOr<std::vector<IpAddress>> answers) {
                         results[i] = std::move(answers);
                         done.DecrementCount();
                       });
  }
  done.Wait();
  std::cout << kLookups << " lookups at once answered in " << (absl::Now() - start) << " with "
            << dns_->TotalQueries() - 2 * kLookups << " queries sent again" << std::endl;
  for (int i = 0; i < kLookups; ++i) {
    ASSERT_TRUE(results[i]->ok()) << i << ": " << results[i]->status();
    EXPECT_THAT(**results[i], UnorderedElementsAre(IpAddress::Ipv4(0x5db8d800 + i)));
  }
}

TEST_F(VerifierCaresResolverTest, ShutdownAnswersPendingLookupsCancelled) {
  dns_->Set("silent.test", std::vector<FakeDnsAnswer>{FakeDnsAnswer::Silent()});
  absl::Notification done;
  absl::Status status;
  resolver_->Resolve("silent.test", [&](absl::StatusOr<std::vector<IpAddress>> answers) {
    status = answers.status();
    done.Notify();
  });
  resolver_.reset();
  ASSERT_TRUE(done.HasBeenNotified());
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

// /etc/hosts names "localhost" everywhere; the resolver never answers from the file (c-ares
// 1.18 keeps the name from DNS too). The fetch path refuses the name before resolving anyway.
TEST_F(VerifierCaresResolverTest, NeverAnswersFromEtcHosts) {
  const absl::StatusOr<std::vector<IpAddress>> answers = Resolve("localhost");
  EXPECT_FALSE(answers.ok()) << "answered " << answers->front().ToString();
}

// c-ares falls back to TCP for truncated answers; the fake server answers there too.
TEST_F(VerifierCaresResolverTest, FakeServerAnswersOverTcp) {
  dns_->Set("tcp.test", {Ip("93.184.216.34")});
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(dns_->port());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // id 0x1234, RD, one question: tcp.test A IN; framed by its 2-byte length.
  const std::string query(
      "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
      "\x03tcp\x04test\x00\x00\x01\x00\x01",
      26);
  const std::string framed = std::string("\x00\x1a", 2) + query;
  ASSERT_EQ(send(fd, framed.data(), framed.size(), 0), static_cast<ssize_t>(framed.size()));
  unsigned char response[512];
  size_t got = 0;
  while (got < 2 + 12 + 14 + 16) {
    const ssize_t n = recv(fd, response + got, sizeof(response) - got, 0);
    ASSERT_GT(n, 0);
    got += static_cast<size_t>(n);
  }
  close(fd);
  EXPECT_EQ((response[0] << 8) | response[1], 12 + 14 + 16);  // header, question, one A record
  EXPECT_EQ(response[2], 0x12);
  EXPECT_EQ(response[3], 0x34);
  EXPECT_EQ(response[2 + 7], 1);  // ANCOUNT
  EXPECT_EQ(std::vector<int>(response + got - 4, response + got),
            (std::vector<int>{93, 184, 216, 34}));
  EXPECT_EQ(dns_->Queries("tcp.test", 1), 1);
}

TEST(VerifierCaresResolverConfigTest, RefusesBadConfig) {
  CaresResolverConfig config;
  config.servers = "not a server list";
  EXPECT_EQ(CaresResolver::Create(config).status().code(), absl::StatusCode::kInvalidArgument);
  config = {};
  config.timeout = absl::ZeroDuration();
  EXPECT_EQ(CaresResolver::Create(config).status().code(), absl::StatusCode::kInvalidArgument);
  config = {};
  config.tries = 0;
  EXPECT_EQ(CaresResolver::Create(config).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace portcullis::verifier::fetch
