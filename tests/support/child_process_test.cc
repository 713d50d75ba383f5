#include "tests/support/child_process.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"

namespace portcullis::testing {
namespace {

// The first port of the kernel's ephemeral range (outgoing connections take their local ports
// from it).
int EphemeralRangeStart() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  range >> low;
  return low;
}

TEST(FreeLoopbackPortTest, APortBelowTheEphemeralRangeThatAListenerCanTake) {
  const int low = EphemeralRangeStart();
  for (int i = 0; i < 20; ++i) {
    const int port = FreeLoopbackPort();
    ASSERT_GT(port, 0);
    EXPECT_LT(port, low) << "outgoing connections could take port " << port;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << port;
    EXPECT_EQ(::listen(fd, 1), 0) << port;
    ::close(fd);
  }
}

}  // namespace
}  // namespace portcullis::testing
