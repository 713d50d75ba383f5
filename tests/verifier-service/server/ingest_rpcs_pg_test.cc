// EvaluateIngest and the publisher / dead-letter / outbox RPCs over real gRPC against a real
// in-process VerifierServer and a real PostgreSQL.

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/crypto/random.h"
#include "common/crypto/sha256.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/server/test_tokens.h"
#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/server/verifier_server.h"
#include "verifier-service/src/verifier_flags.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

std::chrono::system_clock::time_point Deadline(int seconds = 10) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// A body and its hash (tests write canonical JSON, so the body is its own canonical form).
struct Item {
  std::string body;
  std::optional<bool> is_synthetic;
  std::string digital_source_type;
};

Item SyntheticItem(const std::string& id) {
  return {absl::StrCat(R"({"content":"hello","id":")", id, R"(","is_synthetic":true})"), true, ""};
}
Item PlainItem(const std::string& id) {
  return {absl::StrCat(R"({"content":"hello","id":")", id, R"("})"), std::nullopt, ""};
}

struct Headers {
  std::string signature;
  std::string id;
  std::string timestamp;
};

Headers SignEd25519(const crypto::Ed25519PrivateKey& key, const std::string& body,
                    int64_t timestamp = absl::ToUnixSeconds(absl::Now()),
                    const std::string& id = "msg_1") {
  return {ingest::SignV1a(key, ingest::SignedContent(id, timestamp, body)), id,
          absl::StrCat(timestamp)};
}

Headers SignHmac(const std::string& secret, const std::string& body,
                 int64_t timestamp = absl::ToUnixSeconds(absl::Now()),
                 const std::string& id = "msg_1") {
  return {ingest::SignV1(secret, ingest::SignedContent(id, timestamp, body)), id,
          absl::StrCat(timestamp)};
}

std::string ItemIdOf(const std::string& body) {
  const size_t start = body.find(R"("id":")") + 6;
  return body.substr(start, body.find('"', start) - start);
}

