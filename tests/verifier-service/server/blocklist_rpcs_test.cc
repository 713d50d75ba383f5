#include "verifier-service/src/server/blocklist_rpcs.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

v1::SourceBlock Block(const std::string& site, v1::BlockKind kind, const std::string& value) {
  v1::SourceBlock block;
  block.set_site(site);
  block.set_kind(kind);
  block.set_value(value);
  return block;
}

TEST(VerifierBlocklistRpcTest, ValidBlocksAreNormalized) {
  absl::StatusOr<store::BlockEntry> entry =
      ValidateBlock(Block("B.Example", v1::BLOCK_KIND_DOMAIN, "*.Evil.Example"));
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->site, "b.example");
  EXPECT_EQ(entry->kind, intake::BlockKind::kDomain);
  EXPECT_EQ(entry->value, "evil.example");
  entry = ValidateBlock(Block("", v1::BLOCK_KIND_PREFIX, "https://H.example/~x/"));
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->site, "") << "global";
  EXPECT_EQ(entry->value, "https://h.example/~x/");
}

TEST(VerifierBlocklistRpcTest, InvalidBlocksNameTheField) {
  absl::StatusOr<store::BlockEntry> entry =
      ValidateBlock(Block("", v1::BLOCK_KIND_UNSPECIFIED, "evil.example"));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(entry.status().message().find("block.kind"), absl::string_view::npos);
  entry = ValidateBlock(Block("", v1::BLOCK_KIND_DOMAIN, "https://evil.example/"));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(entry.status().message().find("block.value"), absl::string_view::npos);
  entry = ValidateBlock(Block("*.b.example", v1::BLOCK_KIND_DOMAIN, "evil.example"));
  EXPECT_NE(entry.status().message().find("block.site"), absl::string_view::npos);
  entry = ValidateBlock(Block("", v1::BLOCK_KIND_PREFIX, "not a url"));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VerifierBlocklistRpcTest, PageTokenRoundTripsAndForgeriesAreRefused) {
  v1::ListBlocksRequest request;
  request.set_site("b.example");
  request.set_page_token(BlockPageToken({"b.example", intake::BlockKind::kPrefix, "https://x/"}));
  absl::StatusOr<BlockPage> page = ValidateBlockPage(request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->after_kind, "PREFIX");
  EXPECT_EQ(page->after_value, "https://x/");
  EXPECT_EQ(page->size, 100);
  request.set_page_token("bm90IGEgdG9rZW4");
  EXPECT_EQ(ValidateBlockPage(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.clear_page_token();
  request.set_page_size(1001);
  EXPECT_EQ(ValidateBlockPage(request).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace portcullis::verifier::server
