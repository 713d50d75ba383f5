#include "tools/portcullis/src/moderation_commands.h"

#include "absl/strings/ascii.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;

// Pages are fetched until the last; a guard against a server that never ends.
constexpr int kMaxReviewPages = 10000;

int ModerationUsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\nusage:\n" << ModerationUsage();
  return kExitUsage;
}

std::optional<v1::Moderation> ModerationArgument(const std::string& text) {
  if (text == "off") return v1::MODERATION_OFF;
  if (text == "first-time-authors") return v1::MODERATION_FIRST_TIME_AUTHORS;
  if (text == "all") return v1::MODERATION_ALL;
  return std::nullopt;
}

std::optional<v1::ReviewState> ReviewStateArgument(const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower.empty() || lower == "unreviewed") return v1::REVIEW_STATE_UNREVIEWED;
  if (lower == "approved") return v1::REVIEW_STATE_APPROVED;
  if (lower == "rejected") return v1::REVIEW_STATE_REJECTED;
  if (lower == "hidden") return v1::REVIEW_STATE_HIDDEN;
  return std::nullopt;
}

std::optional<v1::ReviewAction> ReviewActionArgument(const std::string& verb) {
  if (verb == "approve") return v1::REVIEW_ACTION_APPROVE;
  if (verb == "reject") return v1::REVIEW_ACTION_REJECT;
  if (verb == "hide") return v1::REVIEW_ACTION_HIDE;
  if (verb == "unhide") return v1::REVIEW_ACTION_UNHIDE;
  return std::nullopt;
}