class VerifierIngestRpcTest : public ::testing::Test {
 protected:
  void Start(const std::string& database_url, bool require_registration = true) {
    database_url_ = database_url;
    config::Texts flags;
    flags["database_url"] = database_url;
    flags["grpc_listen"] = "127.0.0.1:0";
    flags["tokens_file"] = test_tokens::TempTokensFile({test_tokens::ProcessToken()});
    flags["db_pool_size"] = "8";
    flags["max_queued_work"] = "1000";
    flags["health_interval"] = "50ms";
    flags["drain_timeout"] = "5s";
    flags["ingest_require_registration"] = require_registration ? "true" : "false";
    flags["ingest_publisher_cache_ttl"] = "5s";
    absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags, portcullis::config::NoEnvironment);
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<VerifierServer>> server = VerifierServer::Start(*config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ =
        grpc::CreateChannel(server_->address().ToString(), grpc::InsecureChannelCredentials());
    stub_ = v1::Verifier::NewStub(channel_);
    // Ready once migrations are applied: calls stop answering UNAVAILABLE.
    for (int i = 0; i < 400; ++i) {
      grpc::ClientContext context;
      test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
      context.set_deadline(Deadline());
      v1::ListPublishersResponse response;
      if (stub_->ListPublishers(&context, v1::ListPublishersRequest(), &response).ok()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "verifier never became ready";
  }

  grpc::Status AddPublisher(const std::string& name, bool verified = false,
                            bool require_signature = false, int64_t retention_seconds = 0) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::AddPublisherRequest request;
    request.mutable_publisher()->set_name(name);
    request.mutable_publisher()->set_verified(verified);
    request.mutable_publisher()->set_require_signature(require_signature);
    request.mutable_publisher()->set_retention_seconds(retention_seconds);
    v1::AddPublisherResponse response;
    return stub_->AddPublisher(&context, request, &response);
  }

  grpc::Status AddKey(const std::string& publisher, const std::string& key,
                      v1::AddPublisherKeyResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::AddPublisherKeyRequest request;
    request.set_publisher(publisher);
    request.set_key(key);
    return stub_->AddPublisherKey(&context, request, response);
  }

  std::string AddKeyOrDie(const std::string& publisher, const std::string& key) {
    v1::AddPublisherKeyResponse response;
    const grpc::Status status = AddKey(publisher, key, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.key().key_id();
  }

  std::string AddEd25519Key(const std::string& publisher, const crypto::Ed25519PrivateKey& key) {
    return AddKeyOrDie(publisher, ingest::SerializePublicKey(key.PublicKey()));
  }

  grpc::Status Evaluate(const std::string& publisher, const Item& item, const Headers& headers,
                        v1::EvaluateIngestResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline(30));
    const v1::EvaluateIngestRequest request = Request(publisher, item, headers);
    return stub_->EvaluateIngest(&context, request, response);
  }

  static v1::EvaluateIngestRequest Request(const std::string& publisher, const Item& item,
                                           const Headers& headers) {
    v1::EvaluateIngestRequest request;
    request.set_publisher(publisher);
    request.mutable_provenance()->set_signature(headers.signature);
    request.mutable_provenance()->set_message_id(headers.id);
    request.mutable_provenance()->set_timestamp(headers.timestamp);
    request.set_raw_body(item.body);
    request.set_canonical_body(item.body);
    request.set_item_id(ItemIdOf(item.body));
    request.set_content_hash(crypto::ToHex(crypto::Sha256(item.body)));
    if (item.is_synthetic.has_value()) {
      request.set_is_synthetic(*item.is_synthetic);
    }
    request.set_digital_source_type(item.digital_source_type);
    return request;
  }

  // The answer, or a failed expectation.
  v1::EvaluateIngestResponse EvaluateOk(const std::string& publisher, const Item& item,
                                        const Headers& headers = {}) {
    v1::EvaluateIngestResponse response;
    const grpc::Status status = Evaluate(publisher, item, headers, &response);
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
    return response;
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection connection(database_url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<int64_t>();
  }

  void Exec(const std::string& sql) {
    pqxx::connection connection(database_url_);
    pqxx::nontransaction transaction(connection);
    transaction.exec0(sql);
  }

  std::vector<v1::DeadLetter> DeadLetters() {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::ListDeadLettersResponse response;
    EXPECT_TRUE(stub_->ListDeadLetters(&context, v1::ListDeadLettersRequest(), &response).ok());
    return {response.dead_letters().begin(), response.dead_letters().end()};
  }

  std::vector<v1::AcceptedItem> AcceptedItems(int64_t after = 0) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::ListAcceptedItemsRequest request;
    request.set_after_cursor(after);
    v1::ListAcceptedItemsResponse response;
    EXPECT_TRUE(stub_->ListAcceptedItems(&context, request, &response).ok());
    return {response.items().begin(), response.items().end()};
  }

  grpc::Status Replay(const std::string& id, v1::ReplayDeadLetterResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::ReplayDeadLetterRequest request;
    request.set_dead_letter_id(id);
    return stub_->ReplayDeadLetter(&context, request, response);
  }

  std::string database_url_;
  std::unique_ptr<VerifierServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
};

TEST_F(VerifierIngestRpcTest, UnknownOrDisabledPublisherIsRefusedAndNothingIsRecorded) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  v1::EvaluateIngestResponse response = EvaluateOk("nobody", PlainItem("a"));
  EXPECT_EQ(response.decision(), v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
  EXPECT_EQ(response.reason(), "unknown_publisher");

  ASSERT_TRUE(AddPublisher("feed.example").ok());
  EXPECT_EQ(EvaluateOk("feed.example", PlainItem("a")).decision(), v1::INGEST_DECISION_ACCEPTED);
  {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::SetPublisherEnabledRequest request;
    request.set_name("feed.example");
    request.set_enabled(false);
    v1::SetPublisherEnabledResponse disabled;
    ASSERT_TRUE(stub_->SetPublisherEnabled(&context, request, &disabled).ok());
    EXPECT_FALSE(disabled.publisher().enabled());
  }
  EXPECT_EQ(EvaluateOk("feed.example", PlainItem("b")).decision(),
            v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);
}

TEST_F(VerifierIngestRpcTest, UnregisteredPublishersAreEvaluatedWhenRegistrationIsNotRequired) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string(), /*require_registration=*/false);
  EXPECT_EQ(EvaluateOk("nobody", PlainItem("a")).decision(), v1::INGEST_DECISION_ACCEPTED);
  v1::EvaluateIngestResponse synthetic = EvaluateOk("nobody", SyntheticItem("b"));
  EXPECT_EQ(synthetic.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(synthetic.reason(), "unverified_synthetic_content");
}

