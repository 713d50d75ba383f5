#include "tools/portcullis/src/site_commands.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;

}  // namespace

v1::AddTargetRequest TargetArgument(const std::string& argument) {
  v1::AddTargetRequest request;
  absl::string_view url = argument;
  if (absl::ConsumeSuffix(&url, "*")) {
    request.set_kind(v1::TARGET_KIND_PREFIX);
  } else {
    request.set_kind(v1::TARGET_KIND_EXACT);
  }
  request.set_url(std::string(url));
  return request;
}

std::vector<v1::AddTargetRequest> ParseTargetFile(const std::string& contents,
                                                  std::vector<int>* line_numbers) {
  std::vector<v1::AddTargetRequest> entries;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) {
      continue;
    }
    entries.push_back(TargetArgument(std::string(line)));
    line_numbers->push_back(line_number);
  }
  return entries;
}

int AddSite(v1::Verifier::StubInterface& stub, absl::Duration timeout, const std::string& domain,
            std::ostream& out, std::ostream& err) {
  v1::AddSiteRequest request;
  request.set_domain(domain);
  v1::AddSiteResponse response;
  if (const grpc::Status status =
          CallWithDeadline(stub, &v1::Verifier::StubInterface::AddSite, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

int ListSites(v1::Verifier::StubInterface& stub, absl::Duration timeout, std::ostream& out,
              std::ostream& err) {
  v1::ListSitesResponse all;
  v1::ListSitesRequest request;
  request.set_page_size(1000);
  do {
    v1::ListSitesResponse page;
    if (const grpc::Status status =
            CallWithDeadline(stub, &v1::Verifier::StubInterface::ListSites, timeout, request, &page);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    all.mutable_sites()->MergeFrom(page.sites());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return PrintJson(all, out, err);
}

int RemoveSite(v1::Verifier::StubInterface& stub, absl::Duration timeout, const std::string& domain,
               std::ostream& out, std::ostream& err) {
  v1::RemoveSiteRequest request;
  request.set_domain(domain);
  v1::RemoveSiteResponse response;
  if (const grpc::Status status =
          CallWithDeadline(stub, &v1::Verifier::StubInterface::RemoveSite, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

int AddTarget(v1::Verifier::StubInterface& stub, absl::Duration timeout, const std::string& target,
              std::ostream& out, std::ostream& err) {
  const v1::AddTargetRequest request = TargetArgument(target);
  v1::AddTargetResponse response;
  if (const grpc::Status status =
          CallWithDeadline(stub, &v1::Verifier::StubInterface::AddTarget, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

int ImportTargets(v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& path, std::ostream& out, std::ostream& err) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    err << "error: cannot read " << path << "\n";
    return kExitFailed;
  }
  std::stringstream contents;
  contents << file.rdbuf();
  std::vector<int> line_numbers;
  const std::vector<v1::AddTargetRequest> entries = ParseTargetFile(contents.str(), &line_numbers);
  if (entries.empty()) {
    err << "error: " << path << " lists no targets\n";
    return kExitFailed;
  }
  v1::ImportTargetsResponse total;
  for (size_t start = 0; start < entries.size(); start += kImportBatchSize) {
    const size_t end = std::min(entries.size(), start + kImportBatchSize);
    v1::ImportTargetsRequest request;
    for (size_t i = start; i < end; ++i) {
      *request.add_targets() = entries[i];
    }
    v1::ImportTargetsResponse response;
    // A batch of a thousand rows takes longer than one call: allow a second per hundred.
    const absl::Duration batch_timeout =
        std::max(timeout, absl::Seconds(static_cast<double>(end - start) / 100));
    if (const grpc::Status status = CallWithDeadline(stub, &v1::Verifier::StubInterface::ImportTargets,
                                         batch_timeout, request, &response);
        !status.ok()) {
      // The verifier names the first bad entry of the batch ("target N (...): ..."): say which
      // line of the file that is.
      // error_message() returns a copy: keep it alive while `message` views it.
      const std::string error_message = status.error_message();
      absl::string_view message = error_message;
      size_t index = 0;
      if (absl::ConsumePrefix(&message, "target ")) {
        const absl::string_view digits = message.substr(0, message.find(' '));
        if (absl::SimpleAtoi(digits, &index) && start + index < end) {
          err << path << ":" << line_numbers[start + index] << ": ";
        }
      }
      if (start > 0) {
        err << "(entries before line " << line_numbers[start] << " were imported: " << total.added()
            << " added, " << total.already_present() << " already present) ";
      }
      return ReportRpcError(status, err);
    }
    total.set_added(total.added() + response.added());
    total.set_already_present(total.already_present() + response.already_present());
  }
  return PrintJson(total, out, err);
}

int ListTargets(v1::Verifier::StubInterface& stub, absl::Duration timeout,
                const std::string& domain, std::ostream& out, std::ostream& err) {
  v1::ListTargetsResponse all;
  v1::ListTargetsRequest request;
  request.set_domain(domain);
  request.set_page_size(1000);
  do {
    v1::ListTargetsResponse page;
    if (const grpc::Status status =
            CallWithDeadline(stub, &v1::Verifier::StubInterface::ListTargets, timeout, request, &page);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    all.mutable_targets()->MergeFrom(page.targets());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return PrintJson(all, out, err);
}

int RemoveTarget(v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 const std::string& target, std::ostream& out, std::ostream& err) {
  const v1::AddTargetRequest rule = TargetArgument(target);
  v1::RemoveTargetRequest request;
  request.set_url(rule.url());
  request.set_kind(rule.kind());
  v1::RemoveTargetResponse response;
  if (const grpc::Status status =
          CallWithDeadline(stub, &v1::Verifier::StubInterface::RemoveTarget, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

}  // namespace portcullis::cli