// Calls `method` with the CLI's deadline and prints the answer; the exit code of cli.h.
template <typename Request, typename Response, typename Method>
int CallAndPrint(v1::Verifier::StubInterface& stub, Method method, const CliOptions& options,
                 const Request& request, std::ostream& out, std::ostream& err) {
  Response response;
  if (const grpc::Status status =
          CallWithDeadline(stub, method, options.timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

int RunReview(const std::vector<std::string>& args, const CliOptions& options,
              v1::Verifier::StubInterface& stub, std::ostream& out, std::ostream& err) {
  const std::string& verb = args[1];
  if (verb == "list") {
    if (args.size() != 2) {
      return ModerationUsageError("'review list' takes options only (--site, --state)", err);
    }
    if (options.list_site.empty()) {
      return ModerationUsageError("'review list' needs --site DOMAIN", err);
    }
    const std::optional<v1::ReviewState> state = ReviewStateArgument(options.list_state);
    if (!state) {
      return ModerationUsageError(
          "--state is unreviewed, approved, rejected or hidden, not '" + options.list_state + "'",
          err);
    }
    v1::ListReviewQueueRequest request;
    request.set_site(options.list_site);
    request.set_state(*state);
    request.set_page_size(options.page_size > 0 ? options.page_size : 1000);
    v1::ListReviewQueueResponse all;
    for (int page = 0; page < kMaxReviewPages; ++page) {
      v1::ListReviewQueueResponse response;
      if (const grpc::Status status =
              CallWithDeadline(stub, &v1::Verifier::StubInterface::ListReviewQueue,
                               options.timeout, request, &response);
          !status.ok()) {
        return ReportRpcError(status, err);
      }
      for (const v1::Mention& mention : response.mentions()) {
        *all.add_mentions() = mention;
      }
      if (response.next_page_token().empty()) {
        break;
      }
      request.set_page_token(response.next_page_token());
    }
    return PrintJson(all, out, err);
  }
  const std::optional<v1::ReviewAction> action = ReviewActionArgument(verb);
  if (!action) {
    return ModerationUsageError("unknown review command '" + verb + "'", err);
  }
  if (args.size() != 3) {
    return ModerationUsageError("wrong number of arguments for 'review " + verb + "'", err);
  }
  v1::ReviewMentionRequest request;
  request.set_mention_id(args[2]);
  request.set_action(*action);
  request.set_note(options.review_note);
  return CallAndPrint<v1::ReviewMentionRequest, v1::ReviewMentionResponse>(
      stub, &v1::Verifier::StubInterface::ReviewMention, options, request, out, err);
}

int RunRule(const std::vector<std::string>& args, const CliOptions& options,
            v1::Verifier::StubInterface& stub, std::ostream& out, std::ostream& err) {
  const std::string& verb = args[1];
  if (verb == "remove") {
    if (args.size() != 3) {
      return ModerationUsageError("wrong number of arguments for 'rule remove'", err);
    }
    v1::RemoveApprovalRuleRequest request;
    request.set_rule_id(args[2]);
    return CallAndPrint<v1::RemoveApprovalRuleRequest, v1::RemoveApprovalRuleResponse>(
        stub, &v1::Verifier::StubInterface::RemoveApprovalRule, options, request, out, err);
  }
  if (verb != "add" && verb != "list") {
    return ModerationUsageError("unknown rule command '" + verb + "'", err);
  }
  if (args.size() != 2) {
    return ModerationUsageError("'rule " + verb + "' takes options only", err);
  }
  if (options.list_site.empty()) {
    return ModerationUsageError("'rule " + verb + "' needs --site DOMAIN", err);
  }
  if (verb == "list") {
    v1::ListApprovalRulesRequest request;
    request.set_site(options.list_site);
    return CallAndPrint<v1::ListApprovalRulesRequest, v1::ListApprovalRulesResponse>(
        stub, &v1::Verifier::StubInterface::ListApprovalRules, options, request, out, err);
  }
  if (options.rule_author_url.empty() == options.rule_source_prefix.empty()) {
    return ModerationUsageError("'rule add' needs exactly one of --author-url and --source-prefix",
                                err);
  }
  v1::AddApprovalRuleRequest request;
  request.set_dry_run(options.dry_run);
  v1::ApprovalRule& rule = *request.mutable_rule();
  rule.set_site(options.list_site);
  if (!options.rule_author_url.empty()) {
    rule.set_kind(v1::APPROVAL_RULE_KIND_AUTHOR_URL);
    rule.set_value(options.rule_author_url);
  } else {
    rule.set_kind(v1::APPROVAL_RULE_KIND_SOURCE_PREFIX);
    rule.set_value(options.rule_source_prefix);
  }
  return CallAndPrint<v1::AddApprovalRuleRequest, v1::AddApprovalRuleResponse>(
      stub, &v1::Verifier::StubInterface::AddApprovalRule, options, request, out, err);
}

}  // namespace

std::string ModerationUsage() {
  return "  site set DOMAIN [--moderation=off|first-time-authors|all] [--avatar-proxy=on|off]\n"
         "                                 which VERIFIED mentions the public sees: all (off,\n"
         "                                 the default), those of authors approved before, or\n"
         "                                 approved ones only; whether the public feeds show\n"
         "                                 author photos through the gateway's /avatar/ proxy\n"
         "                                 (off by default). Only what is given changes.\n"
         "  review list --site DOMAIN [--state=unreviewed|approved|rejected|hidden]\n"
         "                                 the review queue (default: unreviewed)\n"
         "  review approve|reject|hide|unhide ID [--note=TEXT]\n"
         "                                 review one mention; hide takes it down at once\n"
         "  rule add --site DOMAIN (--author-url URL | --source-prefix URL) [--dry-run]\n"
         "                                 auto-approve an author or a source prefix; prints\n"
         "                                 its reach (with --dry-run, only that)\n"
         "  rule list --site DOMAIN        the site's approval rules\n"
         "  rule remove ID                 remove a rule (hand approvals stay)\n";
}

std::optional<int> RunModerationCommand(const std::vector<std::string>& args,
                                        const CliOptions& options, std::ostream& out,
                                        std::ostream& err) {
  if (args.empty()) {
    return std::nullopt;
  }
  const bool site_set = args[0] == "site" && args.size() >= 2 && args[1] == "set";
  if (!site_set && args[0] != "review" && args[0] != "rule") {
    return std::nullopt;
  }
  if (args.size() < 2) {
    return ModerationUsageError("missing " + args[0] + " command", err);
  }
  std::optional<v1::Moderation> moderation;
  std::optional<bool> avatar_proxy;
  if (site_set) {
    if (args.size() != 3) {
      return ModerationUsageError("wrong number of arguments for 'site set'", err);
    }
    if (options.moderation.empty() && options.avatar_proxy.empty()) {
      return ModerationUsageError("'site set' needs --moderation or --avatar-proxy", err);
    }
    if (!options.moderation.empty()) {
      moderation = ModerationArgument(options.moderation);
      if (!moderation) {
        return ModerationUsageError(
            "--moderation is off, first-time-authors or all, not '" + options.moderation + "'",
            err);
      }
    }
    if (options.avatar_proxy == "on") {
      avatar_proxy = true;
    } else if (options.avatar_proxy == "off") {
      avatar_proxy = false;
    } else if (!options.avatar_proxy.empty()) {
      return ModerationUsageError("--avatar-proxy is on or off, not '" + options.avatar_proxy + "'",
                                  err);
    }
  }
  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  if (site_set) {
    v1::SetSiteSettingsRequest request;
    request.set_domain(args[2]);
    if (moderation) {
      request.set_moderation(*moderation);
    }
    if (avatar_proxy) {
      request.set_avatar_proxy(*avatar_proxy);
    }
    return CallAndPrint<v1::SetSiteSettingsRequest, v1::SetSiteSettingsResponse>(
        *stub, &v1::Verifier::StubInterface::SetSiteSettings, options, request, out, err);
  }
  if (args[0] == "review") {
    return RunReview(args, options, *stub, out, err);
  }
  return RunRule(args, options, *stub, out, err);
}

}  // namespace portcullis::cli
