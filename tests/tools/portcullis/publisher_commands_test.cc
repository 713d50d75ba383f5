#include "tools/portcullis/src/publisher_commands.h"

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "gtest/gtest.h"
#include "tests/support/temp_path.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;

// Answers the ingest admin RPCs from a small in-memory state and records what it was asked.
class FakeIngestAdmin final : public v1::Verifier::Service {
 public:
  grpc::Status AddPublisher(grpc::ServerContext*, const v1::AddPublisherRequest* request,
                            v1::AddPublisherResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    added.push_back(*request);
    *response->mutable_publisher() = request->publisher();
    response->mutable_publisher()->set_enabled(true);
    response->set_created(true);
    return grpc::Status::OK;
  }
  grpc::Status ListPublishers(grpc::ServerContext*, const v1::ListPublishersRequest* request,
                              v1::ListPublishersResponse* response) override {
    // Two pages: "a" then "b".
    if (request->page_token().empty()) {
      response->add_publishers()->set_name("a");
      response->set_next_page_token("next");
    } else {
      v1::Publisher* b = response->add_publishers();
      b->set_name("b");
      b->add_keys()->set_key_id("k1");
    }
    return grpc::Status::OK;
  }
  grpc::Status SetPublisherEnabled(grpc::ServerContext*,
                                   const v1::SetPublisherEnabledRequest* request,
                                   v1::SetPublisherEnabledResponse* response) override {
    if (request->name() != "feeds") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no publisher named that");
    }
    response->mutable_publisher()->set_name(request->name());
    response->mutable_publisher()->set_enabled(request->enabled());
    return grpc::Status::OK;
  }
  grpc::Status AddPublisherKey(grpc::ServerContext*, const v1::AddPublisherKeyRequest* request,
                               v1::AddPublisherKeyResponse* response) override {
    if (!request->key().starts_with("whpk_") && !request->key().starts_with("whsec_")) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a key");
    }
    response->mutable_key()->set_key_id("0f0e");
    response->mutable_key()->set_algorithm("ed25519");
    response->set_created(true);
    return grpc::Status::OK;
  }
  grpc::Status RevokePublisherKey(grpc::ServerContext*,
                                  const v1::RevokePublisherKeyRequest* request,
                                  v1::RevokePublisherKeyResponse* response) override {
    response->mutable_key()->set_key_id(request->key_id());
    response->mutable_key()->set_revoked(true);
    return grpc::Status::OK;
  }
  grpc::Status ListDeadLetters(grpc::ServerContext*, const v1::ListDeadLettersRequest* request,
                               v1::ListDeadLettersResponse* response) override {
    v1::DeadLetter* letter = response->add_dead_letters();
    letter->set_dead_letter_id("d1");
    letter->set_publisher(request->publisher().empty() ? "any" : request->publisher());
    return grpc::Status::OK;
  }
  grpc::Status ReplayDeadLetter(grpc::ServerContext*, const v1::ReplayDeadLetterRequest* request,
                                v1::ReplayDeadLetterResponse* response) override {
    if (request->dead_letter_id() != "d1") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such dead letter");
    }
    response->mutable_result()->set_decision(v1::INGEST_DECISION_ACCEPTED);
    return grpc::Status::OK;
  }
  grpc::Status DiscardDeadLetter(grpc::ServerContext*, const v1::DiscardDeadLetterRequest*,
                                 v1::DiscardDeadLetterResponse*) override {
    return grpc::Status::OK;
  }
  grpc::Status ListAcceptedItems(grpc::ServerContext*, const v1::ListAcceptedItemsRequest* request,
                                 v1::ListAcceptedItemsResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    item_requests.push_back(*request);
    v1::AcceptedItem* item = response->add_items();
    item->set_cursor(request->after_cursor() + 1);
    item->set_item_id("item-1");
    return grpc::Status::OK;
  }

  grpc::Status UpdatePublisher(grpc::ServerContext*, const v1::UpdatePublisherRequest* request,
                               v1::UpdatePublisherResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    updated.push_back(*request);
    if (request->name() != "feeds") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no publisher named that");
    }
    response->mutable_publisher()->set_name(request->name());
    response->mutable_publisher()->set_keep_drops_seconds(request->keep_drops_seconds());
    return grpc::Status::OK;
  }

  std::vector<v1::AddPublisherRequest> added;
  std::vector<v1::UpdatePublisherRequest> updated;
  std::vector<v1::ListAcceptedItemsRequest> item_requests;

 private:
  std::mutex mu_;
};

