// Erasure on a real PostgreSQL (issue 17): what goes (mentions, content, jobs), what the
// tombstones hold (nothing readable), a re-send of an erased source through the real intake
// batch statement (FAILED `erased`, no job), undo, and site-bound callers.
#include "verifier-service/src/store/pg_erasure_store.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/served_site_fixture.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgErasureStoreTest : public ServedSiteStoreTest {
 protected:
  void OpenWithSecondSite(const std::string& url) {
    Open(url);
    erasures_ = std::make_unique<PgErasureStore>(*pool_);
    PgSiteStore sites(*pool_);
    ASSERT_TRUE(sites.AddSite("c.example", {}).ok());
    const TargetRule everything{"https://c.example/", TargetKind::kPrefix, "c.example"};
    ASSERT_TRUE(sites.AddTargets(absl::MakeConstSpan(&everything, 1), {}).ok());
  }

  // A submission from `source` (normalized) to `target` on its site.
  static NewMention To(const std::string& source, const std::string& target,
                       const std::string& site) {
    return {source, target, crypto::Sha256(source), crypto::Sha256(target), site, target, source};
  }

  SubmitResult SubmitOk(const NewMention& mention) {
    absl::StatusOr<SubmitResult> result = store_->Submit(mention);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : SubmitResult();
  }

  // What verification would have stored for alice's mentions.
  void VerifyAsAlice(const std::string& source_like) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    transaction.exec0(absl::StrCat(
        "UPDATE mentions SET state = 'VERIFIED', author_url = 'https://alice.example/', "
        "author_name = 'Alice Person', author_photo = 'https://alice.example/me.jpg', "
        "content_text = 'Hi from Alice', content_html = '<p>Hi from Alice</p>' "
        "WHERE source LIKE '",
        source_like, "'"));
  }

  std::string Text(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<std::string>();
  }

  std::unique_ptr<PgErasureStore> erasures_;
};

constexpr char kAlice[] = "https://alice.example/";

TEST_F(VerifierPgErasureStoreTest, AuthorErasureDeletesEverythingOfThePersonAndReSendsAreErased) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenWithSecondSite(db->connection_string());
  SubmitOk(Mention("https://alice.example/a"));
  SubmitOk(To("https://alice.example/b", "https://c.example/post", "c.example"));
  SubmitOk(Mention("https://bob.example/c"));
  VerifyAsAlice("https://alice.example/%");
  ASSERT_EQ(Count("SELECT count(*) FROM verification_jobs"), 3);

  // The dry run lists what would go and changes nothing.
  absl::StatusOr<ErasureOutcome> dry =
      erasures_->Erase({ErasureKind::kAuthorUrl, kAlice}, true, {});
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->mentions, 2);
  ASSERT_EQ(dry->listed.size(), 2u);
  EXPECT_EQ(dry->listed[0].source, "https://alice.example/a");
  EXPECT_EQ(dry->listed[1].site, "c.example");
  EXPECT_EQ(dry->tombstones, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures"), 0);

  absl::StatusOr<ErasureOutcome> erased =
      erasures_->Erase({ErasureKind::kAuthorUrl, kAlice}, false, {});
  ASSERT_TRUE(erased.ok()) << erased.status();
  EXPECT_EQ(erased->mentions, 2);
  EXPECT_EQ(erased->tombstones, 2);  // One per erased source, for every site.
  // Nothing of the person is left: no row names her, no job, no content.
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE source LIKE '%alice%' OR author_url LIKE "
                  "'%alice%' OR author_name LIKE '%Alice%' OR content_text LIKE '%Alice%'"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 1);
  // The tombstones are hashes: salted (not the plain SHA-256 the mentions table keys by).
  EXPECT_EQ(Count("SELECT count(*) FROM erasures WHERE site_domain = '' AND kind = 'SOURCE'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures e WHERE e.key_hash = "
                  "sha256(convert_to('https://alice.example/a', 'UTF8'))"),
            0);

  // A re-send of an erased source, through the real intake: FAILED `erased`, no job, no content.
  const SubmitResult again = SubmitOk(Mention("https://alice.example/a"));
  EXPECT_EQ(again.state, MentionState::kFailed);
  EXPECT_EQ(Text(absl::StrCat("SELECT reason FROM mentions WHERE id = '", again.mention_id, "'")),
            "erased");
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM verification_jobs WHERE mention_id = '",
                               again.mention_id, "'")),
            0);
  // Bob's mentions are handled as always.
  EXPECT_EQ(SubmitOk(Mention("https://bob.example/d")).state, MentionState::kPending);

  // Undo: the tombstones go, and so does the FAILED `erased` re-send; the next re-send is new.
  absl::StatusOr<int64_t> undone = erasures_->Undo({ErasureKind::kAuthorUrl, kAlice}, {});
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_EQ(*undone, 2);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures"), 0);
  const SubmitResult after = SubmitOk(Mention("https://alice.example/a"));
  EXPECT_EQ(after.state, MentionState::kPending);
  EXPECT_TRUE(after.created);
}

