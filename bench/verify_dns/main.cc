// verify_dns: the DNS server bench/verify's verifier resolves its sources' host names through
// (c-ares, --dns_servers), so that every fetch of the benchmark looks a name up as it would on
// the web. The integration tests' FakeDnsServer (tests/support), loaded from a file.
//
//   verify_dns NAMES_FILE
//
// NAMES_FILE: one "NAME ADDRESS" per line (IPv4 or IPv6 literal; a name may appear on several
// lines for several addresses). Every other name is NXDOMAIN; a name with only IPv4 addresses
// answers AAAA queries with no data. Binds 127.0.0.1 on an ephemeral port (UDP and TCP), prints
// "listening 127.0.0.1:PORT" and serves until SIGTERM or SIGINT, then prints the number of
// queries it answered. Not run by ctest; see bench/README.md.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/net/ip_address.h"
#include "tests/support/fake_dns_server.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: verify_dns NAMES_FILE\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "verify_dns: cannot read %s\n", argv[1]);
    return 1;
  }
  std::map<std::string, std::vector<portcullis::net::IpAddress>> table;
  std::string name;
  std::string address;
  while (in >> name >> address) {
    absl::StatusOr<portcullis::net::IpAddress> parsed = portcullis::net::IpAddress::Parse(address);
    if (!parsed.ok()) {
      std::fprintf(stderr, "verify_dns: %s: not an address: %s\n", name.c_str(), address.c_str());
      return 1;
    }
    table[name].push_back(*parsed);
  }
  // Block the signals before the server's thread starts, so that only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::StatusOr<std::unique_ptr<portcullis::testing::FakeDnsServer>> server =
      portcullis::testing::FakeDnsServer::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "verify_dns: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  for (auto& [host, addresses] : table) {
    (*server)->Set(host, std::move(addresses));
  }
  std::printf("listening %s names %zu\n", (*server)->address().c_str(), table.size());
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  std::printf("queries %d\n", (*server)->TotalQueries());
  return 0;
}
