#include "verifier-service/src/fetch/ssrf_conformance.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "boost/json.hpp"
#include "common/url/url.h"
#include "verifier-service/src/fetch/egress_policy.h"

namespace portcullis::verifier::fetch {
namespace {

namespace json = boost::json;

// SSRF-POLICY.md: the harness answers every name of a `url` vector with this address.
constexpr char kStubAnswer[] = "93.184.216.34";
constexpr char kResolvedIpUrl[] = "http://resolved-ip.test/";

std::string Str(const json::string& text) { return std::string(text.data(), text.size()); }

absl::StatusOr<std::vector<std::string>> StringArray(const json::value& value,
                                                     absl::string_view what) {
  const json::array* array = value.if_array();
  if (array == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not an array"));
  }
  std::vector<std::string> strings;
  for (const json::value& item : *array) {
    if (!item.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " holds a non-string"));
    }
    strings.push_back(Str(item.as_string()));
  }
  return strings;
}

absl::Status ReadInput(const json::value& input, SsrfVector& vector) {
  if (vector.kind == "resolved_ip" || vector.kind == "url") {
    if (!input.is_string()) {
      return absl::InvalidArgumentError("input is not a string");
    }
    vector.text = Str(input.as_string());
    return absl::OkStatus();
  }
  const json::object* object = input.if_object();
  if (object == nullptr) {
    return absl::InvalidArgumentError("input is not an object");
  }
  if (vector.kind == "redirect_chain") {
    const json::value* start = object->if_contains("start");
    const json::value* dns = object->if_contains("dns");
    const json::value* hops = object->if_contains("hops");
    if (start == nullptr || !start->is_string() || dns == nullptr || !dns->is_object() ||
        hops == nullptr || !hops->is_array()) {
      return absl::InvalidArgumentError("redirect_chain input needs start, dns and hops");
    }
    vector.text = Str(start->as_string());
    for (const auto& [name, answers] : dns->as_object()) {
      absl::StatusOr<std::vector<std::string>> list = StringArray(answers, "a dns entry");
      if (!list.ok()) {
        return list.status();
      }
      vector.dns[std::string(name)] = *std::move(list);
    }
    for (const json::value& item : hops->as_array()) {
      const json::object* hop = item.if_object();
      const json::value* status = hop != nullptr ? hop->if_contains("status") : nullptr;
      if (status == nullptr || !status->is_int64()) {
        return absl::InvalidArgumentError("a hop needs an integer status");
      }
      SsrfHop parsed;
      parsed.status = static_cast<int>(status->as_int64());
      if (const json::value* location = hop->if_contains("location"); location != nullptr) {
        if (!location->is_string()) {
          return absl::InvalidArgumentError("a hop's location is not a string");
        }
        parsed.location = Str(location->as_string());
      }
      if (const json::value* type = hop->if_contains("content_type"); type != nullptr) {
        if (!type->is_string()) {
          return absl::InvalidArgumentError("a hop's content_type is not a string");
        }
        parsed.content_type = Str(type->as_string());
      }
      vector.hops.push_back(std::move(parsed));
    }
    return absl::OkStatus();
  }
  if (vector.kind == "dns_rebind") {
    const json::value* url = object->if_contains("url");
    const json::value* lookups = object->if_contains("lookups");
    if (url == nullptr || !url->is_string() || lookups == nullptr || !lookups->is_array()) {
      return absl::InvalidArgumentError("dns_rebind input needs url and lookups");
    }
    vector.text = Str(url->as_string());
    for (const json::value& item : lookups->as_array()) {
      absl::StatusOr<std::vector<std::string>> list = StringArray(item, "a lookup");
      if (!list.ok()) {
        return list.status();
      }
      vector.lookups.push_back(*std::move(list));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown kind ", vector.kind));
}

absl::StatusOr<std::vector<net::IpAddress>> ParseAnswers(const std::vector<std::string>& texts) {
  std::vector<net::IpAddress> addresses;
  for (const std::string& text : texts) {
    absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(text);
    if (!address.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("stub answer ", text, " is not an address: ", address.status().message()));
    }
    addresses.push_back(*std::move(address));
  }
  if (addresses.empty()) {
    return absl::NotFoundError("stub DNS: no records");
  }
  return addresses;
}

HttpResponse Html() {
  HttpResponse response;
  response.status = 200;
  response.content_type = "text/html";
  response.body = "<!doctype html><title>stub origin</title>";
  return response;
}

// The path checks shared by every kind; appends what went wrong to `problems`.
void CheckPath(const std::vector<FetchEvent>& events, std::vector<std::string>& problems) {
  const EgressPolicy production;
  const FetchEvent* pending_lookup = nullptr;
  int lookups_since_connect = 0;
  for (const FetchEvent& event : events) {
    if (event.kind == FetchEvent::Kind::kLookup) {
      ++lookups_since_connect;
      pending_lookup = &event;
      if (lookups_since_connect > 1) {
        problems.push_back(absl::StrCat("two lookups for one hop (", event.host, ")"));
      }
      continue;
    }
    if (!event.address.has_value()) {
      problems.push_back(absl::StrCat("connection to ", event.url, " without an address"));
      continue;
    }
    if (absl::Status status = production.CheckAddress(*event.address); !status.ok()) {
      problems.push_back(absl::StrCat("CONNECTION ATTEMPTED to a forbidden address (", event.url,
                                      "): ", status.message()));
    }
    absl::StatusOr<url::Url> url = url::ParseUrl(event.url);
    const bool literal = url.ok() && IsIpLiteralHost(*url);
    if (literal) {
      if (lookups_since_connect != 0) {
        problems.push_back(
            absl::StrCat("a lookup before connecting to the IP literal ", event.url));
      }
      const std::optional<net::IpAddress> own = net::IpAddress::FromUrl(*url);
      if (!own.has_value() || *own != *event.address) {
        problems.push_back(
            absl::StrCat("connection to ", event.url, " went to ", event.address->ToString()));
      }
    } else if (lookups_since_connect != 1 || pending_lookup == nullptr) {
      problems.push_back(absl::StrCat(lookups_since_connect, " lookups before connecting to ",
                                      event.url, " (exactly one per hop)"));
    } else {
      if (pending_lookup->host != event.host) {
        problems.push_back(absl::StrCat("connection to ", event.host, " after a lookup of ",
                                        pending_lookup->host));
      }
      const bool pinned =
          pending_lookup->answers.ok() &&
          std::find(pending_lookup->answers->begin(), pending_lookup->answers->end(),
                    *event.address) != pending_lookup->answers->end();
      if (!pinned) {
        problems.push_back(absl::StrCat("connection to ", event.address->ToString(),
                                        " is not an answer of the hop's lookup (not pinned)"));
      }
    }
    lookups_since_connect = 0;
    pending_lookup = nullptr;
  }
}

}  // namespace

