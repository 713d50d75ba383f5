#include "common/crypto/base64.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

// RFC 4648 §10.
TEST(DecodeBase64StrictTest, Rfc4648Vectors) {
  EXPECT_EQ(*DecodeBase64Strict(""), "");
  EXPECT_EQ(*DecodeBase64Strict("Zg=="), "f");
  EXPECT_EQ(*DecodeBase64Strict("Zm8="), "fo");
  EXPECT_EQ(*DecodeBase64Strict("Zm9v"), "foo");
  EXPECT_EQ(*DecodeBase64Strict("Zm9vYg=="), "foob");
  EXPECT_EQ(*DecodeBase64Strict("Zm9vYmE="), "fooba");
  EXPECT_EQ(*DecodeBase64Strict("Zm9vYmFy"), "foobar");
  EXPECT_EQ(*DecodeBase64Strict("+/+/"), "\xfb\xff\xbf");
}

TEST(DecodeBase64StrictTest, RefusesEverythingLenient) {
  for (const char* encoded : {"Zg", "Zg=", "Zm8", "Zg===", "====", "Z===", "Zm9v\n", " Zm9v",
                              "Zm 9v", "Zm9v====", "Zh==", "Zm9=", "Zm-_", "Zg==Zg==", "Zm=v"}) {
    EXPECT_FALSE(DecodeBase64Strict(encoded).ok()) << encoded;
  }
}

}  // namespace
}  // namespace portcullis::crypto
