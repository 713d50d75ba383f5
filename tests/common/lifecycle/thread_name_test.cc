#include "common/lifecycle/thread_name.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "gtest/gtest.h"

namespace portcullis::lifecycle {
namespace {

// The name the kernel shows (what ps, top and bench/load read) of a thread that named itself.
std::string KernelNameOfAThreadNamed(std::string_view name) {
  std::string seen;
  std::thread([&] {
    NameCurrentThread(name);
    std::ifstream comm("/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/comm");
    std::getline(comm, seen);
  }).join();
  return seen;
}

TEST(ThreadNameTest, TheKernelShowsTheName) {
  EXPECT_EQ(KernelNameOfAThreadNamed("batch-writer"), "batch-writer");
}

TEST(ThreadNameTest, ALongNameIsCutAtFifteenBytes) {
  EXPECT_EQ(KernelNameOfAThreadNamed("a-name-longer-than-linux-keeps"), "a-name-longer-t");
}

}  // namespace
}  // namespace portcullis::lifecycle
