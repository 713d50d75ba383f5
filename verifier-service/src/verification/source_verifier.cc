#include "verifier-service/src/verification/source_verifier.h"

#include <utility>

#include "common/logging/log.h"
#include "common/url/url.h"
#include "verifier-service/src/html/encoding_sniffer.h"

namespace portcullis::verifier::verification {
namespace {

using queue::VerificationOutcome;

// Fills what the rel=author page says into the author fields it has values for.
void MergeAuthor(const AuthorCard& card, queue::MentionContent& content) {
  const auto take = [](const std::string& from, std::string& to) {
    if (!from.empty()) {
      to = from;
    }
  };
  take(card.name, content.author_name);
  take(card.url, content.author_url);
  take(card.photo, content.author_photo);
  take(card.note, content.author_note);
}

}  // namespace

VerificationOutcome OutcomeOfFailedFetch(const fetch::FetchResult& result) {
  if (result.outcome == fetch::FetchOutcome::kGone) {
    return VerificationOutcome::Failed(queue::kReasonSourceGone);
  }
  const std::string reason(fetch::FetchOutcomeName(result.outcome));
  if (fetch::IsTransient(result.outcome)) {
    return VerificationOutcome::Retry(reason);
  }
  return VerificationOutcome::Failed(reason);
}

SourceVerifier::SourceVerifier(PageFetcher& fetcher, const SourceAnalyzer& analyzer,
                               SourceVerifierConfig config, AuthorCache::Clock clock)
    : fetcher_(fetcher),
      analyzer_(analyzer),
      config_(std::move(config)),
      author_cache_(config_.author_cache_entries, config_.author_cache_ttl, std::move(clock)) {}

VerificationOutcome SourceVerifier::Verify(const queue::Job& job) {
  return Verify(job.source, job.target);
}

VerificationOutcome SourceVerifier::Verify(absl::string_view source, absl::string_view target) {
  PageVerdict verdict = Judge(fetcher_.Fetch(source, config_.source_limits), target);
  if (verdict.author_page.has_value()) {
    MergeAuthor(AuthorOfPage(*verdict.author_page), verdict.outcome.content);
  }
  return std::move(verdict.outcome);
}

SourceVerifier::PageVerdict SourceVerifier::Judge(const fetch::FetchResult& page,
                                                  absl::string_view target) const {
  if (page.outcome != fetch::FetchOutcome::kOk) {
    return {OutcomeOfFailedFetch(page), std::nullopt};
  }
  absl::StatusOr<url::Url> final_url = url::ParseUrl(page.final_url);
  if (!final_url.ok()) {
    // The fetcher fetched it, so it parsed there; this would be a bug, not the sender's doing.
    logging::Error("fetched source has an unparsable final URL: {}",
                   std::string(final_url.status().message()));
    return {VerificationOutcome::Failed(
                std::string(fetch::FetchOutcomeName(fetch::FetchOutcome::kBadUrl))),
            std::nullopt};
  }
  // Decoded as a browser would (BOM, Content-Type charset, meta prescan, windows-1252).
  SourceAnalysis analysis =
      analyzer_.Analyze(html::DecodeToUtf8(page.body, page.content_type).utf8, *final_url, target);
  if (!analysis.links_to_target) {
    return {
        VerificationOutcome::Failed(queue::kReasonNoLink, std::move(analysis.links_to_target_host)),
        std::nullopt};
  }
  return {VerificationOutcome::Verified(std::move(analysis.content)),
          std::move(analysis.author_page_url)};
}

AuthorCard SourceVerifier::AuthorOfPage(const std::string& page_url) {
  if (std::optional<AuthorCard> cached = author_cache_.Get(page_url)) {
    return *std::move(cached);
  }
  return ReadAuthorPage(page_url, fetcher_.Fetch(page_url, config_.author_limits));
}

AuthorCard SourceVerifier::ReadAuthorPage(const std::string& page_url,
                                          const fetch::FetchResult& page) {
  if (page.outcome != fetch::FetchOutcome::kOk) {
    if (!fetch::IsTransient(page.outcome)) {
      author_cache_.Put(page_url, AuthorCard{});  // Not there for good: do not ask again soon.
    }
    logging::Debug("author page not used outcome={}",
                   std::string(fetch::FetchOutcomeName(page.outcome)));
    return {};
  }
  absl::StatusOr<url::Url> final_url = url::ParseUrl(page.final_url);
  if (!final_url.ok()) {
    return {};
  }
  AuthorCard card = analyzer_.AuthorFromPage(
      html::DecodeToUtf8(page.body, page.content_type).utf8, page_url, *final_url);
  author_cache_.Put(page_url, card);
  return card;
}

void SourceVerifier::RunCpu(absl::AnyInvocable<void() &&> task) const {
  if (cpu_executor_) {
    cpu_executor_(std::move(task));
  } else {
    std::move(task)();
  }
}

void SourceVerifier::VerifyAsync(const queue::Job& job, Done done) {
  VerifyAsync(job.source, job.target, std::move(done));
}

void SourceVerifier::VerifyAsync(absl::string_view source, absl::string_view target, Done done) {
  fetcher_.FetchAsync(
      source, config_.source_limits,
      [this, target = std::string(target),
       done = std::move(done)](fetch::FetchResult page) mutable {
        RunCpu([this, target = std::move(target), done = std::move(done),
                page = std::move(page)]() mutable {
          PageVerdict verdict = Judge(page, target);
          if (!verdict.author_page.has_value()) {
            std::move(done)(std::move(verdict.outcome));
            return;
          }
          std::string author_url = *std::move(verdict.author_page);
          if (std::optional<AuthorCard> cached = author_cache_.Get(author_url)) {
            MergeAuthor(*cached, verdict.outcome.content);
            std::move(done)(std::move(verdict.outcome));
            return;
          }
          const std::string fetch_url = author_url;
          fetcher_.FetchAsync(
              fetch_url, config_.author_limits,
              [this, author_url = std::move(author_url), outcome = std::move(verdict.outcome),
               done = std::move(done)](fetch::FetchResult author_page) mutable {
                RunCpu([this, author_url = std::move(author_url), outcome = std::move(outcome),
                        done = std::move(done), author_page = std::move(author_page)]() mutable {
                  MergeAuthor(ReadAuthorPage(author_url, author_page), outcome.content);
                  std::move(done)(std::move(outcome));
                });
              });
        });
      });
}

}  // namespace portcullis::verifier::verification
