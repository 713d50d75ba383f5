#include "ingest-gateway/src/status_page.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/status_page_css.h"  // Generated from status_page.css.

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

bool IsSet(const google::protobuf::Timestamp& timestamp) {
  return timestamp.seconds() != 0 || timestamp.nanos() != 0;
}

// A <time> element: the absolute UTC time, then how long ago it was.
std::string TimeHtml(const google::protobuf::Timestamp& timestamp, absl::Time now) {
  if (!IsSet(timestamp)) {
    return "";
  }
  const absl::Time time = absl::FromUnixSeconds(timestamp.seconds());
  return absl::StrCat(
      "<time datetime=\"", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone()),
      "\">", absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", time, absl::UTCTimeZone()),
      "</time> <span class=\"relative\">(", RelativeTime(time, now), ")</span>");
}

// `url` as a link when it is an http(s) URL (anything else, say javascript:, stays text).
std::string LinkHtml(absl::string_view url) {
  const std::string escaped = HtmlEscape(url);
  const std::string lower = absl::AsciiStrToLower(url.substr(0, 8));
  if (!absl::StartsWith(lower, "http://") && !absl::StartsWith(lower, "https://")) {
    return escaped;
  }
  return absl::StrCat("<a href=\"", escaped, "\" rel=\"nofollow noopener noreferrer\">", escaped,
                      "</a>");
}

struct ReasonAdvice {
  absl::string_view reason;
  absl::string_view summary;
  absl::string_view next_step;
};

// Every FAILED reason the verifier records: store::kReasonNoLink, store::kReasonSourceGone (also
// for a 410), "blocked" (the block list), "unreachable" (transient failures until the last
// attempt) and the fetcher's permanent FetchOutcomeName values. The README's table says the same.
constexpr ReasonAdvice kReasonAdvice[] = {
    {"no_link", "Your page does not link to the target.",
     "Add a link to the exact target address to your page (an <a href> in the page as served, "
     "not added by script), publish it, then send the webmention again."},
    {"source_gone", "Your page is gone (it answered 410 Gone), so the mention was withdrawn.",
     "If that was a mistake, restore the page and send the webmention again."},
    {"bad_url", "The source address, or an address it redirected to, is not a valid URL.",
     "Send the full address of your page, starting with https://."},
    {"bad_scheme", "The source, or an address it redirected to, is not an http or https address.",
     "Send the https:// (or http://) address of your page."},
    {"forbidden_url",
     "The source address, or an address it redirected to, is refused: it has a user name or "
     "password, a port other than 80 or 443, a special-use host name, or an IP address spelled "
     "in a way that different programs read differently.",
     "Send your page's plain public address, such as https://example.com/post."},
    {"forbidden_address",
     "Your page's host is on a private or reserved network address, which is never fetched.",
     "Publish the page on a public address and send that address."},
    {"dns_not_found", "Your page's host name does not exist in DNS.",
     "Check the source address for typos; the page must be reachable on the public internet."},
    {"too_many_redirects", "Your page redirected too many times.",
     "Send the final address of the page, or shorten the chain of redirects."},
    {"bad_redirect", "Your page answered with a redirect that has no Location.",
     "Fix the redirect on your server, or send the final address of the page."},
    {"too_large", "Your page is larger than the size that is fetched.",
     "Send the address of the post itself rather than an archive or a long index page."},
    {"unsupported_content_type",
     "Your page is not HTML (it must be text/html or application/xhtml+xml).",
     "Send the address of the HTML page that contains the link."},
    {"http_4xx", "Your page answered with an error (4xx) when it was fetched.",
     "Make sure the page is public (no login, no blocking of unknown clients), then send the "
     "webmention again."},
    {"tls_failed", "Your page's TLS certificate does not verify for its host name.",
     "Serve a valid certificate for the host name, with its full chain, then send the "
     "webmention again."},
    {"blocked", "The site does not take webmentions from this source.",
     "Nothing to do here: the site's owner blocked the source. Ask them if you think it is a "
     "mistake."},
    {"unreachable",
     "Your page could not be fetched, on every attempt (time-outs, refused connections, DNS "
     "that did not answer, 5xx or 429 answers).",
     "Check that the page loads from elsewhere on the internet, then send the webmention "
     "again."},
};

}  // namespace

StatusAdvice AdviceFor(verifier::v1::MentionState state, absl::string_view reason) {
  switch (state) {
    case verifier::v1::MENTION_STATE_PENDING:
      return {"Your webmention was received and is waiting to be checked.",
              "Reload this page in a minute: it changes when your page has been checked."};
    case verifier::v1::MENTION_STATE_VERIFIED:
      return {"Your page links to the target, so the mention is accepted.",
              "Nothing to do. If you change or delete your page, send the webmention again so "
              "the change is seen."};
    case verifier::v1::MENTION_STATE_FAILED:
      for (const ReasonAdvice& advice : kReasonAdvice) {
        if (advice.reason == reason) {
          return {std::string(advice.summary), std::string(advice.next_step)};
        }
      }
      return {"Your page could not be verified.",
              "Check that the page is public and links to the target, then send the webmention "
              "again."};
    default:
      return {"The state of this webmention is unknown.", "Send the webmention again."};
  }
}

