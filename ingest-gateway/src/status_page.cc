#include "ingest-gateway/src/status_page.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace portcullis::gateway {
namespace {

// The q a header gives `type`/`subtype`: from the most specific matching range; -1 when no range
// matches.
double QualityOf(const std::vector<absl::string_view>& ranges, absl::string_view type,
                 absl::string_view subtype) {
  double best_q = -1;
  int best_specificity = -1;
  for (absl::string_view range : ranges) {
    std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
    const absl::string_view media = absl::StripAsciiWhitespace(parts[0]);
    const size_t slash = media.find('/');
    if (slash == absl::string_view::npos) {
      continue;
    }
    const absl::string_view range_type = media.substr(0, slash);
    const absl::string_view range_subtype = media.substr(slash + 1);
    int specificity = 0;
    if (range_type == "*" && range_subtype == "*") {
      specificity = 0;
    } else if (absl::EqualsIgnoreCase(range_type, type) && range_subtype == "*") {
      specificity = 1;
    } else if (absl::EqualsIgnoreCase(range_type, type) &&
               absl::EqualsIgnoreCase(range_subtype, subtype)) {
      specificity = 2;
    } else {
      continue;
    }
    double q = 1;
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::string_view parameter = absl::StripAsciiWhitespace(parts[i]);
      if (absl::ConsumePrefix(&parameter, "q=") || absl::ConsumePrefix(&parameter, "Q=")) {
        if (!absl::SimpleAtod(parameter, &q) || q < 0 || q > 1) {
          q = 0;  // A malformed weight accepts nothing rather than everything.
        }
      }
    }
    if (specificity > best_specificity) {
      best_specificity = specificity;
      best_q = q;
    }
  }
  return best_q;
}

std::string StateName(verifier::v1::MentionState state) {
  return std::string(absl::StripPrefix(verifier::v1::MentionState_Name(state), "MENTION_STATE_"));
}

std::string Time(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) {
    return "";
  }
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixSeconds(timestamp.seconds()),
                          absl::UTCTimeZone());
}

// What a state means to the sender.
absl::string_view Explanation(verifier::v1::MentionState state) {
  switch (state) {
    case verifier::v1::MENTION_STATE_PENDING:
      return "Received and waiting for verification.";
    case verifier::v1::MENTION_STATE_VERIFIED:
      return "Verified: the source links to the target.";
    case verifier::v1::MENTION_STATE_FAILED:
      return "Verification failed.";
    default:
      return "";
  }
}

}  // namespace

std::string MentionTypeName(verifier::v1::MentionType type) {
  if (type == verifier::v1::MENTION_TYPE_UNSPECIFIED) {
    return "";
  }
  return absl::AsciiStrToLower(
      absl::StripPrefix(verifier::v1::MentionType_Name(type), "MENTION_TYPE_"));
}

StatusFormat NegotiateStatusFormat(std::optional<absl::string_view> accept) {
  if (!accept || absl::StripAsciiWhitespace(*accept).empty()) {
    return StatusFormat::kJson;
  }
  const std::vector<absl::string_view> ranges = absl::StrSplit(*accept, ',');
  const double json = QualityOf(ranges, "application", "json");
  const double html = QualityOf(ranges, "text", "html");
  if (json <= 0 && html <= 0) {
    return StatusFormat::kNotAcceptable;
  }
  return html > json ? StatusFormat::kHtml : StatusFormat::kJson;
}

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderStatusHtml(const verifier::v1::Mention& mention) {
  const std::string state = StateName(mention.state());
  std::string rows;
  const auto row = [&rows](absl::string_view name, absl::string_view value) {
    if (!value.empty()) {
      absl::StrAppend(&rows, "<tr><th>", name, "</th><td>", HtmlEscape(value), "</td></tr>\n");
    }
  };
  row("State", state);
  row("Reason", mention.reason());
  row("Type", MentionTypeName(mention.type()));
  row("RSVP", mention.rsvp());
  row("Author", mention.author().name());
  row("Author URL", mention.author().url());
  row("Source", mention.source());
  row("Target", mention.target());
  row("Received", Time(mention.created_at()));
  row("Last change", Time(mention.updated_at()));
  row("Verified", Time(mention.verified_at()));
  row("Mention id", mention.mention_id());
  // The no_link diagnostic: the near misses, so a sender can see what to fix.
  std::string diagnostic;
  if (mention.links_to_target_host_size() > 0) {
    diagnostic = "<h2>Links to the target&#39;s site found in the source</h2>\n<ul>\n";
    for (const std::string& link : mention.links_to_target_host()) {
      absl::StrAppend(&diagnostic, "<li>", HtmlEscape(link), "</li>\n");
    }
    absl::StrAppend(&diagnostic, "</ul>\n");
  }
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
                      "<meta name=\"robots\" content=\"noindex\">\n", "<title>Webmention ",
                      HtmlEscape(state), "</title>\n</head>\n<body>\n", "<h1>Webmention ",
                      HtmlEscape(state), "</h1>\n<p>", HtmlEscape(Explanation(mention.state())),
                      "</p>\n<table>\n", rows, "</table>\n", diagnostic,
                      "</body>\n</html>\n");
}

}  // namespace portcullis::gateway
