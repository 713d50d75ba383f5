#include "tools/portcullis/src/lifecycle_commands.h"

#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/json/object.hpp"
#include "boost/json/serialize.hpp"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/publisher_commands.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;

int LifecycleUsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << LifecycleUsage();
  return kExitUsage;
}

constexpr absl::Duration kMaxKeepDrops = absl::Hours(24 * 3660);  // Ten years (the server's).

// A duration with days: leading `<N>d`, then what absl::ParseDuration reads (if anything).
absl::StatusOr<absl::Duration> ParseDurationWithDays(absl::string_view text) {
  absl::Duration days = absl::ZeroDuration();
  const size_t d = text.find('d');
  if (d != absl::string_view::npos) {
    int64_t count = 0;
    if (d == 0 || d > 5 || !absl::SimpleAtoi(text.substr(0, d), &count) || count < 0) {
      return absl::InvalidArgumentError("bad days");
    }
    days = absl::Hours(24 * count);
    text.remove_prefix(d + 1);
    if (text.empty()) {
      return days;
    }
  }
  absl::Duration rest;
  if (!absl::ParseDuration(text, &rest) ||
      (d != absl::string_view::npos && rest < absl::ZeroDuration())) {
    return absl::InvalidArgumentError("bad duration");
  }
  return days + rest;
}

// Pages of ListDrops for one filter, until the last.
int ListAllDrops(v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 v1::ListDropsRequest request, std::ostream& out, std::ostream& err) {
  v1::ListDropsResponse all;
  request.set_page_size(1000);
  for (int page_count = 0; page_count < kMaxListPages; ++page_count) {
    v1::ListDropsResponse page;
    if (const grpc::Status status = CallWithDeadline(stub, &v1::Verifier::StubInterface::ListDrops,
                                                     timeout, request, &page);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    all.mutable_drops()->MergeFrom(page.drops());
    if (page.next_page_token().empty()) {
      break;
    }
    request.set_page_token(page.next_page_token());
  }
  return PrintJson(all, out, err);
}

}  // namespace

absl::StatusOr<absl::Duration> ParseKeepDrops(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (lower == "off" || lower == "0") {
    return absl::ZeroDuration();
  }
  const absl::StatusOr<absl::Duration> parsed = ParseDurationWithDays(lower);
  if (!parsed.ok() || *parsed <= absl::ZeroDuration() || *parsed > kMaxKeepDrops ||
      *parsed != absl::Trunc(*parsed, absl::Seconds(1))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--keep-drops must be off or a duration of whole seconds up to ten years (e.g. 7d, 36h, "
        "1d12h), not '",
        text, "'"));
  }
  return *parsed;
}

absl::StatusOr<absl::Time> ParseSince(absl::string_view text, absl::Time now) {
  absl::Time time;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return time;
  }
  const absl::StatusOr<absl::Duration> ago = ParseDurationWithDays(text);
  if (ago.ok() && *ago >= absl::ZeroDuration()) {
    return now - *ago;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--since must be an RFC 3339 time (2026-12-01T00:00:00Z) or how long ago (24h, 7d), not '",
      text, "'"));
}

std::string LifecycleUsage() {
  return "  erase --author-url URL | --source-host HOST | --mention ID [--dry-run]\n"
         "                                 erase a person's mentions (content, author, jobs) and\n"
         "                                 keep salted-hash tombstones: a re-send of an erased\n"
         "                                 source gets 202 and is stored FAILED erased, "
         "unfetched;\n"
         "                                 --dry-run prints what would go\n"
         "  erase --undo --author-url URL | --source-host HOST | --mention ID\n"
         "                                 remove that erasure's tombstones (normal handling "
         "again)\n"
         "  drops list --publisher P [--reason R] [--since T]\n"
         "                                 the drop ledger: a publisher's dropped deliveries kept\n"
         "                                 (publisher --keep-drops), oldest first, as JSON\n"
         "  drops reevaluate --publisher P [--reason R] [--since T] [--dry-run]\n"
         "                                 decide them again on the current keys and settings\n"
         "                                 (signatures judged at their receive time); prints\n"
         "                                 {\"matched\":N,\"accepted\":N,\"still_dropped\":N}\n";
}

int RunDropsCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (args.size() != 2 || (args[1] != "list" && args[1] != "reevaluate")) {
    return LifecycleUsageError("usage: drops list|reevaluate --publisher P (options only)", err);
  }
  if (options.drops_publisher.empty()) {
    return LifecycleUsageError("--publisher is required", err);
  }
  std::optional<absl::Time> since;
  if (!options.drops_since.empty()) {
    absl::StatusOr<absl::Time> parsed = ParseSince(options.drops_since, absl::Now());
    if (!parsed.ok()) {
      return LifecycleUsageError(std::string(parsed.status().message()), err);
    }
    since = *parsed;
  }
  const bool list = args[1] == "list";
  if (list && options.dry_run) {
    return LifecycleUsageError("--dry-run is for 'drops reevaluate'", err);
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  const auto fill = [&](auto& request) {
    request.set_publisher(options.drops_publisher);
    request.set_reason(options.drops_reason);
    if (since.has_value()) {
      const absl::Duration from_epoch = *since - absl::UnixEpoch();
      const int64_t seconds = absl::ToInt64Seconds(absl::Floor(from_epoch, absl::Seconds(1)));
      request.mutable_since()->set_seconds(seconds);
      request.mutable_since()->set_nanos(
          static_cast<int32_t>(absl::ToInt64Nanoseconds(from_epoch - absl::Seconds(seconds))));
    }
  };
  if (list) {
    v1::ListDropsRequest request;
    fill(request);
    return ListAllDrops(*stub, options.timeout, std::move(request), out, err);
  }
  v1::ReevaluateDropsRequest request;
  fill(request);
  request.set_dry_run(options.dry_run);
  v1::ReevaluateDropsResponse response;
  if (const grpc::Status status =
          CallWithDeadline(*stub, &v1::Verifier::StubInterface::ReevaluateDrops, options.timeout,
                           request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  boost::json::object counts;
  counts["matched"] = response.matched();
  counts["accepted"] = response.accepted();
  counts["still_dropped"] = response.still_dropped();
  out << boost::json::serialize(counts) << "\n";
  return kExitOk;
}

int RunEraseCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    return LifecycleUsageError("'erase' takes options only", err);
  }
  v1::EraseRequest request;
  int keys = 0;
  if (!options.erase_author_url.empty()) {
    request.set_author_url(options.erase_author_url);
    ++keys;
  }
  if (!options.erase_source_host.empty()) {
    request.set_source_host(options.erase_source_host);
    ++keys;
  }
  if (!options.erase_mention.empty()) {
    request.set_mention_id(options.erase_mention);
    ++keys;
  }
  if (keys != 1) {
    return LifecycleUsageError("give exactly one of --author-url, --source-host or --mention", err);
  }
  if (options.dry_run && options.undo) {
    return LifecycleUsageError("--dry-run and --undo cannot be combined", err);
  }
  request.set_dry_run(options.dry_run);
  request.set_undo(options.undo);
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  v1::EraseResponse response;
  if (const grpc::Status status = CallWithDeadline(*stub, &v1::Verifier::StubInterface::Erase,
                                                   options.timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

}  // namespace portcullis::cli
