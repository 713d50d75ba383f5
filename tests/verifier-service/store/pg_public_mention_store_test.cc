#include "verifier-service/src/store/pg_public_mention_store.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/served_site_fixture.h"
#include "verifier-service/src/store/pg_blocklist_store.h"
#include "verifier-service/src/store/pg_moderation_store.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgPublicMentionStoreTest : public ServedSiteStoreTest {
 protected:
  void OpenPublic(const std::string& url) {
    Open(url);
    public_ = std::make_unique<PgPublicMentionStore>(*pool_);
  }

  // Submits a mention of `target` from `source`; its UUID.
  std::string Submit(const std::string& source, const std::string& target) {
    NewMention mention = Mention(source);
    mention.target = target;
    mention.target_hash = crypto::Sha256(target);
    mention.normalized_target = target;
    absl::StatusOr<SubmitResult> result = store_->Submit(mention);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->mention_id : "";
  }

  // What the verification pipeline does to a mention, as SQL: VERIFIED with a type, or FAILED.
  void Exec(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::work transaction(connection);
    transaction.exec0(sql);
    transaction.commit();
  }
  void Verify(const std::string& id, const std::string& type) {
    Exec("UPDATE mentions SET state = 'VERIFIED', type = '" + type +
         "', content_text = 'hello', verified_at = now() WHERE id = '" + id + "'");
  }
  void Fail(const std::string& id) {
    Exec("UPDATE mentions SET state = 'FAILED', reason = 'no_link' WHERE id = '" + id + "'");
  }

  std::vector<int64_t> Ids(const std::vector<StoredMention>& mentions) {
    std::vector<int64_t> ids;
    for (const StoredMention& mention : mentions) {
      ids.push_back(mention.wm_id);
    }
    return ids;
  }

  std::unique_ptr<PgPublicMentionStore> public_;
};

TEST_F(VerifierPgPublicMentionStoreTest, NumericIdsAndPagesOfThePublicMentionsOnly) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(Submit("https://a.example/" + std::to_string(i), "https://b.example/post"));
  }
  for (int i = 0; i < 4; ++i) {
    Verify(ids[i], i % 2 == 0 ? "like" : "reply");
  }
  Fail(ids[3]);  // Verified once, then the link went away: not public.

  PublicMentionQuery query;
  query.domain = "b.example";
  query.page_size = 2;
  absl::StatusOr<std::vector<StoredMention>> first = public_->ListPublic(query, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 2u);
  // Newest received first, numeric ids increasing with receipt.
  EXPECT_EQ((*first)[0].mention_id, ids[2]);
  EXPECT_EQ((*first)[1].mention_id, ids[1]);
  EXPECT_GT((*first)[0].wm_id, (*first)[1].wm_id);
  query.page = 1;
  absl::StatusOr<std::vector<StoredMention>> second = public_->ListPublic(query, {});
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].mention_id, ids[0]);

  // Filters: type, since_id, by target; ascending.
  query = PublicMentionQuery();
  query.target_hashes = {crypto::Sha256("https://b.example/post")};
  query.types = {"like"};
  query.ascending = true;
  absl::StatusOr<std::vector<StoredMention>> likes = public_->ListPublic(query, {});
  ASSERT_TRUE(likes.ok()) << likes.status();
  ASSERT_EQ(likes->size(), 2u);
  EXPECT_EQ((*likes)[0].mention_id, ids[0]);
  EXPECT_EQ((*likes)[1].mention_id, ids[2]);
  query.types.clear();
  query.since_id = (*likes)[0].wm_id;
  absl::StatusOr<std::vector<StoredMention>> after = public_->ListPublic(query, {});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 2u);  // ids[1] and ids[2].

  // Out of range.
  query.page_size = 101;
  EXPECT_EQ(public_->ListPublic(query, {}).status().code(), absl::StatusCode::kInvalidArgument);
  query.page_size = 100;
  query.page = 501;
  EXPECT_EQ(public_->ListPublic(query, {}).status().code(), absl::StatusCode::kInvalidArgument);
  // Another tenant's token.
  PublicMentionQuery other;
  other.domain = "b.example";
  EXPECT_EQ(public_->ListPublic(other, {"c.example"}).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(VerifierPgPublicMentionStoreTest, AscendingPagesAreStableWhileMentionsArrive) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  std::set<int64_t> before;
  for (int i = 0; i < 25; ++i) {
    const std::string id = Submit("https://a.example/" + std::to_string(i), "https://b.example/post");
    Verify(id, "mention");
  }
  PublicMentionQuery query;
  query.domain = "b.example";
  query.ascending = true;
  query.page_size = 10;
  {
    query.page_size = 100;
    absl::StatusOr<std::vector<StoredMention>> all = public_->ListPublic(query, {});
    ASSERT_TRUE(all.ok());
    for (const StoredMention& mention : *all) {
      before.insert(mention.wm_id);
    }
    query.page_size = 10;
  }
  // Walk the pages as a numeric pager does, while new mentions arrive between the pages.
  std::vector<int64_t> seen;
  int extra = 0;
  for (query.page = 0;; ++query.page) {
    absl::StatusOr<std::vector<StoredMention>> page = public_->ListPublic(query, {});
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) {
      break;
    }
    for (const StoredMention& mention : *page) {
      seen.push_back(mention.wm_id);
    }
    for (int k = 0; k < 3 && extra < 12; ++k, ++extra) {
      Verify(Submit("https://late.example/" + std::to_string(extra), "https://b.example/post"),
             "like");
    }
  }
  // No mention twice, none of those there before missed, in received order.
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size());
  for (const int64_t id : before) {
    EXPECT_TRUE(std::count(seen.begin(), seen.end(), id) == 1) << id;
  }
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

