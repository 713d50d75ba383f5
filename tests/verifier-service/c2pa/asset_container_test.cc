#include "verifier-service/src/c2pa/asset_container.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"

namespace portcullis::verifier::c2pa {
namespace {

using ::portcullis::testing::C2paTestCredential;
using ::portcullis::testing::MakeC2paTestCredential;
using ::portcullis::testing::PlainTestJpeg;
using ::portcullis::testing::PlainTestPng;
using ::portcullis::testing::SignC2paTestAsset;

C2paTestCredential Credential() {
  static const C2paTestCredential credential = MakeC2paTestCredential(
      "Container Test", absl::Now() - absl::Hours(1), absl::Now() + absl::Hours(24));
  return credential;
}

TEST(VerifierC2paAssetContainerTest, FindsNothingInPlainFiles) {
  const absl::StatusOr<std::optional<std::string>> jpeg =
      ExtractManifestStore(PlainTestJpeg(), MediaType::kJpeg, C2paLimits{});
  ASSERT_TRUE(jpeg.ok()) << jpeg.status();
  EXPECT_FALSE(jpeg->has_value());
  const absl::StatusOr<std::optional<std::string>> png =
      ExtractManifestStore(PlainTestPng(), MediaType::kPng, C2paLimits{});
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_FALSE(png->has_value());
}

TEST(VerifierC2paAssetContainerTest, ReassemblesAManifestSplitAcrossApp11Segments) {
  // 200 KiB of padding is not part of the manifest; a long generator name makes the manifest
  // itself span several 64 KiB segments.
  testing::C2paTestManifest manifest;
  manifest.claim_generator = std::string(150 * 1024, 'g');
  const std::string signed_jpeg =
      SignC2paTestAsset(PlainTestJpeg(1024), MediaType::kJpeg, Credential(), manifest);
  const absl::StatusOr<std::optional<std::string>> store =
      ExtractManifestStore(signed_jpeg, MediaType::kJpeg, C2paLimits{});
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE(store->has_value());
  EXPECT_GT((*store)->size(), 150u * 1024);
  EXPECT_EQ((*store)->substr(4, 4), "jumb");
  EXPECT_NE((*store)->find(manifest.claim_generator), std::string::npos);
}

TEST(VerifierC2paAssetContainerTest, FindsThePngCabxChunk) {
  const std::string signed_png =
      SignC2paTestAsset(PlainTestPng(), MediaType::kPng, Credential(), {});
  const absl::StatusOr<std::optional<std::string>> store =
      ExtractManifestStore(signed_png, MediaType::kPng, C2paLimits{});
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE(store->has_value());
  EXPECT_EQ((*store)->substr(4, 4), "jumb");
}

TEST(VerifierC2paAssetContainerTest, RefusesBrokenContainers) {
  const C2paLimits limits;
  EXPECT_FALSE(ExtractManifestStore("not a jpeg", MediaType::kJpeg, limits).ok());
  EXPECT_FALSE(ExtractManifestStore("not a png", MediaType::kPng, limits).ok());
  const std::string signed_jpeg =
      SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, Credential(), {});
  // Cut inside the APP11 segment: its length runs past the end of the file.
  EXPECT_FALSE(ExtractManifestStore(signed_jpeg.substr(0, 200), MediaType::kJpeg, limits).ok());
  const std::string signed_png =
      SignC2paTestAsset(PlainTestPng(), MediaType::kPng, Credential(), {});
  EXPECT_FALSE(ExtractManifestStore(signed_png.substr(0, 100), MediaType::kPng, limits).ok());
  // A second packet 1 of the same box instance.
  const size_t segment_length =
      (static_cast<uint8_t>(signed_jpeg[4]) << 8) | static_cast<uint8_t>(signed_jpeg[5]);
  const std::string segment = signed_jpeg.substr(2, 2 + segment_length);
  const std::string twice = absl::StrCat(signed_jpeg.substr(0, 2), segment, signed_jpeg.substr(2));
  EXPECT_FALSE(ExtractManifestStore(twice, MediaType::kJpeg, limits).ok());
  // A file over the asset cap.
  C2paLimits small;
  small.max_asset_bytes = 100;
  EXPECT_FALSE(ExtractManifestStore(signed_jpeg, MediaType::kJpeg, small).ok());
}

TEST(VerifierC2paAssetContainerTest, NamesAndSniffsMediaTypes) {
  EXPECT_EQ(MediaTypeFromContentType("image/jpeg").value(), MediaType::kJpeg);
  EXPECT_EQ(MediaTypeFromContentType("image/png").value(), MediaType::kPng);
  EXPECT_FALSE(MediaTypeFromContentType("image/gif").ok());
  EXPECT_EQ(SniffMediaType(PlainTestJpeg()).value(), MediaType::kJpeg);
  EXPECT_EQ(SniffMediaType(PlainTestPng()).value(), MediaType::kPng);
  EXPECT_FALSE(SniffMediaType("GIF89a").ok());
  EXPECT_EQ(MediaTypeName(MediaType::kPng), "image/png");
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