class PublisherCommandsTest : public ::testing::Test {
 protected:
  int Run(const std::vector<std::string>& args, CliOptions options = {}) {
    out_.str("");
    err_.str("");
    options.verifier_target = server_.target();
    options.token = kTestToken;
    options.timeout = absl::Seconds(5);
    return cli::Run(args, options, out_, err_);
  }
  boost::json::value Output() const { return boost::json::parse(out_.str()); }

  FakeIngestAdmin service_;
  InProcessServer server_{&service_};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(PublisherCommandsTest, AddSendsTheSettings) {
  CliOptions options;
  options.verified = true;
  options.require_signature = true;
  options.retention = absl::Hours(72);
  ASSERT_EQ(Run({"publisher", "add", "feeds"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.added.size(), 1u);
  const v1::Publisher& sent = service_.added[0].publisher();
  EXPECT_EQ(sent.name(), "feeds");
  EXPECT_TRUE(sent.verified());
  EXPECT_TRUE(sent.require_signature());
  EXPECT_EQ(sent.retention_seconds(), 72 * 3600);
  EXPECT_EQ(Output().at("created").as_bool(), true);
  EXPECT_EQ(Output().at("publisher").at("name").as_string(), "feeds");

  ASSERT_EQ(Run({"publisher", "add", "plain"}), kExitOk);
  EXPECT_FALSE(service_.added[1].publisher().verified());
  EXPECT_EQ(service_.added[1].publisher().retention_seconds(), 0);
}

TEST_F(PublisherCommandsTest, AddRefusesABadRetentionWithoutCalling) {
  CliOptions options;
  options.retention = absl::Milliseconds(1500);
  EXPECT_EQ(Run({"publisher", "add", "feeds"}, options), kExitUsage);
  options.retention = -absl::Seconds(1);
  EXPECT_EQ(Run({"publisher", "add", "feeds"}, options), kExitUsage);
  EXPECT_TRUE(service_.added.empty());
}

TEST_F(PublisherCommandsTest, KeepDropsOnAddAndSetChangesOnlyIt) {
  CliOptions options;
  options.keep_drops = "7d";
  ASSERT_EQ(Run({"publisher", "add", "feeds"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.added.size(), 1u);
  EXPECT_EQ(service_.added[0].publisher().keep_drops_seconds(), 7 * 24 * 3600);
  // Not given: off.
  ASSERT_EQ(Run({"publisher", "add", "other"}), kExitOk);
  EXPECT_EQ(service_.added[1].publisher().keep_drops_seconds(), 0);

  options.keep_drops = "36h";
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.updated.size(), 1u);
  EXPECT_TRUE(service_.updated[0].has_keep_drops_seconds());
  EXPECT_EQ(service_.updated[0].keep_drops_seconds(), 36 * 3600);
  EXPECT_EQ(Output().at("publisher").at("keep_drops_seconds").as_string(), "129600");
  options.keep_drops = "off";
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.updated.size(), 2u);
  EXPECT_TRUE(service_.updated[1].has_keep_drops_seconds());
  EXPECT_EQ(service_.updated[1].keep_drops_seconds(), 0);

  // Nothing to set, a bad duration: usage errors, nothing sent; an unknown publisher fails.
  EXPECT_EQ(Run({"publisher", "set", "feeds"}), kExitUsage);
  options.keep_drops = "a week";
  EXPECT_EQ(Run({"publisher", "set", "feeds"}, options), kExitUsage);
  EXPECT_EQ(Run({"publisher", "add", "feeds"}, options), kExitUsage);
  EXPECT_EQ(service_.updated.size(), 2u);
  options.keep_drops = "1h";
  EXPECT_EQ(Run({"publisher", "set", "nobody"}, options), kExitFailed);
}

TEST_F(PublisherCommandsTest, SetC2paSettingsChangesOnlyWhatIsGiven) {
  CliOptions options;
  options.require_c2pa_for_media = true;
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.updated.size(), 1u);
  EXPECT_TRUE(service_.updated[0].has_require_c2pa_for_media());
  EXPECT_TRUE(service_.updated[0].require_c2pa_for_media());
  EXPECT_FALSE(service_.updated[0].has_keep_drops_seconds());
  EXPECT_FALSE(service_.updated[0].has_c2pa_trust());
  options.require_c2pa_for_media = false;
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, options), kExitOk) << err_.str();
  EXPECT_TRUE(service_.updated[1].has_require_c2pa_for_media());
  EXPECT_FALSE(service_.updated[1].require_c2pa_for_media());

