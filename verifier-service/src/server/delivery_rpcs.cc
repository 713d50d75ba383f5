#include "verifier-service/src/server/delivery_rpcs.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/delivery/webhook_signer.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr size_t kMaxUrlBytes = 2048;
constexpr size_t kMaxPublisherBytes = 128;
constexpr int kDefaultDeliveryPage = 100;

bool IsSubscribable(const std::string& event) {
  return std::any_of(std::begin(kSubscribableEvents), std::end(kSubscribableEvents),
                     [&](const char* known) { return event == known; });
}

bool IsEventType(const std::string& event) { return event == "ping" || IsSubscribable(event); }

bool LooksLikeUuid(const std::string& id) {
  if (id.size() != 36) {
    return false;
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(id[i]))) {
      return false;
    }
  }
  return true;
}

absl::Status CheckUuid(const std::string& id, absl::string_view field) {
  if (!LooksLikeUuid(id)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be a UUID"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<store::NewSubscription> ValidateCreateSubscription(
    const v1::CreateSubscriptionRequest& request, const auth::Caller& caller,
    const fetch::EgressPolicy& policy) {
  store::NewSubscription subscription;
  if (request.site().empty() == request.publisher().empty()) {
    return absl::InvalidArgumentError("give exactly one of site and publisher");
  }
  if (!request.site().empty()) {
    v1::AddSiteRequest as_site;
    as_site.set_domain(request.site());
    absl::StatusOr<std::string> domain = intake::Validate(as_site);
    if (!domain.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("site: ", domain.status().message()));
    }
    subscription.site = *std::move(domain);
    RETURN_IF_ERROR(RequireSite(caller, subscription.site));
  } else {
    if (request.publisher().size() > kMaxPublisherBytes) {
      return absl::InvalidArgumentError("publisher is longer than 128 bytes");
    }
    subscription.publisher = request.publisher();
    RETURN_IF_ERROR(RequireUnbound(caller, "subscribe to a publisher's events"));
  }
  if (request.url().empty() || request.url().size() > kMaxUrlBytes) {
    return absl::InvalidArgumentError("url must be 1 to 2048 bytes");
  }
  absl::StatusOr<url::Url> url = policy.ParseAndCheckUrl(request.url());
  if (!url.ok()) {
    if (absl::IsPermissionDenied(url.status())) {
      return absl::PermissionDeniedError(
          absl::StrCat("destination refused by the egress policy: ", url.status().message()));
    }
    return absl::InvalidArgumentError(absl::StrCat("url: ", url.status().message()));
  }
  subscription.url = url->href();
  if (request.events().empty() ||
      request.events_size() > static_cast<int>(std::size(kSubscribableEvents))) {
    return absl::InvalidArgumentError("events must name 1 to 6 event types");
  }
  std::set<std::string> seen;
  for (const std::string& event : request.events()) {
    if (!IsSubscribable(event)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "events: unknown event type (mention.verified, mention.updated, mention.removed, "
          "mention.failed, ingest.accepted, ingest.quarantined)"));
    }
    const bool mention = absl::StartsWith(event, "mention.");
    if (mention != !subscription.site.empty()) {
      return absl::InvalidArgumentError(
          "events: a site's subscription takes mention.* events, a publisher's ingest.* events");
    }
    if (seen.insert(event).second) {
      subscription.events.push_back(event);
    }
  }
  ASSIGN_OR_RETURN(delivery::SigningKey key,
                   delivery::ParseSigningKey(request.secret(), request.signing_key()));
  subscription.signature_version = key.version;
  subscription.signing_key = std::move(key.material);
  return subscription;
}

absl::StatusOr<store::ReplayFilter> ValidateReplay(const v1::ReplayDeliveriesRequest& request) {
  store::ReplayFilter filter;
  if (request.delivery_id().empty() == request.subscription_id().empty()) {
    return absl::InvalidArgumentError("give a delivery_id or a subscription_id (not both)");
  }
  if (!request.delivery_id().empty()) {
    RETURN_IF_ERROR(CheckUuid(request.delivery_id(), "delivery_id"));
    filter.delivery_id = request.delivery_id();
  } else {
    RETURN_IF_ERROR(CheckUuid(request.subscription_id(), "subscription_id"));
    filter.subscription_id = request.subscription_id();
  }
  if (!request.event_type().empty() && !IsEventType(request.event_type())) {
    return absl::InvalidArgumentError("event_type is not an event type");
  }
  filter.event_type = request.event_type();
  filter.failed_only = request.failed_only();
  if (request.has_since()) {
    filter.since = absl::FromUnixSeconds(request.since().seconds()) +
                   absl::Nanoseconds(request.since().nanos());
  }
  filter.dry_run = request.dry_run();
  return filter;
}

void ToProto(const store::SubscriptionRecord& record, v1::Subscription* out) {
  out->set_subscription_id(record.id);
  out->set_site(record.subscription.site);
  out->set_publisher(record.subscription.publisher);
  out->set_url(record.subscription.url);
  for (const std::string& event : record.subscription.events) {
    out->add_events(event);
  }
  out->set_signature_version(record.subscription.signature_version);
  out->set_public_key(delivery::PublicKeyOf(
      {record.subscription.signature_version, record.subscription.signing_key}));
  out->set_state(record.state);
  out->set_disabled_reason(record.disabled_reason);
  *out->mutable_created_at() = TimestampProto(record.created_at);
}

