#include "verifier-service/src/server/rpc_metrics.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"

namespace portcullis::verifier::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// "/package.Service/Method" of every method worth its own label; anything else (an unknown
// method a stranger made up) is "other".
absl::flat_hash_set<std::string> KnownMethods() {
  absl::flat_hash_set<std::string> known = {"/grpc.health.v1.Health/Check",
                                            "/grpc.health.v1.Health/Watch"};
  const google::protobuf::ServiceDescriptor* verifier =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::Verifier::service_full_name());
  for (int i = 0; verifier != nullptr && i < verifier->method_count(); ++i) {
    known.insert(absl::StrCat("/", verifier->full_name(), "/", verifier->method(i)->name()));
  }
  return known;
}

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(prometheus::Family<prometheus::Counter>& requests, std::string method)
      : requests_(requests), method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::string code(absl::StatusCodeToString(
          static_cast<absl::StatusCode>(methods->GetSendStatus().error_code())));
      requests_.Add({{"method", method_}, {"code", code}}).Increment();
    }
    methods->Proceed();
  }

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  const std::string method_;
};

class RpcMetricsFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsFactory(prometheus::Registry& registry)
      : known_(KnownMethods()),
        requests_(prometheus::BuildCounter()
                      .Name(kGrpcRequestsMetric)
                      .Help("RPCs answered, by method (/package.Service/Method, or other) and "
                            "gRPC status code.")
                      .Register(registry)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    const char* method = info->method();
    const bool known = method != nullptr && known_.contains(method);
    return new RpcMetricsInterceptor(requests_, known ? std::string(method) : "other");
  }

 private:
  const absl::flat_hash_set<std::string> known_;
  prometheus::Family<prometheus::Counter>& requests_;
};

}  // namespace

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeRpcMetricsInterceptors(prometheus::Registry& registry) {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<RpcMetricsFactory>(registry));
  return factories;
}

}  // namespace portcullis::verifier::server