TEST_F(VerifierPgPublicMentionStoreTest, CountsEqualAQueryOfThePublicPredicate) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  const char* kTypes[] = {"like", "like", "reply", "repost", "bookmark", "rsvp", "mention"};
  int n = 0;
  for (const char* type : kTypes) {
    Verify(Submit("https://a.example/" + std::to_string(n++), "https://b.example/post"), type);
  }
  Submit("https://a.example/pending", "https://b.example/post");
  Fail(Submit("https://a.example/failed", "https://b.example/post"));
  Verify(Submit("https://a.example/other", "https://b.example/other"), "like");

  const crypto::Sha256Digest post = crypto::Sha256("https://b.example/post");
  absl::StatusOr<PublicMentionCounts> counts =
      public_->CountPublic(absl::MakeConstSpan(&post, 1), {});
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->total, Count("SELECT count(*) FROM mentions WHERE state = 'VERIFIED' "
                                 "AND target = 'https://b.example/post'"));
  EXPECT_EQ(counts->total, 7);
  EXPECT_EQ(counts->like, 2);
  EXPECT_EQ(counts->reply, 1);
  EXPECT_EQ(counts->repost, 1);
  EXPECT_EQ(counts->bookmark, 1);
  EXPECT_EQ(counts->rsvp, 1);
  EXPECT_EQ(counts->mention, 1);

  const crypto::Sha256Digest both[] = {post, crypto::Sha256("https://b.example/other")};
  counts = public_->CountPublic(both, {});
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->total, 8);
  EXPECT_EQ(counts->like, 3);
}

