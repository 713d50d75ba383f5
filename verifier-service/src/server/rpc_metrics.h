#pragma once

// portcullis_verifier_grpc_requests_total{method, code}: every RPC this verifier answered, counted
// by a gRPC server interceptor, so a caller's load balancing can be seen per pod (the
// multi-instance test reads it from each verifier). Labels are bounded: `method` is one of the
// methods the server registers (the Verifier's and grpc.health.v1's) or "other"; `code` is the
// gRPC status code name.

#include <memory>
#include <vector>

#include "grpcpp/support/server_interceptor.h"
#include "prometheus/registry.h"

namespace portcullis::verifier::server {

inline constexpr char kGrpcRequestsMetric[] = "portcullis_verifier_grpc_requests_total";

// The interceptor factories for ServerBuilder::experimental().SetInterceptorCreators. `registry`
// must outlive the server.
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeRpcMetricsInterceptors(prometheus::Registry& registry);

}  // namespace portcullis::verifier::server