TEST_F(VerifierIngestRpcTest, EveryDecisionBranch) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  const crypto::Ed25519PrivateKey stranger = crypto::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(AddPublisher("open").ok());
  AddEd25519Key("open", key);
  ASSERT_TRUE(AddPublisher("strict", false, /*require_signature=*/true).ok());
  AddEd25519Key("strict", key);
  ASSERT_TRUE(AddPublisher("trusted", /*verified=*/true).ok());
  AddEd25519Key("trusted", key);

  // Not synthetic, unsigned: accepted and in the outbox.
  v1::EvaluateIngestResponse plain = EvaluateOk("open", PlainItem("p1"));
  EXPECT_EQ(plain.decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(plain.item_id(), "p1");
  EXPECT_FALSE(plain.signature_valid());

  // Synthetic, unsigned: dropped (both spellings of synthetic).
  v1::EvaluateIngestResponse synthetic = EvaluateOk("open", SyntheticItem("s1"));
  EXPECT_EQ(synthetic.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(synthetic.reason(), "unverified_synthetic_content");
  Item iptc = PlainItem("s2");
  iptc.body = R"({"digital_source_type":"http://cv.iptc.org/newscodes/digitalsourcetype/)"
              R"(compositeWithTrainedAlgorithmicMedia","id":"s2"})";
  iptc.digital_source_type =
      "http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia";
  EXPECT_EQ(EvaluateOk("open", iptc).reason(), "unverified_synthetic_content");

  // Synthetic, validly signed: accepted.
  const Item signed_item = SyntheticItem("s3");
  v1::EvaluateIngestResponse signed_synthetic =
      EvaluateOk("open", signed_item, SignEd25519(key, signed_item.body));
  EXPECT_EQ(signed_synthetic.decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_TRUE(signed_synthetic.signature_valid());

  // Signed by a key not on the trust list: dropped, even when not synthetic.
  const Item badly_signed = PlainItem("p2");
  v1::EvaluateIngestResponse invalid =
      EvaluateOk("open", badly_signed, SignEd25519(stranger, badly_signed.body));
  EXPECT_EQ(invalid.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(invalid.reason(), "invalid_provenance_signature");

  // require_signature: unsigned plain items are dropped, signed ones accepted.
  v1::EvaluateIngestResponse required = EvaluateOk("strict", PlainItem("p3"));
  EXPECT_EQ(required.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(required.reason(), "signature_required");
  const Item strict_signed = PlainItem("p4");
  EXPECT_EQ(EvaluateOk("strict", strict_signed, SignEd25519(key, strict_signed.body)).decision(),
            v1::INGEST_DECISION_ACCEPTED);

  // Malformed metadata: quarantined for a verified publisher, an invalid signature otherwise.
  const Item malformed = PlainItem("m1");
  Headers no_timestamp = SignEd25519(key, malformed.body);
  no_timestamp.timestamp.clear();
  v1::EvaluateIngestResponse quarantined = EvaluateOk("trusted", malformed, no_timestamp);
  EXPECT_EQ(quarantined.decision(), v1::INGEST_DECISION_QUARANTINED);
  EXPECT_EQ(quarantined.reason(), "missing_provenance_timestamp");
  EXPECT_FALSE(quarantined.dead_letter_id().empty());
  v1::EvaluateIngestResponse unverified = EvaluateOk("open", malformed, no_timestamp);
  EXPECT_EQ(unverified.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(unverified.reason(), "invalid_provenance_signature");
  Headers bad_token = SignEd25519(key, PlainItem("m2").body);
  bad_token.signature = "v1a,not*base64";
  EXPECT_EQ(EvaluateOk("trusted", PlainItem("m2"), bad_token).reason(),
            "malformed_provenance_signature");
  Headers bad_timestamp = SignEd25519(key, PlainItem("m3").body);
  bad_timestamp.timestamp = "soon";
  EXPECT_EQ(EvaluateOk("trusted", PlainItem("m3"), bad_timestamp).reason(),
            "malformed_provenance_timestamp");
  Headers no_id = SignEd25519(key, PlainItem("m4").body);
  no_id.id.clear();
  EXPECT_EQ(EvaluateOk("trusted", PlainItem("m4"), no_id).reason(), "missing_provenance_id");

  // Duplicates answer the original decision.
  v1::EvaluateIngestResponse duplicate = EvaluateOk("open", SyntheticItem("s1"));
  EXPECT_EQ(duplicate.decision(), v1::INGEST_DECISION_DUPLICATE);
  EXPECT_EQ(duplicate.reason(), "dropped:unverified_synthetic_content");
  EXPECT_EQ(duplicate.item_id(), "s1");
  EXPECT_EQ(EvaluateOk("open", PlainItem("p1")).reason(), "accepted");
  EXPECT_EQ(EvaluateOk("trusted", malformed, no_timestamp).reason(),
            "quarantined:missing_provenance_timestamp");

  // The same canonical body from another publisher is another item.
  EXPECT_EQ(EvaluateOk("strict", PlainItem("p1")).reason(), "signature_required");

  const std::vector<v1::AcceptedItem> items = AcceptedItems();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].item_id(), "p1");
  EXPECT_EQ(items[0].canonical_body(), PlainItem("p1").body);
  EXPECT_EQ(items[1].item_id(), "s3");
  EXPECT_TRUE(items[1].signature_valid());
  EXPECT_EQ(items[2].item_id(), "p4");
  EXPECT_EQ(AcceptedItems(items[1].cursor()).size(), 1u);
  EXPECT_EQ(DeadLetters().size(), 4u);
}

TEST_F(VerifierIngestRpcTest, KeyRotationAcceptsEveryActiveKeyAndRefusesRevokedOnes) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("rotating").ok());
  const crypto::Ed25519PrivateKey old_key = crypto::Ed25519PrivateKey::Generate();
  const std::string secret = crypto::RandomHex(16);  // 32 bytes of text as the HMAC secret.
  const std::string old_id = AddEd25519Key("rotating", old_key);
  AddKeyOrDie("rotating", "whsec_" + absl::Base64Escape(secret));

  const Item a = SyntheticItem("a");
  const Item b = SyntheticItem("b");
  EXPECT_EQ(EvaluateOk("rotating", a, SignEd25519(old_key, a.body)).decision(),
            v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(EvaluateOk("rotating", b, SignHmac(secret, b.body)).decision(),
            v1::INGEST_DECISION_ACCEPTED);

  grpc::ClientContext context;

  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  context.set_deadline(Deadline());
  v1::RevokePublisherKeyRequest revoke;
  revoke.set_publisher("rotating");
  revoke.set_key_id(old_id);
  v1::RevokePublisherKeyResponse revoked;
  ASSERT_TRUE(stub_->RevokePublisherKey(&context, revoke, &revoked).ok());
  EXPECT_TRUE(revoked.key().revoked());

  const Item c = SyntheticItem("c");
  v1::EvaluateIngestResponse refused = EvaluateOk("rotating", c, SignEd25519(old_key, c.body));
  EXPECT_EQ(refused.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(refused.reason(), "invalid_provenance_signature");
  const Item d = SyntheticItem("d");
  EXPECT_EQ(EvaluateOk("rotating", d, SignHmac(secret, d.body)).decision(),
            v1::INGEST_DECISION_ACCEPTED);

  // The trust list as ListPublishers shows it: the secret is never returned.
  grpc::ClientContext list_context;
  test_tokens::AddBearerToken(list_context, test_tokens::ProcessToken().token);
  list_context.set_deadline(Deadline());
  v1::ListPublishersResponse listed;
  ASSERT_TRUE(stub_->ListPublishers(&list_context, v1::ListPublishersRequest(), &listed).ok());
  ASSERT_EQ(listed.publishers_size(), 1);
  ASSERT_EQ(listed.publishers(0).keys_size(), 2);
  EXPECT_EQ(listed.publishers(0).keys(0).algorithm(), "ed25519");
  EXPECT_EQ(listed.publishers(0).keys(0).public_key(),
            ingest::SerializePublicKey(old_key.PublicKey()));
  EXPECT_TRUE(listed.publishers(0).keys(0).revoked());
  EXPECT_EQ(listed.publishers(0).keys(1).algorithm(), "hmac-sha256");
  EXPECT_EQ(listed.publishers(0).keys(1).public_key(), "");
  EXPECT_FALSE(listed.publishers(0).keys(1).revoked());
  EXPECT_EQ(listed.publishers(0).keys(1).fingerprint().size(), 8u);
  EXPECT_EQ(listed.DebugString().find(absl::Base64Escape(secret)), std::string::npos);
}

TEST_F(VerifierIngestRpcTest, AStaleOrFutureTimestampIsAnInvalidSignature) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed").ok());
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  AddEd25519Key("feed", key);
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  const Item old_item = SyntheticItem("old");
  v1::EvaluateIngestResponse stale =
      EvaluateOk("feed", old_item, SignEd25519(key, old_item.body, now - 301 - 5));
  EXPECT_EQ(stale.decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(stale.reason(), "invalid_provenance_signature");
  const Item future_item = SyntheticItem("future");
  EXPECT_EQ(EvaluateOk("feed", future_item, SignEd25519(key, future_item.body, now + 400))
                .reason(),
            "invalid_provenance_signature");
  const Item recent = SyntheticItem("recent");
  EXPECT_EQ(EvaluateOk("feed", recent, SignEd25519(key, recent.body, now - 200)).decision(),
            v1::INGEST_DECISION_ACCEPTED);
}

TEST_F(VerifierIngestRpcTest, QuarantinedDeliveryIsReplayedAfterThePublisherRegistersItsKey) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("trusted", /*verified=*/true).ok());
  const crypto::Ed25519PrivateKey first = crypto::Ed25519PrivateKey::Generate();
  const crypto::Ed25519PrivateKey second = crypto::Ed25519PrivateKey::Generate();
  AddEd25519Key("trusted", first);
  // A broken token next to a signature by a key not registered yet: malformed metadata.
  const Item item = SyntheticItem("q1");
  Headers headers = SignEd25519(second, item.body);
  headers.signature = "v1,*** " + headers.signature;
  v1::EvaluateIngestResponse quarantined = EvaluateOk("trusted", item, headers);
  ASSERT_EQ(quarantined.decision(), v1::INGEST_DECISION_QUARANTINED);
  EXPECT_EQ(quarantined.reason(), "malformed_provenance_signature");

  std::vector<v1::DeadLetter> letters = DeadLetters();
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_EQ(letters[0].dead_letter_id(), quarantined.dead_letter_id());
  EXPECT_EQ(letters[0].publisher(), "trusted");
  EXPECT_EQ(letters[0].item_id(), "q1");
  EXPECT_EQ(letters[0].raw_body(), item.body);
  EXPECT_EQ(letters[0].provenance().signature(), headers.signature);
  EXPECT_EQ(letters[0].reason(), "malformed_provenance_signature");

  // Replayed before the fix: quarantined again, still in the queue.
  v1::ReplayDeadLetterResponse again;
  ASSERT_TRUE(Replay(quarantined.dead_letter_id(), &again).ok());
  EXPECT_EQ(again.result().decision(), v1::INGEST_DECISION_QUARANTINED);
  EXPECT_EQ(again.result().dead_letter_id(), quarantined.dead_letter_id());
  EXPECT_EQ(DeadLetters().size(), 1u);

  // The publisher registers the key it signs with: the replay accepts the item.
  AddEd25519Key("trusted", second);
  v1::ReplayDeadLetterResponse replayed;
  ASSERT_TRUE(Replay(quarantined.dead_letter_id(), &replayed).ok());
  EXPECT_EQ(replayed.result().decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_TRUE(replayed.result().signature_valid());
  EXPECT_TRUE(DeadLetters().empty());
  const std::vector<v1::AcceptedItem> items = AcceptedItems();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].item_id(), "q1");
  EXPECT_EQ(EvaluateOk("trusted", item, headers).reason(), "accepted");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);

  // The dead letter is gone: replaying it again is NOT_FOUND.
  v1::ReplayDeadLetterResponse gone;
  EXPECT_EQ(Replay(quarantined.dead_letter_id(), &gone).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(VerifierIngestRpcTest, DiscardRemovesADeadLetter) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("trusted", /*verified=*/true).ok());
  AddEd25519Key("trusted", crypto::Ed25519PrivateKey::Generate());
  Headers headers{"v1a,***", "msg", absl::StrCat(absl::ToUnixSeconds(absl::Now()))};
  v1::EvaluateIngestResponse quarantined = EvaluateOk("trusted", PlainItem("x"), headers);
  ASSERT_EQ(quarantined.decision(), v1::INGEST_DECISION_QUARANTINED);
  for (grpc::StatusCode want : {grpc::StatusCode::OK, grpc::StatusCode::NOT_FOUND}) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::DiscardDeadLetterRequest request;
    request.set_dead_letter_id(quarantined.dead_letter_id());
    v1::DiscardDeadLetterResponse response;
    EXPECT_EQ(stub_->DiscardDeadLetter(&context, request, &response).error_code(), want);
  }
  EXPECT_TRUE(DeadLetters().empty());
}

