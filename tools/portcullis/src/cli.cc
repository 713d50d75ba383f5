#include "tools/portcullis/src/cli.h"

#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "common/grpc/authorized_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/block_commands.h"
#include "tools/portcullis/src/delivery_commands.h"
#include "tools/portcullis/src/mention_transfer_commands.h"
#include "tools/portcullis/src/moderation_commands.h"
#include "tools/portcullis/src/lifecycle_commands.h"
#include "tools/portcullis/src/authorship_conformance.h"
#include "tools/portcullis/src/ingest_tool_commands.h"
#include "tools/portcullis/src/links_conformance.h"
#include "tools/portcullis/src/mention_commands.h"
#include "tools/portcullis/src/mf2_commands.h"
#include "tools/portcullis/src/c2pa_commands.h"
#include "tools/portcullis/src/page_origin.h"
#include "tools/portcullis/src/ssrf_conformance.h"
#include "tools/portcullis/src/site_commands.h"
#include "tools/portcullis/src/token_commands.h"
#include "tools/portcullis/src/url_commands.h"
#include "tools/portcullis/src/url_conformance.h"

namespace portcullis::cli {

std::string Usage() {
  return "usage: portcullis [--verifier=HOST:PORT] [--timeout=5s] COMMAND\n"
         "  mention submit SOURCE TARGET   submit a webmention; prints the decision as JSON\n"
         "  mention get ID                 show one mention as JSON\n"
         "  mention list --target URL | --site DOMAIN [--state S] [--type T] [--page-size N]\n"
         "               [--page-token T]  one page of mentions, newest change first, as JSON\n"
         "  mention verify SOURCE TARGET   verify the pair now (same pipeline as the queue);\n"
         "                                 prints the result as JSON; exit 0 only if VERIFIED\n"
         "  demo serve HOST:PORT PATH=FILE...  serve FILEs as HTML pages on a loopback address\n"
         "                                 (the sample source of scripts/up --demo); until Ctrl-C\n"
         "  site add DOMAIN                serve a domain (idempotent)\n"
         "  site list                      list the served domains\n"
         "  site remove DOMAIN             stop serving a domain; removes its targets\n"
         "  target add URL                 register a target; URL* registers everything under "
         "URL\n"
         "                                 (e.g. 'https://blog.example/posts/*')\n"
         "  target import FILE             register the targets of FILE, one URL (or URL*) per "
         "line;\n"
         "                                 blank lines and #comments skipped\n"
         "  target list [DOMAIN]           list targets, of one site or of all\n"
         "  target remove URL              remove a target (URL* for a prefix rule)\n"
         "  url parse URL [BASE]           parse an http(s) URL the WHATWG way; prints href, "
         "origin\n"
         "                                 and the components as JSON\n"
         "  url check URL                  ask the verifier whether URL may be fetched (egress\n"
         "                                 policy, DNS); prints the answer as JSON\n"
         "  url fetch URL [--max_body_bytes=N]  fetch URL through the verifier's SSRF-guarded\n"
         "                                 fetcher; prints outcome, headers and body (base64)\n"
         "  conformance url FILE           run the URL parser on WHATWG urltestdata.json or\n"
         "                                 toascii.json; prints failures and\n"
         "                                 'N passed, M failed, K skipped'; exit 0 only if none "
         "failed\n"
         "  conformance url-if-present FILE  the same, but a missing FILE exits 77 (skipped) "
         "unless\n"
         "                                 CI=true (for ctest)\n"
         "  conformance ssrf FILE          run SSRF vectors (vectors.json format) through the "
         "fetch\n"
         "                                 path with stubbed DNS; prints failures, one line per\n"
         "                                 kind and 'N passed, M failed'; exit 0 only if none "
         "failed\n"
         "  conformance ssrf-if-present FILE  the same; a missing FILE exits 77 unless CI=true\n"
         "  conformance links FIXTURES EXPECTED  does each source fixture link to its target?\n"
         "                                 (expected.json key xray_target_link over raw-HTTP\n"
         "                                 fixtures); prints failures and 'N passed, M failed'\n"
         "  conformance links-if-present FIXTURES EXPECTED  the same; missing data exits 77\n"
         "                                 unless CI=true\n"
         "  conformance authorship FIXTURES EXPECTED KEY  the authorship algorithm over the\n"
         "                                 cases of EXPECTED[KEY] (e.g. mf2util) with pages and\n"
         "                                 author pages read from FIXTURES; prints failures and\n"
         "                                 'N passed, M failed'\n"
         "  conformance authorship-if-present FIXTURES EXPECTED KEY  the same; missing data\n"
         "                                 exits 77 unless CI=true\n"
         "  mf2 [--base-url URL] FILE      parse FILE for microformats2 (base URL default\n"
         "                                 http://example.com/); prints the JSON\n"
         "  conformance mf2 [--base-url URL] DIR  run every NAME.html/NAME.json pair under DIR;\n"
         "                                 prints differences and 'N passed, M failed'\n"
         "  conformance mf2-if-present DIR  the same; a missing DIR exits 77 unless CI=true\n"
         "  conformance mf2-report[-if-present] [--base-url URL] DIR  the same, but exits 0 once\n"
         "                                 every case ran, however many failed (a report); no\n"
         "                                 case, or a crash, is still a failure\n" +
         IngestUsage() + BlockUsage() + ModerationUsage() + MentionTransferUsage() +
         TokenUsage() + LifecycleUsage() + C2paUsage() + DeliveryUsage() +
         "The verifier defaults to $PORTCULLIS_VERIFIER, else 127.0.0.1:50051. Every call to it\n"
         "carries an API token: --token_file=PATH, else $PORTCULLIS_TOKEN, else the file named by\n"
         "$PORTCULLIS_TOKEN_FILE (scripts/up prints the export line).\n";
}

absl::StatusOr<std::string> ResolveToken(const std::string& flag_token_file,
                                         const std::string& env_token,
                                         const std::string& env_token_file) {
  if (!flag_token_file.empty()) {
    return grpc_client::ReadTokenFile(flag_token_file);
  }
  const absl::string_view from_env = absl::StripAsciiWhitespace(env_token);
  if (!from_env.empty()) {
    return std::string(from_env);
  }
  if (!env_token_file.empty()) {
    return grpc_client::ReadTokenFile(env_token_file);
  }
  return std::string();
}

std::shared_ptr<grpc::Channel> DialVerifier(const CliOptions& options, std::ostream& err) {
  if (!options.token_error.empty()) {
    err << "error: " << options.token_error << "\n";
    return nullptr;
  }
  if (options.token.empty()) {
    err << "error: no API token for the verifier: set PORTCULLIS_TOKEN or PORTCULLIS_TOKEN_FILE, "
           "or pass --token_file=PATH (scripts/up prints the export line; an admin makes tokens "
           "with `portcullis token create`)\n";
    return nullptr;
  }
  grpc::ChannelArguments args;
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  return grpc_client::CreateAuthorizedChannel(options.verifier_target, options.channel_credentials,
                                              std::move(args), options.token);
}

namespace {

// `portcullis site ...` and `portcullis target ...`.
template <typename UsageError>
int RunSiteCommand(const std::vector<std::string>& args, const CliOptions& options,
                   std::ostream& out, std::ostream& err, const UsageError& usage_error) {
  const std::string& noun = args[0];
  if (args.size() < 2) {
    return usage_error("missing " + noun + " command");
  }
  const std::string& verb = args[1];
  const std::string command = noun + " " + verb;
  size_t min_args = 0;
  size_t max_args = 0;
  if (command == "site add" || command == "site remove" || command == "target add" ||
      command == "target import" || command == "target remove") {
    min_args = max_args = 3;
  } else if (command == "site list") {
    min_args = max_args = 2;
  } else if (command == "target list") {
    min_args = 2;
    max_args = 3;
  } else {
    return usage_error("unknown " + noun + " command '" + verb + "'");
  }
  if (args.size() < min_args || args.size() > max_args) {
    return usage_error("wrong number of arguments for '" + command + "'");
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = verifier::v1::Verifier::NewStub(channel);
  const std::string argument = args.size() > 2 ? args[2] : "";
  if (command == "site add") {
    return AddSite(*stub, options.timeout, argument, out, err);
  }
  if (command == "site list") {
    return ListSites(*stub, options.timeout, out, err);
  }
  if (command == "site remove") {
    return RemoveSite(*stub, options.timeout, argument, out, err);
  }
  if (command == "target add") {
    return AddTarget(*stub, options.timeout, argument, out, err);
  }
  if (command == "target import") {
    return ImportTargets(*stub, options.timeout, argument, out, err);
  }
  if (command == "target list") {
    return ListTargets(*stub, options.timeout, argument, out, err);
  }
  return RemoveTarget(*stub, options.timeout, argument, out, err);
}

}  // namespace

int Run(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
        std::ostream& err) {
  const auto usage_error = [&](const std::string& why) {
    err << "error: " << why << "\n" << Usage();
    return kExitUsage;
  };
  if (args.empty()) {
    return usage_error("no command");
  }
  if (const std::optional<int> ingest = RunIngestCommand(args, options, out, err)) {
    return *ingest;
  }
  if (const std::optional<int> c2pa = RunC2paCommand(args, options, out, err)) {
    return *c2pa;
  }
  if (args[0] == "url" && args.size() >= 2 && (args[1] == "check" || args[1] == "fetch")) {
    if (args.size() != 3) {
      return usage_error("wrong number of arguments for 'url " + args[1] + "'");
    }
    auto channel = DialVerifier(options, err);
    if (channel == nullptr) {
      return kExitUsage;
    }
    auto stub = verifier::v1::Verifier::NewStub(channel);
    if (args[1] == "check") {
      return CheckUrl(*stub, options.timeout, args[2], out, err);
    }
    return SafeFetch(*stub, options.timeout, args[2], options.max_body_bytes, out, err);
  }
  if (args[0] == "url") {
    if (args.size() < 2 || args[1] != "parse") {
      return usage_error(args.size() < 2 ? "missing url command"
                                         : "unknown url command '" + args[1] + "'");
    }
    if (args.size() != 3 && args.size() != 4) {
      return usage_error("wrong number of arguments for 'url parse'");
    }
    return PrintParsedUrl(args[2], args.size() == 4 ? std::optional(args[3]) : std::nullopt, out,
                          err);
  }
  if (args[0] == "mf2" ||
      (args[0] == "conformance" && args.size() >= 2 &&
       (args[1] == "mf2" || args[1] == "mf2-if-present" || args[1] == "mf2-report" ||
        args[1] == "mf2-report-if-present"))) {
    return RunMf2Command(args, options.base_url, out, err);
  }
  if (args[0] == "conformance" && args.size() >= 2 &&
      (args[1] == "links" || args[1] == "links-if-present")) {
    return RunLinksCommand(args, out, err);
  }
  if (args[0] == "conformance" && args.size() >= 2 &&
      (args[1] == "authorship" || args[1] == "authorship-if-present")) {
    return RunAuthorshipCommand(args, out, err);
  }
  if (args[0] == "conformance" && args.size() >= 2 &&
      (args[1] == "ssrf" || args[1] == "ssrf-if-present")) {
    if (args.size() != 3) {
      return usage_error("wrong number of arguments for 'conformance " + args[1] + "'");
    }
    const char* ci = std::getenv("CI");
    return RunSsrfConformanceFile(
        args[2], args[1] == "ssrf" ? MissingData::kFail : MissingData::kSkipUnlessCi,
        ci != nullptr && std::string(ci) == "true", out, err);
  }
  if (args[0] == "conformance") {
    if (args.size() < 2 || (args[1] != "url" && args[1] != "url-if-present")) {
      return usage_error(args.size() < 2 ? "missing conformance suite"
                                         : "unknown conformance suite '" + args[1] + "'");
    }
    if (args.size() != 3) {
      return usage_error("wrong number of arguments for 'conformance " + args[1] + "'");
    }
    const char* ci = std::getenv("CI");
    return RunUrlConformanceFile(args[2],
                                 args[1] == "url" ? MissingData::kFail : MissingData::kSkipUnlessCi,
                                 ci != nullptr && std::string(ci) == "true", out, err);
  }
  if (const std::optional<int> moderation = RunModerationCommand(args, options, out, err)) {
    return *moderation;
  }
  if (args[0] == "site" || args[0] == "target") {
    return RunSiteCommand(args, options, out, err, usage_error);
  }
  if (args[0] == "block") {
    return RunBlockCommand(args, options, out, err);
  }
  if (args[0] == "export") {
    return RunExportCommand(args, options, out, err);
  }
  if (args[0] == "import") {
    return RunImportCommand(args, options, out, err);
  }
  if (args[0] == "token") {
    return RunTokenCommand(args, options, out, err);
  }
  if (const std::optional<int> delivery = RunDeliveryCommand(args, options, out, err)) {
    return *delivery;
  }
  if (args[0] == "erase") {
    return RunEraseCommand(args, options, out, err);
  }
  if (args[0] == "drops") {
    return RunDropsCommand(args, options, out, err);
  }
  if (args[0] == "demo") {
    if (args.size() < 2 || args[1] != "serve") {
      return usage_error("unknown demo command");
    }
    return RunDemoServe(args, out, err);
  }
  if (args[0] != "mention") {
    return usage_error("unknown command '" + args[0] + "'");
  }
  if (args.size() < 2) {
    return usage_error("missing mention command");
  }
  const std::string& verb = args[1];
  if (verb == "verify") {
    if (args.size() != 4) {
      return usage_error("wrong number of arguments for 'mention verify'");
    }
    auto channel = DialVerifier(options, err);
    if (channel == nullptr) {
      return kExitUsage;
    }
    auto stub = verifier::v1::Verifier::NewStub(channel);
    return VerifyMention(*stub, options.timeout, args[2], args[3], out, err);
  }
  if (verb == "list") {
    if (args.size() != 2) {
      return usage_error("'mention list' takes options only (--target URL or --site DOMAIN)");
    }
    auto channel = DialVerifier(options, err);
    if (channel == nullptr) {
      return kExitUsage;
    }
    auto stub = verifier::v1::Verifier::NewStub(channel);
    return ListMentions(*stub, options.timeout,
                        {.target = options.list_target,
                         .site = options.list_site,
                         .state = options.list_state,
                         .type = options.list_type,
                         .page_size = options.page_size,
                         .page_token = options.page_token},
                        out, err);
  }
  const size_t expected = verb == "submit" ? 4 : verb == "get" ? 3 : 0;
  if (expected == 0) {
    return usage_error("unknown mention command '" + verb + "'");
  }
  if (args.size() != expected) {
    return usage_error("wrong number of arguments for 'mention " + verb + "'");
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = verifier::v1::Verifier::NewStub(channel);
  if (verb == "submit") {
    return SubmitMention(*stub, options.timeout, args[2], args[3], out, err);
  }
  return GetMention(*stub, options.timeout, args[2], out, err);
}

}  // namespace portcullis::cli