// The feed hands a change out once every transaction older than it has ended, in the whole
// cluster: other tests' transactions (ctest runs two at once) can hold the newest changes back
// for a moment. Waits (at most 10 s) until no change of this database is held back.
void WaitUntilFeedSettled(const std::string& url) {
  pqxx::connection connection(url);
  for (int i = 0; i < 500; ++i) {
    pqxx::nontransaction read(connection);
    if (read.exec1("SELECT NOT EXISTS (SELECT 1 FROM mentions "
                   "  WHERE change_xid >= pg_snapshot_xmin(pg_current_snapshot())) "
                   "AND NOT EXISTS (SELECT 1 FROM mention_tombstones "
                   "  WHERE change_xid >= pg_snapshot_xmin(pg_current_snapshot()))")[0]
            .as<bool>()) {
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ADD_FAILURE() << "changes still held back after 10 s";
}

// A cache that applies every entry of the feed (an upsert, or a removal when deleted).
struct FeedCache {
  explicit FeedCache(std::string database_url) : url(std::move(database_url)) {}
  std::string url;
  std::map<int64_t, std::string> entries;  // wm_id -> content_text + type, as shown.
  std::string cursor;
  // Reads the feed to its end; with `settled`, after every change made so far can be handed out.
  int Follow(PublicMentionStore& store, bool settled = true) {
    if (settled) {
      WaitUntilFeedSettled(url);
    }
    int read = 0;
    for (;;) {
      absl::StatusOr<MentionChangePage> page = store.ListChanges("b.example", cursor, 3, {});
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok() || page->changes.empty()) {
        if (page.ok()) {
          EXPECT_EQ(page->next_cursor, cursor.empty() ? "0.0" : cursor);
        }
        return read;
      }
      for (const MentionChange& change : page->changes) {
        ++read;
        if (change.deleted) {
          entries.erase(change.wm_id);
        } else {
          entries[change.wm_id] = change.mention.content.type + ":" + change.mention.content.content_text;
        }
      }
      cursor = page->next_cursor;
    }
  }
};

TEST_F(VerifierPgPublicMentionStoreTest, ACacheFollowingTheChangeFeedEqualsThePublicView) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  FeedCache cache(url_);
  auto public_view = [&] {
    std::map<int64_t, std::string> view;
    PublicMentionQuery query;
    query.domain = "b.example";
    query.page_size = 100;
    absl::StatusOr<std::vector<StoredMention>> all = public_->ListPublic(query, {});
    EXPECT_TRUE(all.ok());
    for (const StoredMention& mention : *all) {
      view[mention.wm_id] = mention.content.type + ":" + mention.content.content_text;
    }
    return view;
  };

  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(Submit("https://a.example/" + std::to_string(i), "https://b.example/post"));
    Verify(ids.back(), "reply");
  }
  cache.Follow(*public_);
  EXPECT_EQ(cache.entries, public_view());
  EXPECT_EQ(cache.entries.size(), 6u);

  // Updates (new content), an unmention (FAILED), a removal by DELETE (RemoveSite, erasure and
  // the sweeper all end so), a new one, and one that comes back.
  Exec("UPDATE mentions SET content_text = 'edited' WHERE id = '" + ids[0] + "'");
  Fail(ids[1]);
  Exec("DELETE FROM mentions WHERE id = '" + ids[2] + "'");
  Verify(Submit("https://a.example/new", "https://b.example/post"), "like");
  Fail(ids[3]);
  Verify(ids[3], "repost");
  cache.Follow(*public_);
  EXPECT_EQ(cache.entries, public_view());
  EXPECT_EQ(cache.entries.size(), 5u);
  EXPECT_EQ(cache.entries.count(cache.entries.begin()->first), 1u);

  // A fresh cache from the start ends equal too, and nothing more is read once caught up.
  FeedCache fresh(url_);
  fresh.Follow(*public_);
  EXPECT_EQ(fresh.entries, public_view());
  EXPECT_EQ(cache.Follow(*public_), 0);

  EXPECT_EQ(public_->ListChanges("b.example", "x.1", 10, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(public_->ListChanges("b.example", "", 10, {"c.example"}).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(VerifierPgPublicMentionStoreTest, AChangeCommittedLateIsNotSkipped) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  const std::string early = Submit("https://a.example/early", "https://b.example/post");
  const std::string late = Submit("https://a.example/late", "https://b.example/post");
  FeedCache cache(url_);
  cache.Follow(*public_);

  // A transaction changes `early` and stays open; a later one changes `late` and commits.
  pqxx::connection slow_connection(url_);
  pqxx::work slow(slow_connection);
  slow.exec0("UPDATE mentions SET state = 'VERIFIED', type = 'like' WHERE id = '" + early + "'");
  Verify(late, "reply");
  // The feed holds back everything behind the open transaction...
  EXPECT_EQ(cache.Follow(*public_, /*settled=*/false), 0);
  EXPECT_TRUE(cache.entries.empty());
  slow.commit();
  // ...and hands both out once it ended: nothing was skipped.
  EXPECT_EQ(cache.Follow(*public_), 2);
  EXPECT_EQ(cache.entries.size(), 2u);
}

TEST_F(VerifierPgPublicMentionStoreTest, ABlockAndAnUnblockAreChangesOfTheMentionsTheyCover) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  const std::string evil = Submit("https://a.evil.example/x", "https://b.example/post");
  Verify(evil, "reply");
  Verify(Submit("https://notevil.example/y", "https://b.example/post"), "reply");
  FeedCache cache(url_);
  cache.Follow(*public_);
  const int64_t evil_id = Count("SELECT wm_id FROM mentions WHERE id = '" + evil + "'");

  PgBlocklistStore blocks(*pool_);
  ASSERT_TRUE(blocks.AddBlock({"b.example", BlockKind::kDomain, "evil.example"}, {}).ok());
  WaitUntilFeedSettled(url_);
  // Exactly the covered mention is news (whether it is still shown is the public predicate's
  // business, public_mentions_sql.h), on a label boundary.
  absl::StatusOr<MentionChangePage> page = public_->ListChanges("b.example", cache.cursor, 10, {});
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->changes.size(), 1u);
  EXPECT_EQ(page->changes[0].wm_id, evil_id);
  cache.Follow(*public_);
  ASSERT_TRUE(blocks.RemoveBlock({"b.example", BlockKind::kDomain, "evil.example"}, {}).ok());
  WaitUntilFeedSettled(url_);
  page = public_->ListChanges("b.example", cache.cursor, 10, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->changes.size(), 1u);
  EXPECT_EQ(page->changes[0].wm_id, evil_id);
}

