#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace portcullis::grpc_client {

// The metadata key and the prefix of its value that carry an API token (`Bearer pct_…`).
inline constexpr char kAuthorizationMetadataKey[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";

// A channel whose every call carries `authorization: Bearer <token>`, added by a client
// interceptor before the initial metadata is sent (so stubs, the callback API and health checks
// built on the channel need no per-call code). An empty `token` adds no metadata. The token is
// kept only inside the interceptor; it is never logged.
std::shared_ptr<grpc::Channel> CreateAuthorizedChannel(
    const std::string& target, std::shared_ptr<grpc::ChannelCredentials> credentials,
    grpc::ChannelArguments args, std::string token);

// Reads the token a client presents from a file (a Secret mounted as a file, or one written by
// scripts/up): surrounding whitespace is trimmed, lines starting with '#' are comments.
// FAILED_PRECONDITION naming the path (never the contents) when the file cannot be read, is
// larger than 4 KiB, or holds no token, or when the token contains whitespace or control
// characters (it must fit one metadata value).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace portcullis::grpc_client
