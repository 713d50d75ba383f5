#pragma once

// FakeDnsServer: a DNS server on 127.0.0.1 (UDP and TCP, one ephemeral port) answering A and AAAA
// queries from a table, for tests of the real CaresResolver. Per name it holds a script of
// answers: the n-th query of a type gets the n-th entry (the last one repeats), so a test can
// make a name rebind between two lookups, fail, or stay silent (for timeouts). It counts queries.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/net/ip_address.h"

namespace portcullis::testing {

struct FakeDnsAnswer {
  enum class Kind {
    kAddresses,  // NOERROR with the addresses of the query's type (none: NODATA)
    kNxDomain,
    kServFail,
    kSilent,  // no response at all
  };
  Kind kind = Kind::kAddresses;
  std::vector<net::IpAddress> addresses;

  static FakeDnsAnswer Addresses(std::vector<net::IpAddress> addresses) {
    return {Kind::kAddresses, std::move(addresses)};
  }
  static FakeDnsAnswer NxDomain() { return {Kind::kNxDomain, {}}; }
  static FakeDnsAnswer ServFail() { return {Kind::kServFail, {}}; }
  static FakeDnsAnswer Silent() { return {Kind::kSilent, {}}; }
};

class FakeDnsServer {
 public:
  // Binds 127.0.0.1 on an ephemeral port (UDP and TCP) and starts answering.
  static absl::StatusOr<std::unique_ptr<FakeDnsServer>> Start();
  ~FakeDnsServer();

  // "127.0.0.1:PORT", as CaresResolverConfig::servers takes it.
  std::string address() const;
  uint16_t port() const { return port_; }

  // The answers to `name` (case-insensitive, without the trailing dot): the n-th A query gets
  // script[n] (the last entry once the script is used up), and so does the n-th AAAA query.
  // Names not in the table: NXDOMAIN.
  void Set(const std::string& name, std::vector<FakeDnsAnswer> script);
  // Shorthand: always these addresses.
  void Set(const std::string& name, std::vector<net::IpAddress> addresses);

  // Queries received for `name` of type A (1) or AAAA (28); all types when `type` is 0.
  int Queries(const std::string& name, int type = 0) const;
  // Every query received.
  int TotalQueries() const;

 private:
  FakeDnsServer(int udp_fd, int tcp_fd, uint16_t port);
  void Serve();
  // The response to one query message; empty when it must go unanswered.
  std::string Answer(const std::string& query);

  const int udp_fd_;
  const int tcp_fd_;
  const uint16_t port_;
  std::thread thread_;

  mutable absl::Mutex mutex_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::map<std::string, std::vector<FakeDnsAnswer>> table_ ABSL_GUARDED_BY(mutex_);
  std::map<std::pair<std::string, int>, int> queries_ ABSL_GUARDED_BY(mutex_);
  int total_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace portcullis::testing