void ToProto(const store::OutboundDelivery& record, v1::Delivery* out) {
  out->set_delivery_id(record.id);
  out->set_subscription_id(record.subscription_id);
  out->set_webhook_id(record.webhook_id);
  out->set_event_type(record.event_type);
  out->set_state(record.state);
  out->set_attempts(record.attempts);
  out->set_last_status_code(record.last_status_code);
  out->set_last_error(record.last_error);
  out->set_last_latency_ms(record.last_latency_ms);
  if (record.state == "pending") {
    *out->mutable_next_attempt_at() = TimestampProto(record.next_attempt_at);
  }
  *out->mutable_created_at() = TimestampProto(record.created_at);
  if (record.delivered_at.has_value()) {
    *out->mutable_delivered_at() = TimestampProto(*record.delivered_at);
  }
  out->set_body(record.body);
}

PORTCULLIS_VERIFIER_RPC(CreateSubscription) {
  return rpcs_.Serve(
      "CreateSubscription", context, request, response, kAdminAccess,
      [this](const v1::CreateSubscriptionRequest& request, const auth::Caller& caller) {
        return ValidateCreateSubscription(request, caller, *deps_.policy);
      },
      OnPool(*deps_.pool,
             [this, response](store::NewSubscription subscription,
                              const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::SubscriptionRecord record,
                                deps_.deliveries->CreateSubscription(subscription, call.sites()));
               response->set_subscription_id(record.id);
               ToProto(record, response->mutable_subscription());
               call.Info("subscription created id={} site={} publisher={} events={}", record.id,
                         subscription.site, subscription.publisher, subscription.events.size());
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListSubscriptions) {
  return rpcs_.Serve(
      "ListSubscriptions", context, request, response, kAdminAccess,
      [](const v1::ListSubscriptionsRequest& request,
         const auth::Caller& caller) -> absl::StatusOr<std::string> {
        if (request.site().empty()) {
          return std::string();
        }
        v1::AddSiteRequest as_site;
        as_site.set_domain(request.site());
        ASSIGN_OR_RETURN(std::string domain, intake::Validate(as_site));
        RETURN_IF_ERROR(RequireSite(caller, domain));
        return domain;
      },
      OnPool(*deps_.pool, [this, response](std::string site, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<store::SubscriptionRecord> records,
                         deps_.deliveries->ListSubscriptions(site, call.sites()));
        for (const store::SubscriptionRecord& record : records) {
          ToProto(record, response->add_subscriptions());
        }
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(RemoveSubscription) {
  return rpcs_.Serve(
      "RemoveSubscription", context, request, response, kAdminAccess,
      [](const v1::RemoveSubscriptionRequest& request) -> absl::StatusOr<std::string> {
        RETURN_IF_ERROR(CheckUuid(request.subscription_id(), "subscription_id"));
        return request.subscription_id();
      },
      OnPool(*deps_.pool, [this, response](std::string id, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(int64_t removed, deps_.deliveries->RemoveSubscription(id, call.sites()));
        response->set_deliveries_removed(removed);
        call.Info("subscription removed id={} deliveries={}", id, removed);
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(SendTestEvent) {
  return rpcs_.Serve(
      "SendTestEvent", context, request, response, kAdminAccess,
      [](const v1::SendTestEventRequest& request) -> absl::StatusOr<std::string> {
        RETURN_IF_ERROR(CheckUuid(request.subscription_id(), "subscription_id"));
        return request.subscription_id();
      },
      OnPool(*deps_.pool, [this, response](std::string id, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(store::OutboundDelivery record,
                         deps_.deliveries->QueuePing(id, call.sites()));
        ToProto(record, response->mutable_delivery());
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(ListDeliveries) {
  struct Page {
    std::string subscription_id;
    int limit = kDefaultDeliveryPage;
  };
  return rpcs_.Serve(
      "ListDeliveries", context, request, response, kAdminAccess,
      [](const v1::ListDeliveriesRequest& request) -> absl::StatusOr<Page> {
        RETURN_IF_ERROR(CheckUuid(request.subscription_id(), "subscription_id"));
        if (request.limit() < 0 || request.limit() > store::kMaxDeliveryPage) {
          return absl::InvalidArgumentError("limit must be from 1 to 1000 (0: 100)");
        }
        return Page{request.subscription_id(),
                    request.limit() == 0 ? kDefaultDeliveryPage : request.limit()};
      },
      OnPool(*deps_.pool, [this, response](Page page, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(
            std::vector<store::OutboundDelivery> records,
            deps_.deliveries->ListDeliveries(page.subscription_id, page.limit, call.sites()));
        for (const store::OutboundDelivery& record : records) {
          ToProto(record, response->add_deliveries());
        }
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(ReplayDeliveries) {
  return rpcs_.Serve(
      "ReplayDeliveries", context, request, response, kAdminAccess,
      [](const v1::ReplayDeliveriesRequest& request) { return ValidateReplay(request); },
      OnPool(*deps_.pool,
             [this, response](store::ReplayFilter filter, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(int64_t replayed, deps_.deliveries->Replay(filter, call.sites()));
               response->set_replayed(replayed);
               response->set_dry_run(filter.dry_run);
               if (!filter.dry_run) {
                 call.Info("deliveries replayed count={}", replayed);
               }
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
