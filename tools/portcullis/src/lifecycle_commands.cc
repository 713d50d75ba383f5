#include "tools/portcullis/src/lifecycle_commands.h"

#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;

int LifecycleUsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << LifecycleUsage();
  return kExitUsage;
}

}  // namespace

std::string LifecycleUsage() {
  return "  erase --author-url URL | --source-host HOST | --mention ID [--dry-run]\n"
         "                                 erase a person's mentions (content, author, jobs) and\n"
         "                                 keep salted-hash tombstones: a re-send of an erased\n"
         "                                 source gets 202 and is stored FAILED erased, "
         "unfetched;\n"
         "                                 --dry-run prints what would go\n"
         "  erase --undo --author-url URL | --source-host HOST | --mention ID\n"
         "                                 remove that erasure's tombstones (normal handling "
         "again)\n";
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
