#pragma once

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::cli {

// The API token the tests give the CLI (commands that call the verifier need one).
inline constexpr char kTestToken[] =
    "pct_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// A Verifier that answers from fixed data, served in-process on 127.0.0.1:0.
class FakeVerifier final : public verifier::v1::Verifier::Service {
 public:
  grpc::Status SubmitMention(grpc::ServerContext*, const verifier::v1::SubmitMentionRequest* request,
                             verifier::v1::SubmitMentionResponse* response) override {
    if (request->source() == request->target()) {
      response->set_decision(verifier::v1::DECISION_REJECTED);
      response->set_reason("same_source_and_target");
      return grpc::Status::OK;
    }
    response->set_decision(verifier::v1::DECISION_ACCEPTED);
    response->set_mention_id("5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001");
    response->set_state(verifier::v1::MENTION_STATE_PENDING);
    response->set_created(true);
    return grpc::Status::OK;
  }

  grpc::Status GetMention(grpc::ServerContext* context,
                          const verifier::v1::GetMentionRequest* request,
                          verifier::v1::GetMentionResponse* response) override {
    const auto found = context->client_metadata().find("authorization");
    last_authorization = found == context->client_metadata().end()
                             ? ""
                             : std::string(found->second.data(), found->second.size());
    if (request->mention_id() == "unauthenticated") {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown or revoked API token");
    }
    if (request->mention_id() != "5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such mention");
    }
    auto* mention = response->mutable_mention();
    mention->set_mention_id(request->mention_id());
    mention->set_source("https://a.example/post");
    mention->set_target("https://b.example/");
    mention->set_state(verifier::v1::MENTION_STATE_PENDING);
    return grpc::Status::OK;
  }

  // One verified reply on every page; a next page token unless `page_token` is set; records the
  // request.
  grpc::Status ListMentions(grpc::ServerContext*, const verifier::v1::ListMentionsRequest* request,
                            verifier::v1::ListMentionsResponse* response) override {
    last_list = *request;
    auto* mention = response->add_mentions();
    mention->set_mention_id("5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001");
    mention->set_state(verifier::v1::MENTION_STATE_VERIFIED);
    mention->set_type(verifier::v1::MENTION_TYPE_REPLY);
    mention->mutable_author()->set_name("Alice");
    if (request->page_token().empty()) {
      response->set_next_page_token("next-token");
    }
    return grpc::Status::OK;
  }

  // A token with the requested name, scopes and sites; "bad" scope: INVALID_ARGUMENT.
  grpc::Status CreateToken(grpc::ServerContext*, const verifier::v1::CreateTokenRequest* request,
                           verifier::v1::CreateTokenResponse* response) override {
    last_create = *request;
    for (const std::string& scope : request->scopes()) {
      if (scope == "bad") return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown scope");
    }
    response->set_token(kTestToken);
    auto* token = response->mutable_api_token();
    token->set_id("7d4c6b1e-0000-4000-8000-000000000001");
    token->set_name(request->name());
    *token->mutable_scopes() = request->scopes();
    *token->mutable_sites() = request->sites();
    return grpc::Status::OK;
  }

  grpc::Status ListTokens(grpc::ServerContext*, const verifier::v1::ListTokensRequest*,
                          verifier::v1::ListTokensResponse* response) override {
    auto* token = response->add_tokens();
    token->set_id("7d4c6b1e-0000-4000-8000-000000000001");
    token->set_name("gateway");
    token->add_scopes("submit");
    return grpc::Status::OK;
  }

  grpc::Status RevokeToken(grpc::ServerContext*, const verifier::v1::RevokeTokenRequest* request,
                           verifier::v1::RevokeTokenResponse* response) override {
    if (request->id() != "7d4c6b1e-0000-4000-8000-000000000001") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such token");
    }
    response->mutable_api_token()->set_id(request->id());
    response->mutable_api_token()->mutable_revoked_at()->set_seconds(1);
    return grpc::Status::OK;
  }

  verifier::v1::ListMentionsRequest last_list;
  verifier::v1::CreateTokenRequest last_create;
  std::string last_authorization;  // Of the last GetMention.
};

// Starts `service` on a free loopback port.
struct InProcessServer {
  explicit InProcessServer(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service);
    server = builder.BuildAndStart();
  }
  ~InProcessServer() { server->Shutdown(); }
  std::string target() const { return absl::StrCat("127.0.0.1:", port); }

  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

}  // namespace portcullis::cli
