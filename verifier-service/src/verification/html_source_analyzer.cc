#include "verifier-service/src/verification/html_source_analyzer.h"

#include <utility>

#include "boost/json/object.hpp"
#include "common/logging/log.h"
#include "verifier-service/src/html/authorship.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::verification {
namespace {

void SetAuthor(const html::Author& author, queue::MentionContent& content) {
  content.author_name = author.name;
  content.author_url = author.url;
  content.author_photo = author.photo;
  content.author_note = author.note;
}

}  // namespace

SourceAnalysis HtmlSourceAnalyzer::Analyze(absl::string_view body, const url::Url& final_url,
                                           absl::string_view target) const {
  SourceAnalysis analysis;
  absl::StatusOr<url::Url> target_url = url::ParseUrl(target);
  if (!target_url.ok()) {
    return analysis;  // Intake accepted it, so this does not happen; nothing can link to it.
  }
  html::HtmlDocument document = html::HtmlDocument::Parse(body);
  html::LinkMatch link = html::FindLink(document, final_url, *target_url, links_);
  if (!link.found) {
    analysis.links_to_target_host = std::move(link.links_to_target_host);
    return analysis;
  }
  analysis.links_to_target = true;

  // One parse: the sanitizer reads the e-content from `document` through `sources`.
  html::Mf2HtmlSources sources;
  absl::StatusOr<boost::json::object> mf2 = html::ParseMf2(document, final_url, {}, &sources);
  if (!mf2.ok()) {
    // Too much microformats output for its cap: a plain mention, linked all the same.
    logging::Debug("source microformats not read: {}", std::string(mf2.status().message()));
    mf2 = boost::json::object{};
  }
  html::MentionEntry entry =
      html::ClassifyMention(*mf2, final_url, &*target_url, entry_, &sources);
  queue::MentionContent& content = analysis.content;
  content.type = std::move(entry.type);
  content.rsvp = std::move(entry.rsvp);
  content.name = std::move(entry.name);
  content.published = std::move(entry.published);
  content.url = std::move(entry.url);
  content.content_text = std::move(entry.content_text);
  content.content_html = std::move(entry.content_html);
  content.content_truncated = entry.content_truncated;

  if (const boost::json::object* primary = html::FindPrimaryEntry(*mf2, final_url)) {
    html::AuthorLookup lookup = html::FindAuthor(*mf2, *primary, final_url);
    if (lookup.author.has_value()) {
      SetAuthor(*lookup.author, content);
    } else if (!lookup.author_page.empty()) {
      SetAuthor(lookup.fallback, content);
      analysis.author_page_url = std::move(lookup.author_page);
    }
  }
  return analysis;
}

AuthorCard HtmlSourceAnalyzer::AuthorFromPage(absl::string_view body,
                                              absl::string_view requested_url,
                                              const url::Url& final_url) const {
  html::HtmlDocument document = html::HtmlDocument::Parse(body);
  absl::StatusOr<boost::json::object> mf2 = html::ParseMf2(document, final_url);
  if (!mf2.ok()) {
    return {};
  }
  std::optional<html::Author> author = html::AuthorFromPage(*mf2, requested_url, final_url.href());
  if (!author.has_value()) {
    return {};
  }
  return AuthorCard{std::move(author->name), std::move(author->url), std::move(author->photo),
                    std::move(author->note)};
}

}  // namespace portcullis::verifier::verification