std::string RelativeTime(absl::Time then, absl::Time now) {
  const absl::Duration ago = now - then;
  const auto plural = [](int64_t n, absl::string_view unit) {
    return absl::StrCat(n, " ", unit, n == 1 ? "" : "s", " ago");
  };
  if (ago < absl::Minutes(1)) {
    return "just now";  // Also a little in the future: clocks differ.
  }
  if (ago < absl::Hours(1)) {
    return plural(absl::ToInt64Minutes(ago), "minute");
  }
  if (ago < absl::Hours(48)) {
    return plural(absl::ToInt64Hours(ago), "hour");
  }
  return plural(absl::ToInt64Hours(ago) / 24, "day");
}

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

std::string RenderStatusHtml(const verifier::v1::Mention& mention, absl::Time now) {
  const std::string state = StateName(mention.state());
  std::string rows;
  const auto row_html = [&rows](absl::string_view name, absl::string_view html) {
    if (!html.empty()) {
      absl::StrAppend(&rows, "<tr><th>", name, "</th><td>", html, "</td></tr>\n");
    }
  };
  const auto row = [&row_html](absl::string_view name, absl::string_view value) {
    row_html(name, HtmlEscape(value));
  };
  row("Reason", mention.reason());
  row("Type", MentionTypeName(mention.type()));
  row("RSVP", mention.rsvp());
  row("Author", mention.author().name());
  if (!mention.author().url().empty()) {
    row_html("Author URL", LinkHtml(mention.author().url()));
  }
  if (!mention.source().empty()) {
    row_html("Source", LinkHtml(mention.source()));
  }
  if (!mention.target().empty()) {
    row_html("Target", LinkHtml(mention.target()));
  }
  row_html("Received", TimeHtml(mention.created_at(), now));
  row_html("Last change", TimeHtml(mention.updated_at(), now));
  row_html("Verified", TimeHtml(mention.verified_at(), now));
  row("Mention id", mention.mention_id());

  const StatusAdvice advice = AdviceFor(mention.state(), mention.reason());
  std::string advice_html =
      absl::StrCat("<p class=\"summary\">", HtmlEscape(advice.summary), "</p>\n");
  // The no_link diagnostic: the near misses, so a sender can see what to fix.
  if (mention.links_to_target_host_size() > 0) {
    absl::StrAppend(&advice_html, "<p>It links to these pages on that site — did you mean one of "
                                  "those?</p>\n<ul class=\"near-misses\">\n");
    for (const std::string& link : mention.links_to_target_host()) {
      absl::StrAppend(&advice_html, "<li>", LinkHtml(link), "</li>\n");
    }
    absl::StrAppend(&advice_html, "</ul>\n");
  }
  absl::StrAppend(&advice_html, "<p class=\"next\">", HtmlEscape(advice.next_step), "</p>\n");

  const std::string state_class = absl::AsciiStrToLower(state);
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
      "<meta name=\"robots\" content=\"noindex\">\n",
      "<meta name=\"referrer\" content=\"no-referrer\">\n", "<title>Webmention ",
      HtmlEscape(state), "</title>\n<link rel=\"stylesheet\" href=\"", kStatusStylesheetPath,
      "\">\n</head>\n<body>\n<main>\n<h1>Webmention <span class=\"state state-",
      HtmlEscape(state_class), "\">", HtmlEscape(state), "</span></h1>\n",
      "<section class=\"advice\">\n", advice_html, "</section>\n<table>\n", rows,
      "</table>\n</main>\n</body>\n</html>\n");
}

std::string RenderStatusHtml(const verifier::v1::Mention& mention) {
  return RenderStatusHtml(mention, absl::Now());
}

http::HttpResponse StatusHtmlResponse(const verifier::v1::Mention& mention) {
  http::HttpResponse response;
  response.headers.Set("Content-Type", "text/html; charset=utf-8");
  response.headers.Set("Content-Security-Policy", kStatusPageContentSecurityPolicy);
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("Referrer-Policy", "no-referrer");
  response.headers.Set("Vary", "Accept");
  response.headers.Set("Cache-Control", "no-store");
  response.body = RenderStatusHtml(mention);
  return response;
}

http::HttpResponse StatusStylesheetResponse() {
  http::HttpResponse response;
  response.headers.Set("Content-Type", "text/css; charset=utf-8");
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("Cache-Control", "public, max-age=604800");
  response.body = std::string(kStatusPageCss);
  return response;
}

}  // namespace portcullis::gateway
