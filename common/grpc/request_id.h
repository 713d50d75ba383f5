#pragma once

// The request id across the gateway → verifier hop: the gateway sends the id of the HTTP request
// it is serving (the one it echoes in X-Request-Id) in this gRPC metadata key; the verifier puts
// it on every log line of that call and in its errors' debug info, never in a public body.
// gRPC lowercases metadata keys.

namespace portcullis::grpc_metadata {

inline constexpr char kRequestIdMetadata[] = "x-request-id";

}  // namespace portcullis::grpc_metadata
