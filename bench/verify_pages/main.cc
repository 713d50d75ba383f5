// verify_pages: the source pages bench/verify serves, and the reference it measures them against.
//
//   verify_pages write DIR COUNT TARGET
//       Writes COUNT varied h-entry pages of about 20 KiB, DIR/0.html … DIR/COUNT-1.html, and
//       DIR/expected.tsv: per page "INDEX<TAB>STATE<TAB>TYPE" — VERIFIED with the mention type
//       the page must get (reply, like, repost, bookmark, mention), or FAILED no_link for the
//       pages that only link near TARGET (one in twenty). Deterministic: page i is the same on
//       every run.
//   verify_pages gumbo DIR SECONDS THREADS
//       The reference: gumbo's raw parse (gumbo_parse_with_options + gumbo_destroy_output, the
//       options HtmlDocument uses) of DIR/*.html, every page in turn, on THREADS threads for
//       SECONDS; prints "gumbo_pages_per_second N pages_parsed N seconds S bytes_per_page B".
//
// Pages have what real ones have around an entry: a head with styles and scripts, navigation, an
// author (an h-card in the entry, a nested h-card with photo and note, or a sidebar h-card that
// rel=author and u-author point at), a published time, categories, a content of paragraphs,
// links, images and figures, quotes, lists and code, and a comments section of h-cites with
// their own authors. Not run by ctest; see bench/README.md.
#include <gumbo.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace portcullis::bench {
namespace {

// ---- writing the pages ---------------------------------------------------------------------

// What a page is, and what verifying it must give.
struct PageKind {
  const char* name;
  const char* expected_state;
  const char* expected_type;
};

// In turn by page index; the last is the one in twenty that does not link to the target.
constexpr PageKind kKinds[] = {
    {"reply", "VERIFIED", "reply"},         {"like", "VERIFIED", "like"},
    {"reply-cite", "VERIFIED", "reply"},    {"mention", "VERIFIED", "mention"},
    {"repost", "VERIFIED", "repost"},       {"bookmark", "VERIFIED", "bookmark"},
    {"reply", "VERIFIED", "reply"},         {"mention", "VERIFIED", "mention"},
    {"like", "VERIFIED", "like"},           {"reply", "VERIFIED", "reply"},
};
constexpr PageKind kNoLink = {"no-link", "FAILED", "no_link"};

constexpr const char* kNames[] = {"Alice Example", "Bob Smith",   "Carol Jones", "Dan Brown",
                                  "Erin Park",     "Frank Ocean", "Grace Hu",    "Heidi Lam",
                                  "Ivan Petrov",   "Judy Chen"};
constexpr const char* kWords[] = {
    "the",     "server",  "page",    "link",     "reply",    "webmention", "protocol", "of",
    "and",     "a",       "with",    "to",       "indieweb", "parser",     "feed",     "about",
    "this",    "post",    "writing", "notes",    "reading",  "federated",  "site",     "in",
    "is",      "for",     "we",      "markup",   "content",  "thanks",     "great",    "idea",
    "thought", "example", "simple",  "together", "readers",  "comments",   "author",   "photo"};

class PageWriter {
 public:
  PageWriter(int index, absl::string_view target)
      : index_(index), target_(target), random_(static_cast<uint32_t>(20261202 + index)) {}

  const PageKind& kind() const {
    return index_ % 20 == 19 ? kNoLink : kKinds[index_ % std::size(kKinds)];
  }