TEST_F(VerifierPgErasureStoreTest, HostErasureCoversSourcesNeverSeenBefore) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenWithSecondSite(db->connection_string());
  SubmitOk(Mention("https://carol.example/1"));
  SubmitOk(Mention("https://carol.example:8443/2"));  // source_host keeps only the host.
  SubmitOk(Mention("https://notcarol.example/3"));
  absl::StatusOr<ErasureOutcome> erased =
      erasures_->Erase({ErasureKind::kSourceHost, "carol.example"}, false, {});
  ASSERT_TRUE(erased.ok()) << erased.status();
  EXPECT_EQ(erased->mentions, 2);
  EXPECT_EQ(erased->tombstones, 3);  // Two sources and the host.
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 1);
  // A page of that host never submitted before is erased too, on any site.
  EXPECT_EQ(SubmitOk(To("https://carol.example/new", "https://c.example/x", "c.example")).state,
            MentionState::kFailed);
  EXPECT_EQ(SubmitOk(Mention("https://notcarol.example/4")).state, MentionState::kPending);
}

TEST_F(VerifierPgErasureStoreTest, MentionErasureIsForItsSiteAndItsSource) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenWithSecondSite(db->connection_string());
  const SubmitResult one = SubmitOk(Mention("https://dave.example/post"));
  absl::StatusOr<ErasureOutcome> erased =
      erasures_->Erase({ErasureKind::kMention, one.mention_id}, false, {});
  ASSERT_TRUE(erased.ok()) << erased.status();
  EXPECT_EQ(erased->mentions, 1);
  EXPECT_EQ(erased->tombstones, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures WHERE site_domain = 'b.example'"), 1);
  // The same source to another page of the site: erased; to another site: not.
  EXPECT_EQ(SubmitOk(To("https://dave.example/post", "https://b.example/other", "b.example")).state,
            MentionState::kFailed);
  EXPECT_EQ(SubmitOk(To("https://dave.example/post", "https://c.example/post", "c.example")).state,
            MentionState::kPending);
  // A mention that does not exist (any more).
  EXPECT_EQ(erasures_->Erase({ErasureKind::kMention, one.mention_id}, false, {}).status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<int64_t> undone = erasures_->Undo({ErasureKind::kMention, one.mention_id}, {});
  ASSERT_TRUE(undone.ok());
  EXPECT_EQ(*undone, 1);
}

TEST_F(VerifierPgErasureStoreTest, ASiteBoundCallerErasesOnlyItsSites) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenWithSecondSite(db->connection_string());
  const SubmitResult on_b = SubmitOk(Mention("https://alice.example/a"));
  const SubmitResult on_c =
      SubmitOk(To("https://alice.example/b", "https://c.example/post", "c.example"));
  VerifyAsAlice("https://alice.example/%");
  const SiteBinding only_c = {"c.example"};

  // Another site's mention: refused, and still there.
  EXPECT_EQ(
      erasures_->Erase({ErasureKind::kMention, on_b.mention_id}, false, only_c).status().code(),
      absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM mentions WHERE id = '", on_b.mention_id, "'")),
            1);
  // By author: only c.example's mention goes, and the tombstone is c.example's.
  absl::StatusOr<ErasureOutcome> erased =
      erasures_->Erase({ErasureKind::kAuthorUrl, kAlice}, false, only_c);
  ASSERT_TRUE(erased.ok()) << erased.status();
  EXPECT_EQ(erased->mentions, 1);
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM mentions WHERE id = '", on_c.mention_id, "'")),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures WHERE site_domain = 'c.example'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures"), 1);
  // An unbound erasure's every-site tombstones cannot be undone by a bound caller.
  ASSERT_TRUE(erasures_->Erase({ErasureKind::kSourceHost, "zed.example"}, false, {}).ok());
  absl::StatusOr<int64_t> undone =
      erasures_->Undo({ErasureKind::kSourceHost, "zed.example"}, only_c);
  ASSERT_TRUE(undone.ok());
  EXPECT_EQ(*undone, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM erasures WHERE site_domain = ''"), 1);
}

}  // namespace
}  // namespace portcullis::verifier::store
