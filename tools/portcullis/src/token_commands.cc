#include "tools/portcullis/src/token_commands.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tools/portcullis/src/rpc_output.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/intake/target_rules.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;
namespace auth = portcullis::verifier::auth;

constexpr size_t kMaxNameBytes = 128;  // As the verifier's CreateToken.
constexpr char kDefaultName[] = "cli";

int UsageError(const std::string& why, std::ostream& err) {
  err << "error: " << why << "\n" << TokenUsage();
  return kExitUsage;
}

// The --site values, each possibly comma separated, without empties.
std::vector<std::string> SplitSites(const std::vector<std::string>& sites) {
  std::vector<std::string> split;
  for (const std::string& value : sites) {
    for (absl::string_view site : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      split.emplace_back(absl::StripAsciiWhitespace(site));
    }
  }
  return split;
}

}  // namespace

std::string TokenUsage() {
  return "  token create --scopes S[,S] [--site DOMAIN]... [--name N]  make an API token (admin):\n"
         "                                 scopes submit, read, fetch, admin; --site binds it to\n"
         "                                 sites; prints the token alone on stdout (shown once)\n"
         "                                 and its id on stderr\n"
         "  token list                     list API tokens (never the tokens themselves)\n"
         "  token revoke ID                revoke a token; refused everywhere within the\n"
         "                                 verifier's --token_refresh_interval\n"
         "  token new --name N --scopes S[,S] [--site DOMAIN]...  offline, for bootstrap: prints\n"
         "                                 a new token on stdout and its line for the verifier's\n"
         "                                 --tokens_file (hash only) on stderr\n";
}

absl::StatusOr<std::string> StaticTokenLine(const std::string& token, const std::string& name,
                                            const std::string& scopes,
                                            const std::vector<std::string>& sites) {
  if (name.empty() || name.size() > kMaxNameBytes ||
      std::any_of(name.begin(), name.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte <= 0x20 || byte == 0x7f;
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--name: '", name, "' must be 1 to ", kMaxNameBytes, " bytes without spaces"));
  }
  absl::StatusOr<auth::ScopeSet> parsed_scopes = auth::ParseScopes(scopes);
  if (!parsed_scopes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--scopes: ", parsed_scopes.status().message()));
  }
  std::vector<std::string> domains;
  for (const std::string& site : SplitSites(sites)) {
    absl::StatusOr<std::string> domain = verifier::intake::ParseSiteDomain(site);
    if (!domain.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--site: '", site, "': ", domain.status().message()));
    }
    domains.push_back(*std::move(domain));
  }
  std::string line = absl::StrCat(auth::HashToken(token), " ", name, " ",
                                  auth::FormatScopes(*parsed_scopes));
  if (!domains.empty()) {
    absl::StrAppend(&line, " ", absl::StrJoin(domains, ","));
  }
  return line;
}

int RunTokenCommand(const std::vector<std::string>& args, const CliOptions& options,
                    std::ostream& out, std::ostream& err) {
  const std::string verb = args.size() > 1 ? args[1] : "";
  if (verb != "create" && verb != "list" && verb != "revoke" && verb != "new") {
    return UsageError(verb.empty() ? "missing token command"
                                   : "unknown token command '" + verb + "'",
                      err);
  }
  const size_t expected = verb == "revoke" ? 3 : 2;
  if (args.size() != expected) {
    return UsageError("wrong number of arguments for 'token " + verb + "'", err);
  }
  if ((verb == "create" || verb == "new") && options.token_scopes.empty()) {
    return UsageError("'token " + verb + "' needs --scopes (e.g. --scopes=submit,read)", err);
  }

  if (verb == "new") {
    if (options.token_name.empty()) {
      return UsageError("'token new' needs --name", err);
    }
    const std::string token = auth::GenerateToken();
    absl::StatusOr<std::string> line =
        StaticTokenLine(token, options.token_name, options.token_scopes, options.token_sites);
    if (!line.ok()) {
      return UsageError(std::string(line.status().message()), err);
    }
    out << token << "\n";
    err << *line << "\n";
    return kExitOk;
  }

  auto channel = DialVerifier(options, err);
  if (channel == nullptr) {
    return kExitUsage;
  }
  auto stub = v1::Verifier::NewStub(channel);
  if (verb == "list") {
    v1::ListTokensResponse response;
    if (const grpc::Status status =
            CallWithDeadline(*stub, &v1::Verifier::StubInterface::ListTokens, options.timeout,
                             v1::ListTokensRequest(), &response);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    return PrintJson(response, out, err);
  }
  if (verb == "revoke") {
    v1::RevokeTokenRequest request;
    request.set_id(args[2]);
    v1::RevokeTokenResponse response;
    if (const grpc::Status status = CallWithDeadline(
            *stub, &v1::Verifier::StubInterface::RevokeToken, options.timeout, request, &response);
        !status.ok()) {
      return ReportRpcError(status, err);
    }
    return PrintJson(response, out, err);
  }
  v1::CreateTokenRequest request;
  request.set_name(options.token_name.empty() ? kDefaultName : options.token_name);
  for (absl::string_view scope : absl::StrSplit(options.token_scopes, ',', absl::SkipWhitespace())) {
    request.add_scopes(std::string(absl::StripAsciiWhitespace(scope)));
  }
  for (std::string& site : SplitSites(options.token_sites)) {
    request.add_sites(std::move(site));
  }
  v1::CreateTokenResponse response;
  if (const grpc::Status status = CallWithDeadline(
          *stub, &v1::Verifier::StubInterface::CreateToken, options.timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  out << response.token() << "\n";
  const v1::ApiToken& created = response.api_token();
  err << "token id " << created.id() << " (name " << created.name() << ", scopes "
      << absl::StrJoin(created.scopes(), ",") << ", sites "
      << (created.sites().empty() ? std::string("all") : absl::StrJoin(created.sites(), ","))
      << "); the token above is shown only once\n";
  return kExitOk;
}

}  // namespace portcullis::cli
