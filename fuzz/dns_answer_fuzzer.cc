// DNS answer handling of the resolver (verifier-service/src/fetch/cares_resolver) on arbitrary
// bytes read as a DNS response. c-ares 1.18 does not export the parser ares_getaddrinfo uses
// (ares__parse_into_addrinfo), so the bytes go through ares_parse_a_reply and
// ares_parse_aaaa_reply — thin wrappers over that same parser — and the addresses they find are
// handed, as the ares_addrinfo nodes ares_getaddrinfo would build, to AddressesOfAnswer (what the
// resolver's callback receives). A last node with an input-chosen family and a short length
// checks that malformed nodes are skipped. c-ares itself is Debian's uninstrumented build: it is
// exercised, not coverage-guided.
// Invariants: OK exactly when some A/AAAA address was found; the result is non-empty, without
// duplicates, and every address is one of the answer's.

#include <arpa/inet.h>
#include <ares.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "common/net/ip_address.h"
#include "fuzz/fuzz_check.h"
#include "verifier-service/src/fetch/cares_resolver.h"

namespace {

namespace net = portcullis::net;
constexpr int kMaxAnswers = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::deque<sockaddr_storage> storage;  // Stable addresses for the nodes.
  std::deque<ares_addrinfo_node> nodes;
  std::vector<net::IpAddress> expected;
  auto add_node = [&](int family, const void* address, socklen_t length) {
    sockaddr_storage& slot = storage.emplace_back();
    std::memset(&slot, 0, sizeof(slot));
    std::memcpy(&slot, address, std::min<size_t>(length, sizeof(slot)));
    reinterpret_cast<sockaddr*>(&slot)->sa_family = static_cast<sa_family_t>(family);
    ares_addrinfo_node& node = nodes.emplace_back();
    node = ares_addrinfo_node{};
    node.ai_family = family;
    node.ai_socktype = SOCK_STREAM;
    node.ai_addrlen = length;
    node.ai_addr = reinterpret_cast<sockaddr*>(&slot);
  };

  ares_addrttl v4[kMaxAnswers];
  int v4_count = kMaxAnswers;
  hostent* host = nullptr;
  const int a_status = ares_parse_a_reply(data, static_cast<int>(size), &host, v4, &v4_count);
  if (host != nullptr) {
    ares_free_hostent(host);
  }
  if (a_status == ARES_SUCCESS) {
    FUZZ_CHECK(v4_count >= 0 && v4_count <= kMaxAnswers, std::to_string(v4_count));
    for (int i = 0; i < v4_count; ++i) {
      sockaddr_in in{};
      in.sin_family = AF_INET;
      in.sin_addr = v4[i].ipaddr;
      add_node(AF_INET, &in, sizeof(in));
      expected.push_back(net::IpAddress::Ipv4(ntohl(v4[i].ipaddr.s_addr)));
    }
  }
  ares_addr6ttl v6[kMaxAnswers];
  int v6_count = kMaxAnswers;
  const int aaaa_status = ares_parse_aaaa_reply(data, static_cast<int>(size), nullptr, v6, &v6_count);
  if (aaaa_status == ARES_SUCCESS) {
    FUZZ_CHECK(v6_count >= 0 && v6_count <= kMaxAnswers, std::to_string(v6_count));
    for (int i = 0; i < v6_count; ++i) {
      sockaddr_in6 in6{};
      in6.sin6_family = AF_INET6;
      std::memcpy(&in6.sin6_addr, &v6[i].ip6addr, sizeof(in6.sin6_addr));
      add_node(AF_INET6, &in6, sizeof(in6));
      std::array<uint16_t, 8> groups{};
      for (size_t k = 0; k < 8; ++k) {
        groups[k] = static_cast<uint16_t>((in6.sin6_addr.s6_addr[2 * k] << 8) |
                                          in6.sin6_addr.s6_addr[2 * k + 1]);
      }
      expected.push_back(net::IpAddress::Ipv6(groups));
    }
  }
  if (size > 0) {
    // A node the resolver must skip: a short length for its family, or another family.
    const int family = data[0] % 3 == 0 ? AF_INET : data[0] % 3 == 1 ? AF_INET6 : AF_UNIX;
    const socklen_t length = family == AF_INET ? sizeof(sockaddr_in) - 1 : family == AF_INET6 ? sizeof(sockaddr_in6) - 1 : 16;
    add_node(family, data, std::min<socklen_t>(length, static_cast<socklen_t>(size)));
  }
  for (size_t i = 0; i + 1 < nodes.size(); ++i) {
    nodes[i].ai_next = &nodes[i + 1];
  }
  ares_addrinfo info{};
  info.nodes = nodes.empty() ? nullptr : &nodes.front();

  const auto addresses = portcullis::verifier::fetch::AddressesOfAnswer(&info, "fuzz.example");
  if (expected.empty()) {
    FUZZ_CHECK(!addresses.ok() && absl::IsNotFound(addresses.status()),
               addresses.status().ToString());
    return 0;
  }
  FUZZ_CHECK(addresses.ok(), addresses.status().ToString());
  FUZZ_CHECK(!addresses->empty(), "empty");
  for (size_t i = 0; i < addresses->size(); ++i) {
    const net::IpAddress& address = (*addresses)[i];
    FUZZ_CHECK(std::find(expected.begin(), expected.end(), address) != expected.end(),
               address.ToString());
    FUZZ_CHECK(std::find(addresses->begin() + i + 1, addresses->end(), address) == addresses->end(),
               address.ToString() + " twice");
  }
  // Every distinct answer address is kept.
  std::vector<net::IpAddress> distinct;
  for (const net::IpAddress& address : expected) {
    if (std::find(distinct.begin(), distinct.end(), address) == distinct.end()) {
      distinct.push_back(address);
    }
  }
  FUZZ_CHECK(distinct.size() == addresses->size(), std::to_string(addresses->size()));
  return 0;
}