  // --c2pa-trust: the file's text is sent; "off" sends an empty list.
  const std::string pem = portcullis::testing::PrivateTempPath("publisher-anchors.pem");
  std::ofstream(pem, std::ios::binary) << "-----BEGIN CERTIFICATE-----\nMIIB\n";
  CliOptions trust;
  trust.publisher_c2pa_trust = pem;
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, trust), kExitOk) << err_.str();
  ASSERT_EQ(service_.updated.size(), 3u);
  EXPECT_TRUE(service_.updated[2].has_c2pa_trust());
  EXPECT_EQ(service_.updated[2].c2pa_trust(), "-----BEGIN CERTIFICATE-----\nMIIB\n");
  EXPECT_FALSE(service_.updated[2].has_require_c2pa_for_media());
  trust.publisher_c2pa_trust = "off";
  ASSERT_EQ(Run({"publisher", "set", "feeds"}, trust), kExitOk) << err_.str();
  EXPECT_TRUE(service_.updated[3].has_c2pa_trust());
  EXPECT_EQ(service_.updated[3].c2pa_trust(), "");
  // On add too.
  trust.publisher_c2pa_trust = pem;
  trust.require_c2pa_for_media = true;
  ASSERT_EQ(Run({"publisher", "add", "feeds"}, trust), kExitOk) << err_.str();
  ASSERT_EQ(service_.added.size(), 1u);
  EXPECT_TRUE(service_.added[0].publisher().require_c2pa_for_media());
  EXPECT_EQ(service_.added[0].publisher().c2pa_trust(), "-----BEGIN CERTIFICATE-----\nMIIB\n");
  trust.require_c2pa_for_media.reset();
  // A file that cannot be read: nothing sent.
  trust.publisher_c2pa_trust = absl::StrCat(::testing::TempDir(), "/no-such-anchors.pem");
  EXPECT_EQ(Run({"publisher", "set", "feeds"}, trust), kExitFailed);
  EXPECT_EQ(service_.updated.size(), 4u);
}

TEST_F(PublisherCommandsTest, ListReadsEveryPage) {
  ASSERT_EQ(Run({"publisher", "list"}), kExitOk) << err_.str();
  const boost::json::value output = Output();
  const boost::json::array& publishers = output.at("publishers").as_array();
  ASSERT_EQ(publishers.size(), 2u);
  EXPECT_EQ(publishers[0].at("name").as_string(), "a");
  EXPECT_EQ(publishers[1].at("keys").as_array()[0].at("key_id").as_string(), "k1");
}

