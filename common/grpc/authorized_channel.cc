#include "common/grpc/authorized_channel.h"

#include <fstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"
#include "grpcpp/support/interceptor.h"

namespace portcullis::grpc_client {
namespace {

constexpr std::streamsize kMaxTokenFileBytes = 4096;

// Adds the authorization metadata to one call.
class AuthorizationInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit AuthorizationInterceptor(const std::string* header_value)
      : header_value_(header_value) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kAuthorizationMetadataKey, *header_value_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_value_;  // owned by the factory, which outlives the channel's calls
};

class AuthorizationInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit AuthorizationInterceptorFactory(std::string token)
      : header_value_(std::string(kBearerPrefix) + token) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new AuthorizationInterceptor(&header_value_);
  }

 private:
  const std::string header_value_;
};

}  // namespace

std::shared_ptr<grpc::Channel> CreateAuthorizedChannel(
    const std::string& target, std::shared_ptr<grpc::ChannelCredentials> credentials,
    grpc::ChannelArguments args, std::string token) {
  if (credentials == nullptr) {
    credentials = grpc::InsecureChannelCredentials();
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  if (!token.empty()) {
    factories.push_back(std::make_unique<AuthorizationInterceptorFactory>(std::move(token)));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                  std::move(factories));
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the token file ", path));
  }
  std::string text(kMaxTokenFileBytes + 1, '\0');
  in.read(text.data(), kMaxTokenFileBytes + 1);
  if (in.bad()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the token file ", path));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxTokenFileBytes)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the token file ", path, " is larger than ", kMaxTokenFileBytes, " bytes"));
  }
  // Lines starting with '#' are comments (e.g. what the token is for); the rest is the token.
  std::string uncommented;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#")) {
      absl::StrAppend(&uncommented, line, "\n");
    }
  }
  const absl::string_view token = absl::StripAsciiWhitespace(uncommented);
  if (token.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the token file ", path, " is empty"));
  }
  for (const char c : token) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the token file ", path, " holds more than one token or non-printable characters"));
    }
  }
  return std::string(token);
}

}  // namespace portcullis::grpc_client
