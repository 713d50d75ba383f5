#include "common/crypto/sha256.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(ToHex(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, BinaryInputWithNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256(with_nul), Sha256("a"));
}

// Each thread reuses its own digest context: hashing from many threads at once, and many times
// on one thread, gives every input its own digest.
TEST(Sha256Test, ManyThreadsHashingAtOnceGetTheirOwnDigests) {
  const std::string abc_hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  const std::string empty_hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  std::vector<int> wrong(8, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool abc = (i + t) % 2 == 0;
        if (ToHex(Sha256(abc ? "abc" : "")) != (abc ? abc_hex : empty_hex)) {
          ++wrong[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong, std::vector<int>(8, 0));
}

}  // namespace
}  // namespace portcullis::crypto
