#include "verifier-service/src/server/fetch_rpcs.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/url/url.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

absl::Status CheckUrlText(const std::string& url) {
  if (url.empty()) {
    return absl::InvalidArgumentError("url is required");
  }
  if (url.size() > kMaxFetchUrlBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("url is longer than ", kMaxFetchUrlBytes, " bytes"));
  }
  return absl::OkStatus();
}

void Refuse(absl::string_view reason, absl::string_view description,
            v1::CheckUrlResponse* response) {
  response->set_allowed(false);
  response->set_reason(std::string(reason));
  response->set_reason_description(std::string(description));
}

void AddHeader(absl::string_view name, const std::optional<std::string>& value,
               v1::SafeFetchResponse* response) {
  if (value.has_value()) {
    v1::FetchHeader* header = response->add_headers();
    header->set_name(std::string(name));
    header->set_value(*value);
  }
}

}  // namespace

absl::Status Validate(const v1::CheckUrlRequest& request) { return CheckUrlText(request.url()); }

absl::StatusOr<fetch::FetchLimits> Validate(const v1::SafeFetchRequest& request,
                                            const fetch::FetchLimits& max) {
  if (absl::Status status = CheckUrlText(request.url()); !status.ok()) {
    return status;
  }
  const v1::FetchLimits& asked = request.limits();
  if (asked.deadline_ms() < 0 || asked.max_body_bytes() < 0 || asked.max_redirects() < 0) {
    return absl::InvalidArgumentError("limits must not be negative");
  }
  fetch::FetchLimits limits = max;
  if (asked.deadline_ms() > 0) {
    limits.total_timeout = std::min(absl::Milliseconds(asked.deadline_ms()), max.total_timeout);
  }
  if (asked.max_body_bytes() > 0) {
    limits.max_body_bytes = std::min<int64_t>(asked.max_body_bytes(), max.max_body_bytes);
  }
  if (asked.max_redirects() > 0) {
    limits.max_redirects = std::min(asked.max_redirects(), max.max_redirects);
  }
  return limits;
}

void RefuseUrl(const absl::Status& status, v1::CheckUrlResponse* response) {
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented:
      Refuse("bad_scheme", status.message(), response);
      return;
    case absl::StatusCode::kPermissionDenied:
      // The policy says what it refused: the address of an IP-literal host, or the URL itself.
      Refuse(fetch::RefusalOf(status) == fetch::EgressRefusal::kAddress ? "forbidden_address"
                                                                        : "forbidden_url",
             status.message(), response);
      return;
    default:
      Refuse("bad_url", status.message(), response);
      return;
  }
}

void RefuseLookup(const absl::Status& status, v1::CheckUrlResponse* response) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      Refuse("dns_not_found", status.message(), response);
      return;
    case absl::StatusCode::kInvalidArgument:
      Refuse("bad_url", status.message(), response);
      return;
    default:
      Refuse("dns_temporary", status.message(), response);
      return;
  }
}

void AnswerAddresses(absl::Span<const net::IpAddress> addresses, const absl::Status& verdict,
                     v1::CheckUrlResponse* response) {
  for (const net::IpAddress& address : addresses) {
    response->add_resolved_addresses(address.ToString());
  }
  if (verdict.ok()) {
    response->set_allowed(true);
    return;
  }
  Refuse(absl::IsPermissionDenied(verdict) ? "forbidden_address" : "bad_url", verdict.message(),
         response);
}

void ToProto(const fetch::FetchResult& result, const fetch::FetchLimits& limits,
             v1::SafeFetchResponse* response) {
  response->set_outcome(std::string(fetch::FetchOutcomeName(result.outcome)));
  response->set_transient(fetch::IsTransient(result.outcome));
  response->set_detail(result.detail);
  response->set_final_url(result.final_url);
  response->set_status(result.status);
  if (!result.content_type.empty()) {
    AddHeader("content-type", result.content_type, response);
  }
  AddHeader("content-length", result.content_length, response);
  AddHeader("location", result.location, response);
  AddHeader("retry-after", result.retry_after, response);
  AddHeader("etag", result.etag, response);
  AddHeader("last-modified", result.last_modified, response);
  if (result.outcome == fetch::FetchOutcome::kOk) {
    response->set_body(result.body);
  }
  response->set_redirects(result.redirects);
  v1::FetchLimits* effective = response->mutable_effective_limits();
  effective->set_deadline_ms(absl::ToInt64Milliseconds(limits.total_timeout));
  effective->set_max_body_bytes(limits.max_body_bytes);
  effective->set_max_redirects(limits.max_redirects);
}

PORTCULLIS_VERIFIER_RPC(CheckUrl) {
  return rpcs_.Serve(
      "CheckUrl", context, request, response, kFetchAccess,
      [](const v1::CheckUrlRequest& request) { return Validate(request); },
      OnLoop([policy = deps_.policy, resolver = deps_.resolver, request, response](Reply reply) {
        absl::StatusOr<url::Url> url = policy->ParseAndCheckUrl(request->url());
        if (!url.ok()) {
          RefuseUrl(url.status(), response);
          std::move(reply)(absl::OkStatus());
          return;
        }
        if (fetch::IsIpLiteralHost(*url)) {
          const std::optional<net::IpAddress> literal = net::IpAddress::FromUrl(*url);
          if (!literal.has_value()) {
            RefuseUrl(absl::InvalidArgumentError("not an IP address"), response);
          } else {
            const auto addresses = absl::MakeConstSpan(&*literal, 1);
            AnswerAddresses(addresses, policy->CheckAddresses(*url, addresses), response);
          }
          std::move(reply)(absl::OkStatus());
          return;
        }
        // The callback runs on the resolver's loop (or at once); it only formats and answers.
        resolver->Resolve(url->host(), [policy, url = *url, response, reply = std::move(reply)](
                                           absl::StatusOr<std::vector<net::IpAddress>> answers) mutable {
          if (absl::IsCancelled(answers.status())) {
            std::move(reply)(absl::UnavailableError("resolver shutting down, retry later"));
            return;
          }
          if (!answers.ok()) {
            RefuseLookup(answers.status(), response);
          } else {
            AnswerAddresses(*answers, policy->CheckAddresses(url, *answers), response);
          }
          std::move(reply)(absl::OkStatus());
        });
      }));
}

PORTCULLIS_VERIFIER_RPC(SafeFetch) {
  return rpcs_.Serve(
      "SafeFetch", context, request, response, kFetchAccess,
      [fetcher = deps_.fetcher](const v1::SafeFetchRequest& request) {
        return Validate(request, fetcher->max_limits());
      },
      OnLoop([fetcher = deps_.fetcher, request, response](fetch::FetchLimits limits, Reply reply) {
        // The callback runs on the fetcher's loops (or at once); it only formats and answers.
        fetcher->Fetch(request->url(), limits,
                       [response, limits, reply = std::move(reply)](fetch::FetchResult result) mutable {
                         if (result.outcome == fetch::FetchOutcome::kCancelled) {
                           std::move(reply)(
                               absl::UnavailableError("fetcher shutting down, retry later"));
                           return;
                         }
                         ToProto(result, limits, response);
                         std::move(reply)(absl::OkStatus());
                       });
      }));
}

}  // namespace portcullis::verifier::server