TEST_F(VerifierPgPublicMentionStoreTest, ImportOfAnExportRoundTripsAndTwiceChangesNothing) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  for (int i = 0; i < 3; ++i) {
    Verify(Submit("https://a.example/" + std::to_string(i), "https://b.example/post"), "like");
  }
  absl::StatusOr<std::vector<StoredMention>> exported = public_->Export("b.example", 0, 10, {});
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->size(), 3u);

  std::vector<ImportedMention> imported;
  for (const StoredMention& mention : *exported) {
    ImportedMention& item = imported.emplace_back();
    item.pair = Mention(mention.source);
    item.pair.target = mention.target;
    item.state = mention.state;
    item.content = mention.content;
    item.received = mention.created_at - absl::Hours(24 * 365);
    item.verified = mention.verified_at;
  }
  // A new pair, and one of a site not served.
  ImportedMention fresh = imported.front();
  fresh.pair = Mention("https://a.example/imported");
  imported.push_back(fresh);
  ImportedMention stranger = fresh;
  stranger.pair.target = "https://c.example/post";
  stranger.pair.target_domain = "c.example";
  stranger.pair.normalized_target = stranger.pair.target;
  stranger.pair.target_hash = crypto::Sha256(stranger.pair.target);
  imported.push_back(stranger);

  absl::StatusOr<ImportResult> result = public_->Import(imported, false, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->created, 1);
  EXPECT_EQ(result->unchanged, 3);
  EXPECT_EQ(result->rejected, 1);
  // The imported pair keeps its received time, state and content.
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE source = 'https://a.example/imported' "
                  "AND state = 'VERIFIED' AND type = 'like' AND content_text = 'hello' "
                  "AND created_at < now() - interval '300 days'"),
            1);
  const long long rows = Count("SELECT count(*) FROM mentions");
  result = public_->Import(imported, false, {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->created, 0);
  EXPECT_EQ(result->unchanged, 4);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), rows);

  // --reverify: new pairs wait for verification instead of being trusted.
  ImportedMention check = fresh;
  check.pair = Mention("https://a.example/reverify");
  result = public_->Import(absl::MakeConstSpan(&check, 1), true, {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->created, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions m JOIN verification_jobs j ON j.mention_id = m.id "
                  "WHERE m.source = 'https://a.example/reverify' AND m.state = 'PENDING'"),
            1);
}

