#include "common/crypto/random.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

TEST(RandomHexTest, LengthAlphabetAndNoRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string value = RandomHex(16);
    ASSERT_EQ(value.size(), 32u);
    EXPECT_EQ(value.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(UniqueIdHexTest, LengthAlphabetAndNoRepeatsAcrossThreads) {
  std::vector<std::string> first(10000), second(10000);
  std::thread other([&] {
    for (std::string& id : second) id = UniqueIdHex();
  });
  for (std::string& id : first) id = UniqueIdHex();
  other.join();
  std::set<std::string> seen;
  for (const std::vector<std::string>* ids : {&first, &second}) {
    for (const std::string& id : *ids) {
      ASSERT_EQ(id.size(), 32u);
      EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
      seen.insert(id);
    }
  }
  EXPECT_EQ(seen.size(), 20000u);
}

}  // namespace
}  // namespace portcullis::crypto
