#include "tools/portcullis/src/delivery_commands.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/lifecycle_commands.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;
using Stub = v1::Verifier::StubInterface;

int DeliveryUsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << DeliveryUsage();
  return kExitUsage;
}

// One call and its JSON answer.
template <typename Method, typename Request, typename Response>
int Call(Stub& stub, Method method, const CliOptions& options, const Request& request,
         Response* response, std::ostream& out, std::ostream& err) {
  if (const grpc::Status status =
          CallWithDeadline(stub, method, options.timeout, request, response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(*response, out, err);
}

int RunSubscription(const std::vector<std::string>& args, const CliOptions& options, Stub& stub,
                    std::ostream& out, std::ostream& err) {
  const std::string& verb = args[1];
  if (verb == "add") {
    if (args.size() != 2) {
      return DeliveryUsageError("'subscription add' takes options only", err);
    }
    if (options.list_site.empty() == options.subscription_publisher.empty()) {
      return DeliveryUsageError("give exactly one of --site and --publisher", err);
    }
    if (options.subscription_url.empty() || options.subscription_events.empty()) {
      return DeliveryUsageError("--url and --events are required", err);
    }
    if (options.subscription_secret.empty() == options.subscription_signing_key.empty()) {
      return DeliveryUsageError("give exactly one of --secret and --signing-key", err);
    }
    v1::CreateSubscriptionRequest request;
    request.set_site(options.list_site);
    request.set_publisher(options.subscription_publisher);
    request.set_url(options.subscription_url);
    for (absl::string_view event :
         absl::StrSplit(options.subscription_events, ',', absl::SkipWhitespace())) {
      request.add_events(std::string(absl::StripAsciiWhitespace(event)));
    }
    request.set_secret(options.subscription_secret);
    request.set_signing_key(options.subscription_signing_key);
    v1::CreateSubscriptionResponse response;
    return Call(stub, &Stub::CreateSubscription, options, request, &response, out, err);
  }
  if (verb == "list") {
    if (args.size() != 2) {
      return DeliveryUsageError("'subscription list' takes no arguments", err);
    }
    v1::ListSubscriptionsRequest request;
    request.set_site(options.list_site);
    v1::ListSubscriptionsResponse response;
    return Call(stub, &Stub::ListSubscriptions, options, request, &response, out, err);
  }
  if (verb == "remove" || verb == "test") {
    if (args.size() != 3) {
      return DeliveryUsageError("'subscription " + verb + "' takes the subscription id", err);
    }
    if (verb == "remove") {
      v1::RemoveSubscriptionRequest request;
      request.set_subscription_id(args[2]);
      v1::RemoveSubscriptionResponse response;
      return Call(stub, &Stub::RemoveSubscription, options, request, &response, out, err);
    }
    v1::SendTestEventRequest request;
    request.set_subscription_id(args[2]);
    v1::SendTestEventResponse response;
    return Call(stub, &Stub::SendTestEvent, options, request, &response, out, err);
  }
  return DeliveryUsageError("unknown subscription command '" + verb + "'", err);
}

int RunDelivery(const std::vector<std::string>& args, const CliOptions& options, Stub& stub,
                std::ostream& out, std::ostream& err) {
  const std::string& verb = args[1];
  if (verb == "list") {
    if (args.size() != 2 || options.delivery_subscription.empty()) {
      return DeliveryUsageError("'delivery list' takes --subscription ID", err);
    }
    v1::ListDeliveriesRequest request;
    request.set_subscription_id(options.delivery_subscription);
    request.set_limit(options.limit);
    v1::ListDeliveriesResponse response;
    return Call(stub, &Stub::ListDeliveries, options, request, &response, out, err);
  }
  if (verb != "replay") {
    return DeliveryUsageError("unknown delivery command '" + verb + "'", err);
  }
  v1::ReplayDeliveriesRequest request;
  if (args.size() == 3) {
    if (!options.delivery_subscription.empty() || options.delivery_failed ||
        !options.delivery_since.empty()) {
      return DeliveryUsageError("a delivery ID takes no --subscription, --failed or --since", err);
    }
    request.set_delivery_id(args[2]);
  } else if (args.size() == 2 && !options.delivery_subscription.empty()) {
    request.set_subscription_id(options.delivery_subscription);
    request.set_failed_only(options.delivery_failed);
    if (!options.delivery_since.empty()) {
      absl::StatusOr<absl::Time> since = ParseSince(options.delivery_since, absl::Now());
      if (!since.ok()) {
        return DeliveryUsageError(std::string(since.status().message()), err);
      }
      request.mutable_since()->set_seconds(absl::ToUnixSeconds(*since));
    }
  } else {
    return DeliveryUsageError("'delivery replay' takes a delivery ID or --subscription ID", err);
  }
  request.set_dry_run(options.dry_run);
  v1::ReplayDeliveriesResponse response;
  return Call(stub, &Stub::ReplayDeliveries, options, request, &response, out, err);
}

}  // namespace

std::string DeliveryUsage() {
  return "  subscription add (--site DOMAIN | --publisher ID) --url URL --events E[,E...]\n"
         "                   (--secret whsec_... | --signing-key whsk_...)\n"
         "                                 send a site's mention.* or a publisher's ingest.*\n"
         "                                 events to URL, signed (Standard Webhooks v1 / v1a);\n"
         "                                 prints the subscription (subscription_id) as JSON\n"
         "  subscription list [--site DOMAIN]  the subscriptions, with state and disable reason\n"
         "  subscription remove ID         remove a subscription and its deliveries\n"
         "  subscription test ID           queue a ping event to it\n"
         "  delivery list --subscription ID  its deliveries: attempts, last status, latency,\n"
         "                                 next attempt\n"
         "  delivery replay (ID | --subscription ID [--failed] [--since TIME]) [--dry-run]\n"
         "                                 send again (same webhook-id); TIME is RFC 3339 or a\n"
         "                                 duration back from now (24h); --dry-run counts only\n";
}

std::optional<int> RunDeliveryCommand(const std::vector<std::string>& args,
                                      const CliOptions& options, std::ostream& out,
                                      std::ostream& err) {
  if (args.empty() || (args[0] != "subscription" && args[0] != "delivery")) {
    return std::nullopt;
  }
  if (args.size() < 2) {
    return DeliveryUsageError("missing " + args[0] + " command", err);
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  return args[0] == "subscription" ? RunSubscription(args, options, *stub, out, err)
                                   : RunDelivery(args, options, *stub, out, err);
}

}  // namespace portcullis::cli
