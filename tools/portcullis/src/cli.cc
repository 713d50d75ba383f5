#include "tools/portcullis/src/cli.h"

#include <memory>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/mention_commands.h"

namespace portcullis::cli {

std::string Usage() {
  return "usage: portcullis [--verifier=HOST:PORT] [--timeout=5s] COMMAND\n"
         "  mention submit SOURCE TARGET   submit a webmention; prints the decision as JSON\n"
         "  mention get ID                 show one mention as JSON\n"
         "The verifier defaults to $PORTCULLIS_VERIFIER, else 127.0.0.1:50051.\n";
}

int Run(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
        std::ostream& err) {
  const auto usage_error = [&](const std::string& why) {
    err << "error: " << why << "\n" << Usage();
    return kExitUsage;
  };
  if (args.size() < 2 || args[0] != "mention") {
    return usage_error(args.empty() ? "no command" : "unknown command '" + args[0] + "'");
  }
  const std::string& verb = args[1];
  const size_t expected = verb == "submit" ? 4 : verb == "get" ? 3 : 0;
  if (expected == 0) {
    return usage_error("unknown mention command '" + verb + "'");
  }
  if (args.size() != expected) {
    return usage_error("wrong number of arguments for 'mention " + verb + "'");
  }
  auto channel =
      grpc::CreateChannel(options.verifier_target, grpc::InsecureChannelCredentials());
  auto stub = verifier::v1::Verifier::NewStub(channel);
  if (verb == "submit") {
    return SubmitMention(*stub, options.timeout, args[2], args[3], out, err);
  }
  return GetMention(*stub, options.timeout, args[2], out, err);
}

}  // namespace portcullis::cli