TEST_F(VerifierIngestRpcTest, ConcurrentIdenticalDeliveriesRecordOneDecision) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("busy").ok());
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  AddEd25519Key("busy", key);
  const Item item = SyntheticItem("same");
  const Headers headers = SignEd25519(key, item.body);
  const v1::EvaluateIngestRequest request = Request("busy", item, headers);

  constexpr int kCalls = 200;
  std::vector<v1::EvaluateIngestResponse> responses(kCalls);
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  absl::Mutex mu;
  int done = 0;
  for (int i = 0; i < kCalls; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(Deadline(60));
    test_tokens::AddBearerToken(*contexts.back(), test_tokens::ProcessToken().token);
    stub_->async()->EvaluateIngest(contexts.back().get(), &request, &responses[i],
                                   [&, i](grpc::Status status) {
                                     absl::MutexLock lock(&mu);
                                     statuses[i] = std::move(status);
                                     ++done;
                                   });
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](int* n) { return *n == kCalls; }, &done));
  }
  int accepted = 0;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    EXPECT_EQ(responses[i].item_id(), "same");
    EXPECT_TRUE(responses[i].signature_valid());
    if (responses[i].decision() == v1::INGEST_DECISION_ACCEPTED) {
      ++accepted;
    } else {
      EXPECT_EQ(responses[i].decision(), v1::INGEST_DECISION_DUPLICATE);
      EXPECT_EQ(responses[i].reason(), "accepted");
    }
  }
  EXPECT_EQ(accepted, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
}

