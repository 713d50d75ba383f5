#include "common/lifecycle/thread_name.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace portcullis::lifecycle {
namespace {

// What the kernel shows for the calling thread: the name ps, top and bench/load read.
std::string KernelNameOfThisThread() {
  std::ifstream comm("/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

TEST(ThreadNameTest, TheKernelShowsTheName) {
  std::string seen;
  std::thread([&] {
    NameCurrentThread("batch-writer");
    seen = KernelNameOfThisThread();
  }).join();
  EXPECT_EQ(seen, "batch-writer");
}

TEST(ThreadNameTest, ALongNameIsCutAtFifteenBytes) {
  std::string seen;
  std::thread([&] {
    NameCurrentThread("a-name-longer-than-linux-keeps");
    seen = KernelNameOfThisThread();
  }).join();
  EXPECT_EQ(seen, "a-name-longer-t");
}

}  // namespace
}  // namespace portcullis::lifecycle