TEST_F(PublisherCommandsTest, DisableEnableAndErrors) {
  ASSERT_EQ(Run({"publisher", "disable", "feeds"}), kExitOk);
  EXPECT_FALSE(Output().at("publisher").at("enabled").as_bool());
  ASSERT_EQ(Run({"publisher", "enable", "feeds"}), kExitOk);
  EXPECT_TRUE(Output().at("publisher").at("enabled").as_bool());
  EXPECT_EQ(Run({"publisher", "disable", "nobody"}), kExitFailed);
  EXPECT_NE(err_.str().find("NOT_FOUND"), std::string::npos) << err_.str();
}

TEST_F(PublisherCommandsTest, KeyAddAndRevoke) {
  ASSERT_EQ(Run({"publisher", "key-add", "feeds", "whpk_AAAA"}), kExitOk) << err_.str();
  EXPECT_EQ(Output().at("key").at("key_id").as_string(), "0f0e");
  EXPECT_EQ(Run({"publisher", "key-add", "feeds", "nonsense"}), kExitFailed);
  EXPECT_NE(err_.str().find("INVALID_ARGUMENT"), std::string::npos) << err_.str();
  ASSERT_EQ(Run({"publisher", "key-revoke", "feeds", "0f0e"}), kExitOk);
  EXPECT_TRUE(Output().at("key").at("revoked").as_bool());
}

TEST_F(PublisherCommandsTest, DeadLetters) {
  ASSERT_EQ(Run({"deadletter", "list"}), kExitOk);
  EXPECT_EQ(Output().at("dead_letters").as_array()[0].at("publisher").as_string(), "any");
  ASSERT_EQ(Run({"deadletter", "list", "feeds"}), kExitOk);
  EXPECT_EQ(Output().at("dead_letters").as_array()[0].at("publisher").as_string(), "feeds");
  ASSERT_EQ(Run({"deadletter", "replay", "d1"}), kExitOk);
  EXPECT_EQ(Output().at("result").at("decision").as_string(), "INGEST_DECISION_ACCEPTED");
  EXPECT_EQ(Run({"deadletter", "replay", "d2"}), kExitFailed);
  EXPECT_EQ(Run({"deadletter", "discard", "d1"}), kExitOk);
}

TEST_F(PublisherCommandsTest, ItemsListPassesCursorAndLimit) {
  CliOptions options;
  options.after = 41;
  options.limit = 10;
  ASSERT_EQ(Run({"items", "list"}, options), kExitOk) << err_.str();
  ASSERT_EQ(service_.item_requests.size(), 1u);
  EXPECT_EQ(service_.item_requests[0].after_cursor(), 41);
  EXPECT_EQ(service_.item_requests[0].limit(), 10);
  // int64 cursors print as JSON strings (proto3 JSON mapping).
  EXPECT_EQ(Output().at("items").as_array()[0].at("cursor").as_string(), "42");
  options.limit = 1001;
  EXPECT_EQ(Run({"items", "list"}, options), kExitUsage);
  EXPECT_EQ(service_.item_requests.size(), 1u);
}

TEST_F(PublisherCommandsTest, UsageErrorsSendNothingAndExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"publisher"},
           {"publisher", "rename", "a"},
           {"publisher", "add"},
           {"publisher", "list", "x"},
           {"publisher", "key-add", "a"},
           {"publisher", "key-revoke", "a", "b", "c"},
           {"deadletter"},
           {"deadletter", "replay"},
           {"deadletter", "list", "a", "b"},
           {"items"},
           {"items", "list", "x"},
           {"keygen", "x"},
           {"sign"},
           {"conformance", "jcs"}}) {
    EXPECT_EQ(Run(args), kExitUsage) << args[0];
    EXPECT_NE(err_.str().find("usage:"), std::string::npos) << args[0];
  }
  EXPECT_TRUE(service_.added.empty());
  EXPECT_TRUE(service_.item_requests.empty());
}

}  // namespace
}  // namespace portcullis::cli
