#pragma once

// The outbound delivery RPCs (issue 20): CreateSubscription, ListSubscriptions,
// RemoveSubscription, SendTestEvent, ListDeliveries, ReplayDeliveries. Validation, the mapping,
// and the handlers (VerifierService members, delivery_rpcs.cc). Admin scope; a site-bound token
// manages its sites' subscriptions only, a publisher's need an unbound token.

#include <string>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/store/delivery_store.h"

namespace portcullis::verifier::server {

// The event types a subscription may ask for (ping is always delivered).
inline constexpr const char* kSubscribableEvents[] = {"mention.verified", "mention.updated",
                                                      "mention.removed",  "mention.failed",
                                                      "ingest.accepted",  "ingest.quarantined"};

// A CreateSubscriptionRequest as the store takes it: exactly one scope (site normalized as AddSite
// does; publisher 1 to 128 bytes), the URL parsed and checked by `policy` before DNS (a private
// or special address literal, a special-use name, credentials, a port not allowed:
// PERMISSION_DENIED naming the refusal; malformed: INVALID_ARGUMENT), 1 to 6 distinct known
// events, and one key (webhook_signer.h ParseSigningKey). The caller's binding is checked too.
absl::StatusOr<store::NewSubscription> ValidateCreateSubscription(
    const portcullis::verifier::v1::CreateSubscriptionRequest& request, const auth::Caller& caller,
    const fetch::EgressPolicy& policy);

// A ReplayDeliveriesRequest: a delivery id, or a subscription id with filters (INVALID_ARGUMENT
// for neither, both, or a malformed id or event type).
absl::StatusOr<store::ReplayFilter> ValidateReplay(
    const portcullis::verifier::v1::ReplayDeliveriesRequest& request);

void ToProto(const store::SubscriptionRecord& record, portcullis::verifier::v1::Subscription* out);
void ToProto(const store::OutboundDelivery& record, portcullis::verifier::v1::Delivery* out);

}  // namespace portcullis::verifier::server