void ScriptedResolver::Resolve(absl::string_view host, Callback callback) {
  ++lookups_;
  absl::StatusOr<std::vector<net::IpAddress>> answers = script_(host);
  FetchEvent event;
  event.kind = FetchEvent::Kind::kLookup;
  event.host = std::string(host);
  event.answers = answers;
  events_->push_back(std::move(event));
  std::move(callback)(std::move(answers));
}

void RecordingHttpClient::Fetch(HttpRequest request, Callback callback) {
  ++connections_;
  FetchEvent event;
  event.kind = FetchEvent::Kind::kConnect;
  event.host = request.url.host();
  event.url = request.url.href();
  event.address = request.address;
  events_->push_back(std::move(event));
  std::move(callback)(script_(request));
}

absl::StatusOr<std::vector<SsrfVector>> ParseSsrfVectors(absl::string_view json_text) {
  json::error_code error;
  const json::value root =
      json::parse(json::string_view(json_text.data(), json_text.size()), error);
  if (error || !root.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SSRF vectors: not a JSON array: ", error ? error.message() : "not an array"));
  }
  if (root.as_array().empty()) {
    return absl::InvalidArgumentError("SSRF vectors: the file holds no vector");
  }
  std::vector<SsrfVector> vectors;
  for (const json::value& item : root.as_array()) {
    const json::object* object = item.if_object();
    const auto string_field = [&](const char* name) -> const json::string* {
      const json::value* value = object != nullptr ? object->if_contains(name) : nullptr;
      return value != nullptr ? value->if_string() : nullptr;
    };
    const json::string* id = string_field("id");
    const json::string* kind = string_field("kind");
    const json::string* expect = string_field("expect");
    if (id == nullptr || kind == nullptr || expect == nullptr || !object->contains("input") ||
        (*expect != "block" && *expect != "allow")) {
      return absl::InvalidArgumentError(
          absl::StrCat("SSRF vectors: malformed vector ", json::serialize(item)));
    }
    SsrfVector vector;
    vector.id = Str(*id);
    vector.kind = Str(*kind);
    vector.expect_block = *expect == "block";
    if (const json::string* why = string_field("why"); why != nullptr) {
      vector.why = Str(*why);
    }
    vector.input_json = json::serialize(object->at("input"));
    if (absl::Status status = ReadInput(object->at("input"), vector); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SSRF vectors: vector ", vector.id, ": ", status.message()));
    }
    vectors.push_back(std::move(vector));
  }
  return vectors;
}