TEST_F(VerifierIngestRpcTest, ABatchAnswersEachItemAsEvaluateIngestWouldAlone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed").ok());
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  AddEd25519Key("feed", key);
  const Item synthetic = SyntheticItem("s");
  v1::EvaluateIngestBatchRequest request;
  const auto add = [&](const std::string& publisher, const Item& item, const Headers& headers) {
    v1::EvaluateIngestBatchItem* added = request.add_items();
    added->set_request_id(absl::StrCat("req-", request.items_size()));
    *added->mutable_item() = Request(publisher, item, headers);
    return added;
  };
  add("feed", PlainItem("a"), {});                                  // 0 accepted
  add("feed", PlainItem("a"), {});                                  // 1 the same item again
  add("feed", synthetic, {});                                       // 2 dropped, unsigned
  add("nobody", PlainItem("b"), {});                                // 3 unknown publisher
  add("feed", PlainItem("c"), {})->mutable_item()->set_content_hash("not hex");  // 4 invalid
  add("feed", PlainItem("d"), {});                                  // 5 accepted
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  context.set_deadline(Deadline(30));
  v1::EvaluateIngestBatchResponse response;
  const grpc::Status status = stub_->EvaluateIngestBatch(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 6);
  for (int i : {0, 1, 2, 3, 5}) {
    EXPECT_EQ(response.results(i).status().code(), 0) << i << response.results(i).status().message();
  }
  // The two copies of "a": one accepted, the other its duplicate, in either order.
  std::set<int> a_decisions = {response.results(0).decision().decision(),
                               response.results(1).decision().decision()};
  EXPECT_EQ(a_decisions, (std::set<int>{v1::INGEST_DECISION_ACCEPTED,
                                        v1::INGEST_DECISION_DUPLICATE}));
  EXPECT_EQ(response.results(2).decision().decision(), v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(response.results(2).decision().reason(), "unverified_synthetic_content");
  EXPECT_EQ(response.results(3).decision().decision(), v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
  EXPECT_EQ(response.results(4).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(response.results(4).has_decision());
  EXPECT_EQ(response.results(5).decision().decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(AcceptedItems().size(), 2u);

  // An unsigned copy decided in one batch does not suppress a validly signed one in the next.
  v1::EvaluateIngestBatchRequest signed_request;
  v1::EvaluateIngestBatchItem* signed_item = signed_request.add_items();
  *signed_item->mutable_item() = Request("feed", synthetic, SignEd25519(key, synthetic.body));
  grpc::ClientContext signed_context;
  test_tokens::AddBearerToken(signed_context, test_tokens::ProcessToken().token);
  signed_context.set_deadline(Deadline(30));
  v1::EvaluateIngestBatchResponse signed_response;
  ASSERT_TRUE(
      stub_->EvaluateIngestBatch(&signed_context, signed_request, &signed_response).ok());
  ASSERT_EQ(signed_response.results_size(), 1);
  EXPECT_EQ(signed_response.results(0).decision().decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(AcceptedItems().size(), 3u);

  // A call with no items, or more than 256, is refused whole.
  grpc::ClientContext empty_context;
  test_tokens::AddBearerToken(empty_context, test_tokens::ProcessToken().token);
  empty_context.set_deadline(Deadline(30));
  EXPECT_EQ(stub_->EvaluateIngestBatch(&empty_context, v1::EvaluateIngestBatchRequest(),
                                       &signed_response)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(VerifierIngestRpcTest, AValidlySignedDeliveryReplacesAnUnsignedDrop) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed").ok());
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  const crypto::Ed25519PrivateKey stranger = crypto::Ed25519PrivateKey::Generate();
  AddEd25519Key("feed", key);
  const Item item = SyntheticItem("x");
  EXPECT_EQ(EvaluateOk("feed", item).reason(), "unverified_synthetic_content");
  // A badly signed copy does not replace it either.
  EXPECT_EQ(EvaluateOk("feed", item, SignEd25519(stranger, item.body)).reason(),
            "dropped:unverified_synthetic_content");
  v1::EvaluateIngestResponse signed_copy = EvaluateOk("feed", item, SignEd25519(key, item.body));
  EXPECT_EQ(signed_copy.decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE decision = 'accepted' "
                  "AND signature_valid"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 1);
  EXPECT_EQ(AcceptedItems().size(), 1u);
  // From now on every copy, signed or not, is a duplicate of the accepted one.
  EXPECT_EQ(EvaluateOk("feed", item).reason(), "accepted");
  EXPECT_EQ(EvaluateOk("feed", item, SignEd25519(key, item.body, absl::ToUnixSeconds(absl::Now()),
                                                 "msg_2"))
                .reason(),
            "accepted");
  EXPECT_EQ(AcceptedItems().size(), 1u);
}

TEST_F(VerifierIngestRpcTest, AnExpiredDecisionIsNotADuplicate) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed", false, false, /*retention_seconds=*/3600).ok());
  const Item item = PlainItem("x");
  EXPECT_EQ(EvaluateOk("feed", item).decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE expires_at "
                  "BETWEEN now() + interval '59 minutes' AND now() + interval '61 minutes'"),
            1);
  EXPECT_EQ(EvaluateOk("feed", item).decision(), v1::INGEST_DECISION_DUPLICATE);
  Exec("UPDATE ingest_decisions SET expires_at = now() - interval '1 second'");
  EXPECT_EQ(EvaluateOk("feed", item).decision(), v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE expires_at > now()"), 1);
  EXPECT_EQ(AcceptedItems().size(), 2u);
}

TEST_F(VerifierIngestRpcTest, ADatabaseFailureIsUnavailableNeverADrop) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed").ok());
  Exec("ALTER TABLE ingest_decisions RENAME TO ingest_decisions_away");
  v1::EvaluateIngestResponse response;
  const grpc::Status status = Evaluate("feed", SyntheticItem("x"), {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message().find("ingest_decisions"), std::string::npos)
      << "no SQL detail in answers";
  Exec("ALTER TABLE ingest_decisions_away RENAME TO ingest_decisions");
  Exec("ALTER TABLE publishers RENAME TO publishers_away");
  EXPECT_EQ(Evaluate("never-looked-up", SyntheticItem("x"), {}, &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  Exec("ALTER TABLE publishers_away RENAME TO publishers");
  EXPECT_EQ(EvaluateOk("feed", SyntheticItem("x")).reason(), "unverified_synthetic_content");
}

TEST_F(VerifierIngestRpcTest, MalformedRequestsAndKeysAreInvalidArguments) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(AddPublisher("feed").ok());
  EXPECT_EQ(AddPublisher("has space").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::AddPublisherKeyResponse response;
  const std::string short_secret = "whsec_" + absl::Base64Escape(std::string(23, 'k'));
  EXPECT_EQ(AddKey("feed", short_secret, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(AddKey("feed", ingest::SerializeSigningKey(crypto::Ed25519PrivateKey::Generate()),
                   &response)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(AddKey("feed", "whpk_AAAA", &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  const std::string good = "whsec_" + absl::Base64Escape(std::string(24, 'k'));
  EXPECT_EQ(AddKey("nobody", good, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(AddKey("feed", good, &response).ok());
  EXPECT_TRUE(response.created());
  ASSERT_TRUE(AddKey("feed", good, &response).ok());
  EXPECT_FALSE(response.created());

  v1::EvaluateIngestRequest request = Request("feed", PlainItem("a"), {});
  request.set_content_hash(std::string(64, 'A'));
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  context.set_deadline(Deadline());
  v1::EvaluateIngestResponse evaluated;
  EXPECT_EQ(stub_->EvaluateIngest(&context, request, &evaluated).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace portcullis::verifier::server