TEST(VerifierChangeCursorTest, RoundTripsAndRefusesStrangers) {
  absl::StatusOr<ChangeCursor> cursor = DecodeChangeCursor(EncodeChangeCursor({12345, 67}));
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(cursor->xid, 12345u);
  EXPECT_EQ(cursor->seq, 67);
  EXPECT_TRUE(DecodeChangeCursor("").ok());
  for (const char* bad : {"1", "1.2.3", "a.b", "-1.2", "1.-2", "99999999999999999999.1"}) {
    EXPECT_FALSE(DecodeChangeCursor(bad).ok()) << bad;
  }
}

// Issue 17: the avatar proxy's lookup. The hash is kept by the database whenever the photo is
// written; only a shown mention of a site with the proxy on gives its photo URL away.
TEST_F(VerifierPgPublicMentionStoreTest, AProxiedPhotoIsFoundByItsHashOnlyWhenShownAndOn) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(database);
  OpenPublic(database->connection_string());
  const std::string photo = "https://a.example/me.png";
  const std::string hash = crypto::ToHex(crypto::Sha256(photo));
  const std::string id = Submit("https://a.example/1", "https://b.example/post");
  Verify(id, "reply");
  Exec("UPDATE mentions SET author_photo = '" + photo + "' WHERE id = '" + id + "'");

  EXPECT_EQ(public_->FindProxiedPhoto(hash, {}).status().code(), absl::StatusCode::kNotFound)
      << "the proxy is off by default";
  PgModerationStore moderation(*pool_);
  absl::StatusOr<SiteRecord> on =
      moderation.SetSiteSettings("b.example", {.avatar_proxy = true}, {});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->avatar_proxy);
  EXPECT_EQ(on->moderation, "off");
  absl::StatusOr<std::string> found = public_->FindProxiedPhoto(hash, {});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, photo);
  EXPECT_EQ(public_->FindProxiedPhoto(hash, {"c.example"}).status().code(),
            absl::StatusCode::kNotFound)
      << "outside the caller's binding";

  // The mention rows carry the hash for the feeds.
  PublicMentionQuery query;
  query.domain = "b.example";
  absl::StatusOr<std::vector<StoredMention>> listed = public_->ListPublic(query, {});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].photo_proxy_hash, hash);

  // Not shown any more (hidden): not found.
  Exec("UPDATE mentions SET review = 'HIDDEN' WHERE id = '" + id + "'");
  EXPECT_EQ(public_->FindProxiedPhoto(hash, {}).status().code(), absl::StatusCode::kNotFound);
  Exec("UPDATE mentions SET review = 'UNREVIEWED' WHERE id = '" + id + "'");
  ASSERT_TRUE(public_->FindProxiedPhoto(hash, {}).ok());

  // A new photo: the old hash is gone, the new one found.
  Exec("UPDATE mentions SET author_photo = 'https://a.example/new.png' WHERE id = '" + id + "'");
  EXPECT_EQ(public_->FindProxiedPhoto(hash, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(
      public_->FindProxiedPhoto(crypto::ToHex(crypto::Sha256("https://a.example/new.png")), {})
          .ok());

  // Moderation changes alone leave the proxy on.
  absl::StatusOr<SiteRecord> moderated =
      moderation.SetModeration("b.example", Moderation::kAll, {});
  ASSERT_TRUE(moderated.ok()) << moderated.status();
  EXPECT_TRUE(moderated->avatar_proxy);
  EXPECT_EQ(moderated->moderation, "all");
}

}  // namespace
}  // namespace portcullis::verifier::store