SsrfVectorRun RunSsrfVector(const SsrfVector& vector) {
  SsrfVectorRun run;
  std::string fetch_url = vector.text;
  ScriptedResolver::Script dns;
  RecordingHttpClient::Script origin = [](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return Html();
  };

  if (vector.kind == "resolved_ip") {
    fetch_url = kResolvedIpUrl;
    absl::StatusOr<net::IpAddress> address = net::IpAddress::Parse(vector.text);
    if (!address.ok()) {
      // A resolver never hands the fetch path something that is not an address, so the policy
      // cannot be run on it: whatever the vector expects, it proves nothing and fails.
      run.result.outcome = FetchOutcome::kBadUrl;
      run.result.detail = std::string(address.status().message());
      run.problems.push_back(absl::StrCat("the input is not an IP address (",
                                          address.status().message(),
                                          "): the egress policy never ran on it"));
      return run;
    }
    dns = [address = *address](absl::string_view) -> absl::StatusOr<std::vector<net::IpAddress>> {
      return std::vector<net::IpAddress>{address};
    };
  } else if (vector.kind == "url") {
    dns = [](absl::string_view) -> absl::StatusOr<std::vector<net::IpAddress>> {
      return std::vector<net::IpAddress>{*net::IpAddress::Parse(kStubAnswer)};
    };
  } else if (vector.kind == "redirect_chain") {
    dns = [&vector](absl::string_view host) -> absl::StatusOr<std::vector<net::IpAddress>> {
      const auto it = vector.dns.find(std::string(host));
      if (it == vector.dns.end()) {
        return absl::NotFoundError(absl::StrCat("stub DNS: NXDOMAIN for ", host));
      }
      return ParseAnswers(it->second);
    };
    auto served = std::make_shared<size_t>(0);
    origin = [&vector, served](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
      const size_t index = (*served)++;
      HttpResponse response;
      if (index >= vector.hops.size()) {
        response.status = 404;
        response.content_type = "text/plain";
        return response;
      }
      const SsrfHop& hop = vector.hops[index];
      response.status = hop.status;
      response.content_type = hop.content_type;
      response.location = hop.location;
      if (hop.status >= 200 && hop.status < 300) {
        response.body = Html().body;
      }
      return response;
    };
  } else if (vector.kind == "dns_rebind") {
    auto asked = std::make_shared<size_t>(0);
    dns = [&vector, asked](absl::string_view host) -> absl::StatusOr<std::vector<net::IpAddress>> {
      const size_t index = (*asked)++;
      if (index >= vector.lookups.size()) {
        return absl::NotFoundError(absl::StrCat("stub DNS: no scripted answer left for ", host));
      }
      return ParseAnswers(vector.lookups[index]);
    };
    auto served = std::make_shared<size_t>(0);
    origin = [&vector, served](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      const size_t index = (*served)++;
      if (index + 1 >= vector.lookups.size()) {
        return Html();
      }
      HttpResponse response;
      response.status = 302;
      response.content_type = "text/html";
      response.location = request.url.href();
      return response;
    };
  } else {
    run.problems.push_back(absl::StrCat("unknown kind \"", vector.kind, "\": nothing was run"));
    return run;
  }

  ScriptedResolver resolver(dns, &run.events);
  RecordingHttpClient http(origin, &run.events);
  const EgressPolicy policy;
  absl::StatusOr<std::unique_ptr<SafeFetcher>> fetcher =
      SafeFetcher::Create(SafeFetcherConfig{}, &policy, &resolver, &http);
  if (!fetcher.ok()) {
    run.problems.push_back(std::string(fetcher.status().message()));
    return run;
  }
  absl::Notification done;
  (*fetcher)->Fetch(fetch_url, [&](FetchResult result) {
    run.result = std::move(result);
    done.Notify();
  });
  done.WaitForNotification();

  run.blocked = run.result.outcome != FetchOutcome::kOk;
  const std::string got =
      run.blocked ? absl::StrCat("block (", FetchOutcomeName(run.result.outcome), ": ",
                                 run.result.detail, ")")
                  : "allow";
  if (run.blocked != vector.expect_block) {
    run.problems.push_back(
        absl::StrCat("expected ", vector.expect_block ? "block" : "allow", ", got ", got));
  } else if (vector.expect_block) {
    const std::vector<FetchOutcome> expected =
        ExpectedRefusals(vector, (*fetcher)->config().max_redirects);
    if (std::find(expected.begin(), expected.end(), run.result.outcome) == expected.end()) {
      std::vector<std::string> names;
      for (const FetchOutcome outcome : expected) {
        names.push_back(std::string(FetchOutcomeName(outcome)));
      }
      run.problems.push_back(absl::StrCat("expected a refusal by the policy (",
                                          absl::StrJoin(names, " or "), "), got ", got));
    }
    if (vector.kind == "url") {
      for (const FetchEvent& event : run.events) {
        if (event.kind == FetchEvent::Kind::kLookup) {
          run.problems.push_back(absl::StrCat("a lookup of ", event.host,
                                              " before the refusal: a url vector is refused "
                                              "before DNS"));
          break;
        }
      }
    }
  }
  CheckPath(run.events, run.problems);
  run.passed = run.problems.empty();
  return run;
}

