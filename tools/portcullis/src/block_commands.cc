#include "tools/portcullis/src/block_commands.h"

#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;

// Pages are fetched until the last; a guard against a server that never ends.
constexpr int kMaxPages = 10000;

int UsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << BlockUsage();
  return kExitUsage;
}

std::string SiteOfScope(const std::string& scope) { return scope == "global" ? "" : scope; }

}  // namespace

std::string BlockUsage() {
  return "  block add SCOPE domain|prefix VALUE  block a mention source: SCOPE is 'global' or a\n"
         "                                 served site; a domain blocks its subdomains too\n"
         "                                 (evil.example blocks a.evil.example, not\n"
         "                                 notevil.example), a prefix is a source URL prefix;\n"
         "                                 blocked sources get 202 and are stored FAILED blocked\n"
         "  block list SCOPE               list the entries of 'global' or of a site\n"
         "  block remove SCOPE domain|prefix VALUE  remove an entry\n";
}

int RunBlockCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (args.size() < 2) {
    return UsageError("missing block command", err);
  }
  const std::string& verb = args[1];
  if (verb != "add" && verb != "list" && verb != "remove") {
    return UsageError("unknown block command '" + verb + "'", err);
  }
  const size_t expected = verb == "list" ? 3 : 5;
  if (args.size() != expected) {
    return UsageError("wrong number of arguments for 'block " + verb + "'", err);
  }
  if (args[2].empty()) {
    return UsageError("the scope is 'global' or a site's domain", err);
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  const std::string site = SiteOfScope(args[2]);
  if (verb == "list") {
    v1::ListBlocksResponse all;
    v1::ListBlocksRequest request;
    request.set_site(site);
    request.set_page_size(1000);
    for (int page = 0; page < kMaxPages; ++page) {
      v1::ListBlocksResponse response;
      if (const grpc::Status status = CallWithDeadline(
              *stub, &v1::Verifier::StubInterface::ListBlocks, options.timeout, request, &response);
          !status.ok()) {
        return ReportRpcError(status, err);
      }
      for (const v1::SourceBlock& block : response.blocks()) {
        *all.add_blocks() = block;
      }
      if (response.next_page_token().empty()) {
        break;
      }
      request.set_page_token(response.next_page_token());
    }
    return PrintJson(all, out, err);
  }
  v1::SourceBlock block;
  block.set_site(site);
  if (args[3] == "domain") {
    block.set_kind(v1::BLOCK_KIND_DOMAIN);
  } else if (args[3] == "prefix") {
    block.set_kind(v1::BLOCK_KIND_PREFIX);
  } else {
    return UsageError("the kind is 'domain' or 'prefix', not '" + args[3] + "'", err);
  }
  block.set_value(args[4]);
  if (verb == "add") {
    v1::AddBlockRequest request;
    *request.mutable_block() = block;
    v1::AddBlockResponse response;
    if (const grpc::Status status = CallWithDeadline(
            *stub, &v1::Verifier::StubInterface::AddBlock, options.timeout, request, &response);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    return PrintJson(response, out, err);
  }
  v1::RemoveBlockRequest request;
  *request.mutable_block() = block;
  v1::RemoveBlockResponse response;
  if (const grpc::Status status = CallWithDeadline(
          *stub, &v1::Verifier::StubInterface::RemoveBlock, options.timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

}  // namespace portcullis::cli