  std::string Write() {
    const PageKind& k = kind();
    const std::string author = kNames[Pick(std::size(kNames))];
    const std::string author_host = absl::StrCat("author-", index_ % 97, ".example");
    const int author_style = index_ % 3;  // 0: h-card in the entry, 1: nested, 2: sidebar
    const size_t size = 18 * 1024 + Pick(5 * 1024);  // 18–23 KiB
    const std::string title = Sentence(4 + Pick(6), /*capital=*/true);

    std::string head = absl::StrCat(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", title,
        " — ", author, "</title>\n<meta name=\"viewport\" content=\"width=device-width\">\n"
        "<link rel=\"stylesheet\" href=\"/assets/site.css\">\n<link rel=\"webmention\" "
        "href=\"https://webmention.example/", index_, "\">\n");
    if (author_style == 2) {
      absl::StrAppend(&head, "<link rel=\"author\" href=\"https://", author_host, "/\">\n");
    }
    absl::StrAppend(&head,
                    "<style>body{font:16px/1.5 serif;max-width:40em;margin:auto}"
                    ".h-entry img{max-width:100%}nav a{margin-right:1em}</style>\n"
                    "<script>window.analytics=window.analytics||[];analytics.push(['page',",
                    index_, "]);if(document.cookie.indexOf('x<y')>0){}</script>\n",
                    "</head>\n<body class=\"post\">\n<header><a href=\"/\">", author,
                    "'s notes</a>\n<nav><ul>");
    for (const char* item : {"Home", "Notes", "Articles", "Photos", "About", "Feed"}) {
      absl::StrAppend(&head, "<li><a href=\"/", item, "\">", item, "</a></li>");
    }
    absl::StrAppend(&head, "</ul></nav></header>\n<main>\n<article class=\"h-entry\">\n");
    if (std::string(k.name) != "like") {
      absl::StrAppend(&head, "<h1 class=\"p-name\">", title, "</h1>\n");
    }
    switch (author_style) {
      case 0:
        absl::StrAppend(&head, "<a class=\"p-author h-card\" href=\"https://", author_host,
                        "/\"><img class=\"u-photo\" src=\"/photos/", index_ % 97,
                        ".jpg\" alt=\"\">", author, "</a>\n");
        break;
      case 1:
        absl::StrAppend(&head, "<div class=\"p-author h-card\"><a class=\"u-url p-name\" href=\"https://",
                        author_host, "/\">", author, "</a> <img class=\"u-photo\" src=\"https://cdn.",
                        author_host, "/me.png\" alt=\"", author, "\">\n<p class=\"p-note\">",
                        Sentence(10, true), "</p></div>\n");
        break;
      default:
        absl::StrAppend(&head, "<a class=\"u-author\" href=\"https://", author_host, "/\"></a>\n");
    }
    absl::StrAppend(&head, "<time class=\"dt-published\" datetime=\"2024-0", 1 + index_ % 9, "-1",
                    index_ % 10, "T10:0", index_ % 10, ":00Z\">", 10 + index_ % 10, " May 2024</time>\n");
    absl::StrAppend(&head, Context(k));

    std::string tail = "</div>\n";
    for (int c = 0; c < 3; ++c) {
      absl::StrAppend(&tail, "<a class=\"p-category\" href=\"/tags/", kWords[Pick(std::size(kWords))],
                      "\">", kWords[Pick(std::size(kWords))], "</a>\n");
    }
    absl::StrAppend(&tail, "<section class=\"comments\"><h2>Comments</h2>\n");
    const int comments = 2 + static_cast<int>(Pick(5));
    for (int c = 0; c < comments; ++c) {
      absl::StrAppend(&tail, "<div class=\"p-comment h-cite\" id=\"c", c,
                      "\"><a class=\"p-author h-card\" href=\"https://commenter-", c,
                      ".example/\"><img class=\"u-photo\" src=\"https://commenter-", c,
                      ".example/avatar.jpg\" alt=\"\">", kNames[Pick(std::size(kNames))],
                      "</a>\n<div class=\"p-content\"><p>", Sentence(12 + Pick(20), true),
                      "</p></div>\n<a class=\"u-url\" href=\"#c", c,
                      "\"><time class=\"dt-published\" datetime=\"2024-05-1", c,
                      "T12:00:00Z\">1", c, " May</time></a></div>\n");
    }
    absl::StrAppend(&tail, "</section>\n</article>\n</main>\n<aside class=\"sidebar\">\n");
    if (author_style == 2) {
      absl::StrAppend(&tail, "<div class=\"h-card\"><a class=\"u-url p-name\" rel=\"me\" href=\"https://",
                      author_host, "/\">", author, "</a><img class=\"u-photo\" src=\"/me.jpg\" alt=\"\">"
                      "<p class=\"p-note\">", Sentence(8, true), "</p></div>\n");
    }
    absl::StrAppend(&tail, "<h2>Recent</h2><ul>");
    for (int r = 0; r < 8; ++r) {
      absl::StrAppend(&tail, "<li><a href=\"/notes/", index_ + r, "\">", Sentence(5, true), "</a></li>");
    }
    absl::StrAppend(&tail, "</ul></aside>\n<footer><p>&copy; 2024 ", author,
                    " &middot; <a href=\"/feed.xml\">Feed</a></p></footer>\n"
                    "<script src=\"/assets/app.js\" defer></script>\n</body></html>\n");

    std::string content = "<div class=\"e-content\">\n";
    if (std::string(k.name) == "mention") {
      absl::StrAppend(&content, "<p>", Sentence(8, true), " <a href=\"", target_, "\">",
                      Sentence(3, false), "</a> ", Sentence(6, false), ".</p>\n");
    }
    for (int block = 0; head.size() + content.size() + tail.size() < size; ++block) {
      content += Block(block);
    }
    return head + content + tail;
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

  std::string Sentence(size_t words, bool capital) {
    std::string out;
    for (size_t w = 0; w < words; ++w) {
      std::string word = kWords[Pick(std::size(kWords))];
      if (w == 0 && capital) {
        word[0] = static_cast<char>(word[0] - 'a' + 'A');
      }
      absl::StrAppend(&out, w == 0 ? "" : " ", word);
    }
    return out;
  }

  // What the entry says about the target, by kind.
  std::string Context(const PageKind& k) {
    const std::string name = k.name;
    if (name == "reply") {
      return absl::StrCat("<p>In reply to <a class=\"u-in-reply-to\" href=\"", target_, "\">",
                          Sentence(3, false), "</a>.</p>\n");
    }
    if (name == "reply-cite") {
      return absl::StrCat("<div class=\"u-in-reply-to h-cite\"><a class=\"u-url p-name\" href=\"",
                          target_, "\">", Sentence(4, true), "</a> by <span class=\"p-author\">",
                          kNames[Pick(std::size(kNames))], "</span></div>\n");
    }
    if (name == "like") {
      return absl::StrCat("<p>Liked <a class=\"u-like-of\" href=\"", target_, "\">",
                          Sentence(3, false), "</a></p>\n");
    }
    if (name == "repost") {
      return absl::StrCat("<p>Reposted <a class=\"u-repost-of\" href=\"", target_, "\">",
                          Sentence(3, false), "</a></p>\n");
    }
    if (name == "bookmark") {
      return absl::StrCat("<p>Bookmarked <a class=\"u-bookmark-of\" href=\"", target_, "\">",
                          Sentence(3, false), "</a></p>\n");
    }
    if (name == "no-link") {  // a draft URL beside the target: the target itself is not linked
      return absl::StrCat("<p>In reply to <a class=\"u-in-reply-to\" href=\"", target_,
                          "-draft\">", Sentence(3, false), "</a>.</p>\n");
    }
    return "";  // mention: the link is in the content
  }

  // One block of the content: mostly paragraphs, with images, quotes, lists, code and headings.
  std::string Block(int block) {
    switch (Pick(12)) {
      case 0:
        return absl::StrCat("<figure><img src=\"/images/", index_, "-", block,
                            ".jpg\" alt=\"", Sentence(4, true), "\" width=\"640\" height=\"480\" "
                            "loading=\"lazy\"><figcaption>", Sentence(6, true),
                            "</figcaption></figure>\n");
      case 1:
        return absl::StrCat("<blockquote cite=\"https://quoted-", block, ".example/\"><p>",
                            Sentence(18, true), "</p></blockquote>\n");
      case 2: {
        std::string list = Pick(2) == 0 ? "<ul>" : "<ol>";
        const bool ordered = list == "<ol>";
        for (int i = 0; i < 4; ++i) {
          absl::StrAppend(&list, "<li>", Sentence(6, true), "</li>");
        }
        return absl::StrCat(list, ordered ? "</ol>\n" : "</ul>\n");
      }
      case 3:
        return absl::StrCat("<pre><code class=\"language-cpp\">int main() {\n  return ", block,
                            " &lt; 2 &amp;&amp; x &gt; 1;\n}\n</code></pre>\n");
      case 4:
        return absl::StrCat("<h2 id=\"s", block, "\">", Sentence(4, true), "</h2>\n");
      default:
        return absl::StrCat("<p>", Sentence(10 + Pick(20), true), " <a href=\"https://elsewhere-",
                            block % 13, ".example/", index_, "/", block, "\">", Sentence(2, false),
                            "</a>, <em>", Sentence(3, false), "</em> and <strong>",
                            Sentence(2, false), "</strong> ", Sentence(5 + Pick(10), false),
                            Pick(4) == 0 ? " <code>x &lt; y</code>" : "",
                            Pick(5) == 0 ? " <img src=\"/emoji/smile.png\" alt=\":)\">" : "",
                            ".</p>\n");
    }
  }

  const int index_;
  const std::string target_;
  std::mt19937 random_;
};

int WritePages(const std::filesystem::path& dir, int count, absl::string_view target) {
  std::filesystem::create_directories(dir);
  std::ofstream expected(dir / "expected.tsv");
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    PageWriter writer(i, target);
    const std::string page = writer.Write();
    total += page.size();
    std::ofstream(dir / absl::StrCat(i, ".html"), std::ios::binary) << page;
    expected << i << '\t' << writer.kind().expected_state << '\t' << writer.kind().expected_type
             << '\n';
  }
  if (!expected) {
    std::fprintf(stderr, "verify_pages: cannot write %s\n", dir.c_str());
    return 1;
  }
  std::printf("pages %d bytes_per_page %zu\n", count, total / std::max(count, 1));
  return 0;
}

// ---- the reference: gumbo's raw parse --------------------------------------------------------

int ParsePages(const std::filesystem::path& dir, double seconds, int threads) {
  std::vector<std::string> pages;
  for (int i = 0;; ++i) {
    std::ifstream in(dir / absl::StrCat(i, ".html"), std::ios::binary);
    if (!in) {
      break;
    }
    pages.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (pages.empty()) {
    std::fprintf(stderr, "verify_pages: no pages in %s\n", dir.c_str());
    return 1;
  }
  size_t bytes = 0;
  for (const std::string& page : pages) {
    bytes += page.size();
  }
  std::atomic<bool> stop{false};
  std::vector<long long> parsed(static_cast<size_t>(threads), 0);
  std::vector<std::thread> workers;
  const absl::Time start = absl::Now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      GumboOptions options = kGumboDefaultOptions;
      options.max_errors = 0;  // as HtmlDocument::Parse
      long long n = 0;
      for (size_t k = static_cast<size_t>(t); !stop.load(std::memory_order_relaxed);
           k = (k + 1) % pages.size()) {
        const std::string& page = pages[k];
        GumboOutput* output = gumbo_parse_with_options(&options, page.data(), page.size());
        gumbo_destroy_output(&options, output);
        ++n;
      }
      parsed[static_cast<size_t>(t)] = n;
    });
  }
  absl::SleepFor(absl::Seconds(seconds));
  stop = true;
  for (std::thread& worker : workers) {
    worker.join();
  }
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  long long total = 0;
  for (long long n : parsed) {
    total += n;
  }
  std::printf("gumbo_pages_per_second %.0f pages_parsed %lld seconds %.2f bytes_per_page %zu\n",
              static_cast<double>(total) / elapsed, total, elapsed, bytes / pages.size());
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: verify_pages write DIR COUNT TARGET\n"
               "       verify_pages gumbo DIR SECONDS THREADS\n");
  return 2;
}

}  // namespace
}  // namespace portcullis::bench

int main(int argc, char** argv) {
  using portcullis::bench::Usage;
  if (argc != 5) {
    return Usage();
  }
  const std::string command = argv[1];
  if (command == "write") {
    int count = 0;
    if (!absl::SimpleAtoi(argv[3], &count) || count < 1 || count > 100000) {
      return Usage();
    }
    return portcullis::bench::WritePages(argv[2], count, argv[4]);
  }
  if (command == "gumbo") {
    double seconds = 0;
    int threads = 0;
    if (!absl::SimpleAtod(argv[3], &seconds) || seconds <= 0 || seconds > 600 ||
        !absl::SimpleAtoi(argv[4], &threads) || threads < 1 || threads > 256) {
      return Usage();
    }
    return portcullis::bench::ParsePages(argv[2], seconds, threads);
  }
  return Usage();
}