std::vector<FetchOutcome> ExpectedRefusals(const SsrfVector& vector, int max_redirects) {
  if (vector.kind == "url") {
    return {FetchOutcome::kBadUrl, FetchOutcome::kBadScheme, FetchOutcome::kForbiddenUrl,
            FetchOutcome::kForbiddenAddress};
  }
  if (vector.kind == "redirect_chain") {
    std::vector<FetchOutcome> expected = {FetchOutcome::kForbiddenAddress,
                                          FetchOutcome::kForbiddenUrl, FetchOutcome::kBadScheme};
    const int redirects = static_cast<int>(
        std::count_if(vector.hops.begin(), vector.hops.end(),
                      [](const SsrfHop& hop) { return hop.status >= 300 && hop.status < 400; }));
    if (redirects > max_redirects) {
      expected.push_back(FetchOutcome::kTooManyRedirects);
    }
    return expected;
  }
  // resolved_ip, dns_rebind: an answer the policy refused.
  return {FetchOutcome::kForbiddenAddress};
}

std::string DescribeEvents(const std::vector<FetchEvent>& events) {
  std::vector<std::string> parts;
  for (const FetchEvent& event : events) {
    if (event.kind == FetchEvent::Kind::kLookup) {
      if (event.answers.ok()) {
        std::vector<std::string> answers;
        for (const net::IpAddress& address : *event.answers) {
          answers.push_back(address.ToString());
        }
        parts.push_back(
            absl::StrCat("lookup ", event.host, " -> [", absl::StrJoin(answers, ", "), "]"));
      } else {
        parts.push_back(absl::StrCat(
            "lookup ", event.host, " -> ",
            event.answers.status().code() == absl::StatusCode::kNotFound ? "NXDOMAIN" : "error"));
      }
    } else {
      parts.push_back(absl::StrCat("connect ", event.url, " @ ",
                                   event.address.has_value() ? event.address->ToString() : "?"));
    }
  }
  return parts.empty() ? "(no lookup, no connection)" : absl::StrJoin(parts, "; ");
}

}  // namespace portcullis::verifier::fetch
