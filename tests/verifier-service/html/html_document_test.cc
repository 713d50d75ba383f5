#include "verifier-service/src/html/html_document.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::html {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Depth of the deepest element under `node`.
int Depth(const HtmlNode& node) {
  int deepest = 0;
  for (const auto& child : node.children) {
    deepest = std::max(deepest, 1 + Depth(*child));
  }
  return deepest;
}

const HtmlNode* FindElement(const HtmlNode& node, const std::string& tag) {
  for (const auto& child : node.children) {
    if (child->is_element() && child->tag == tag) {
      return child;
    }
    if (const HtmlNode* found = FindElement(*child, tag)) {
      return found;
    }
  }
  return nullptr;
}

TEST(HtmlDocumentTest, ParsesIntoATree) {
  const HtmlDocument document =
      HtmlDocument::Parse("<p class=a id=x>Hi <b>there</b><!-- c --></p><my-Widget/>");
  const HtmlNode* p = FindElement(document.root(), "p");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->Attribute("class").has_value());
  EXPECT_EQ(*p->Attribute("class"), "a");
  EXPECT_FALSE(p->Attribute("title").has_value());
  EXPECT_EQ(SerializeChildren(*p), "Hi <b>there</b><!-- c -->");
  EXPECT_NE(FindElement(document.root(), "my-widget"), nullptr);
  EXPECT_EQ(document.dropped_start_tags(), 0u);
}

// The tree is views into memory the document owns: a moved document keeps its nodes, texts,
// class lists and the values it was given to keep, and its input may go away first.
TEST(HtmlDocumentTest, TheTreeLivesAsLongAsTheDocumentNotTheInput) {
  auto input = std::make_unique<std::string>(
      "<p class='a  b\tc' title=t>Hi <x-Y data-v=1>there</x-Y><!-- note --></p>");
  HtmlDocument parsed = HtmlDocument::Parse(*input);
  input->assign(input->size(), 'Z');
  input.reset();
  HtmlNode* p = const_cast<HtmlNode*>(FindElement(parsed.root(), "p"));
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->attributes.size(), 2u);
  ASSERT_EQ(p->attributes[1].name, "title");
  p->attributes[1].value = parsed.Keep(std::string("rewritten ") + "title");
  const HtmlDocument document = std::move(parsed);
  p = const_cast<HtmlNode*>(FindElement(document.root(), "p"));
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(p->classes, ::testing::ElementsAre("a", "b", "c"));
  EXPECT_EQ(p->Attribute("title"), "rewritten title");
  EXPECT_EQ(SerializeChildren(*p), "Hi <x-y data-v=\"1\">there</x-y><!-- note -->");
  EXPECT_GT(document.memory_bytes(), 0u);
}

TEST(HtmlDocumentTest, EmptyAndGarbageInputGiveADocument) {
  for (const std::string& input :
       {std::string(), std::string("\0\xff\xfe<<<>>>&&&#;</>", 16), std::string("<html"),
        std::string("</body></html></p></div>"), std::string(1000, '<')}) {
    const HtmlDocument document = HtmlDocument::Parse(input);
    EXPECT_NE(FindElement(document.root(), "body"), nullptr);
  }
}

TEST(HtmlDocumentTest, TemplatesAreLeftOut) {
  const HtmlDocument document =
      HtmlDocument::Parse("<div><template><p class=h-card>Invalid</p></template>ok</div>");
  const HtmlNode* div = FindElement(document.root(), "div");
  ASSERT_NE(div, nullptr);
  EXPECT_EQ(SerializeChildren(*div), "ok");
  EXPECT_EQ(FindElement(document.root(), "p"), nullptr);
}

TEST(HtmlDocumentTest, SerializationEscapesTextAndAttributes) {
  const HtmlDocument document = HtmlDocument::Parse(
      "<div><a title='\"&amp;&lt;'>a &lt; b &amp;&nbsp;c</a><br><script>if (a < b) {}</script>"
      "<svg><foreignObject></foreignObject></svg></div>");
  const HtmlNode* div = FindElement(document.root(), "div");
  ASSERT_NE(div, nullptr);
  EXPECT_EQ(SerializeChildren(*div),
            "<a title=\"&quot;&amp;<\">a &lt; b &amp;&nbsp;c</a><br>"
            "<script>if (a < b) {}</script><svg><foreignObject></foreignObject></svg>");
}

// gumbo starts an unknown tag's original text at an end tag "</>" it ignored just before: the
// name is the tag's own, with NUL read as U+FFFD as the tokenizer reads it.
TEST(HtmlDocumentTest, UnknownTagsAreNamedAsTheTokenizerReadsThem) {
  HtmlDocument document =
      HtmlDocument::Parse(std::string("<p>js</></><bl\0\0ime>x</bl\0\0ime><My-Tag>y</My-Tag></p>", 53));
  const HtmlNode& body = *document.root().children[0]->children[1];
  const HtmlNode& p = *body.children[0];
  ASSERT_EQ(p.children.size(), 3u);
  EXPECT_EQ(p.children[0]->text, "js");
  EXPECT_EQ(p.children[1]->tag, "bl\xEF\xBF\xBD\xEF\xBF\xBDime");
  EXPECT_EQ(p.children[2]->tag, "my-tag");
  EXPECT_EQ(SerializeChildren(p),
            "js<bl\xEF\xBF\xBD\xEF\xBF\xBDime>x</bl\xEF\xBF\xBD\xEF\xBF\xBDime><my-tag>y</my-tag>");
}

TEST(HtmlDocumentTest, CapNestingDepthDropsOnlyTheTagsTooDeep) {
  const auto [capped, dropped] =
      CapNestingDepth("<div><span><i>x</i></span><span>y</span></div>", 2);
  EXPECT_EQ(capped, "<div><span>x</span><span>y</span></div>");
  EXPECT_EQ(dropped, 1u);
}

TEST(HtmlDocumentTest, CapNestingDepthKnowsVoidAndImplicitlyClosedElements) {
  const std::string input =
      "<div><p>a<p>b<br><img src=x><li>c<li>d<input value='>'><!-- <div><div> -->"
      "<script>'<div><div>'</script><svg><path/><path/></svg></div>";
  const auto [capped, dropped] = CapNestingDepth(input, 2);
  EXPECT_EQ(capped, input);
  EXPECT_EQ(dropped, 0u);
}

// A page with no more start tags than the cap is kept without tokenizing it; one more start tag
// nested inside them is the first that can go.
TEST(HtmlDocumentTest, CapNestingDepthKeepsExactlyMaxDepthNestedElements) {
  std::string at_cap;
  for (int i = 0; i < 3; ++i) {
    at_cap += "<div>";
  }
  EXPECT_EQ(CapNestingDepth(at_cap + "x", 3), std::make_pair(at_cap + "x", size_t{0}));
  EXPECT_EQ(CapNestingDepth(at_cap + "<b>x</b>", 3), std::make_pair(at_cap + "x", size_t{1}));
  EXPECT_EQ(CapNestingDepth("<div>a</div><div>b</div><div>c</div><div>d</div>", 3).second, 0u);
}

TEST(HtmlDocumentTest, CapNestingDepthCountsSelfClosingHtmlElements) {
  // "<div/>" does not close in HTML: it nests.
  const auto [capped, dropped] = CapNestingDepth("<div/><div/><div/>", 2);
  EXPECT_EQ(capped, "<div/><div/>");
  EXPECT_EQ(dropped, 1u);
}

// Names are counted as the tokenizer reads them, lowercased, whether the cap knows the element or
// not; an end tag of an element that is not open closes nothing.
TEST(HtmlDocumentTest, CapNestingDepthCountsAnyElementNameInAnyCase) {
  EXPECT_EQ(CapNestingDepth("<X-Card><x-card><DIV>t</div></X-CARD></x-card>", 2),
            std::make_pair(std::string("<X-Card><x-card>t</X-CARD></x-card>"), size_t{1}));
  EXPECT_EQ(CapNestingDepth("<Section></x-other></ARTICLE><section><MAIN>t</main>", 2),
            std::make_pair(std::string("<Section></x-other></ARTICLE><section>t"), size_t{1}));
}

// Without the cap gumbo needs minutes for this (its tree building is quadratic in depth), and a
// run of <b> overflows its stack.
TEST(HtmlDocumentTest, HostileNestingCompletesAndStaysShallow) {
  for (const char* tag : {"<div>", "<b>", "<a>", "<table>", "<span><em>", "<div/>"}) {
    std::string input;
    while (input.size() < (1u << 20)) {
      input += tag;
    }
    input += "<p class=h-card>end</p>";
    const auto start = std::chrono::steady_clock::now();
    const HtmlDocument document = HtmlDocument::Parse(input);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(elapsed, std::chrono::seconds(10)) << tag;
    EXPECT_LE(Depth(document.root()), kMaxElementDepth + 64) << tag;
    // The sibling after the dropped tags is still there.
    EXPECT_NE(FindElement(document.root(), "p"), nullptr) << tag;
  }
}

TEST(HtmlDocumentTest, AOneMebibytePageCompletes) {
  std::string input = "<!doctype html><html><head><title>t</title></head><body>";
  while (input.size() < (1u << 20)) {
    input +=
        "<article class=h-entry><h2 class=p-name>Post</h2><div class=e-content><p>Some "
        "<a href=/x>text</a> &amp; <img src=/i.png alt=i></p></div></article>\n";
  }
  const HtmlDocument document = HtmlDocument::Parse(input);
  EXPECT_NE(FindElement(document.root(), "article"), nullptr);
  EXPECT_EQ(document.dropped_start_tags(), 0u);
  EXPECT_THAT(SerializeChildren(document.root()), Not(HasSubstr("<template")));
}

// Documents hand their memory back for the next ones: pages parsed while others are alive, and
// after those are gone, each keep their own tree.
TEST(HtmlDocumentTest, DocumentsParsedAfterOthersAreFreedAreIntact) {
  const auto body = [](int i) {  // about 200 KiB: the arena takes several chunks
    std::string html;
    while (html.size() < (size_t{200} << 10)) {
      absl::StrAppend(&html, "<p class=\"n", i, "\">page ", i, " text</p>");
    }
    return html;
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<HtmlDocument> documents;
    for (int i = 0; i < 8; ++i) {
      documents.push_back(HtmlDocument::Parse(
          absl::StrCat("<!doctype html><title>t</title><main>", body(8 * round + i), "</main>")));
    }
    for (int i = 0; i < 8; ++i) {
      const HtmlNode* main = FindElement(documents[i].root(), "main");
      ASSERT_NE(main, nullptr);
      EXPECT_EQ(SerializeChildren(*main), body(8 * round + i)) << round << " " << i;
    }
  }
}

#if defined(__SANITIZE_ADDRESS__)
// A freed document's memory waits in the pool for the next one, poisoned: reading through a view
// that outlived its document is still an error AddressSanitizer reports.
TEST(HtmlDocumentDeathTest, AViewIntoAFreedDocumentIsReported) {
  absl::string_view text;
  {
    const HtmlDocument document = HtmlDocument::Parse("<p>some text</p>");
    const HtmlNode* p = FindElement(document.root(), "p");
    ASSERT_TRUE(p != nullptr && p->children.size() == 1);
    text = p->children[0]->text;
    ASSERT_EQ(text, "some text");
  }
  EXPECT_DEATH(
      {
        // The report goes where EXPECT_DEATH reads it, whatever ASAN_OPTIONS's log_path says
        // (scripts/test sends reports to files, where a death test's report would count as one).
        __sanitizer_set_report_path("stderr");
        volatile char first = text[0];
        (void)first;
      },
      "use-after-poison|heap-use-after-free");
}
#endif

// Gumbo parses into a per-page arena that the tree is built in too, freed as a whole with the
// document: it holds what gumbo ever allocated for the page (small buffers it gave back are not
// reused) and the tree, which must stay near what malloc would hold so that many pages in flight
// fit the verifier's memory.
TEST(HtmlDocumentTest, DocumentMemoryStaysASmallMultipleOfThePage) {
  for (const std::string& piece :
       {std::string("<article class=h-entry><h2 class=p-name>Post</h2><div class=e-content><p>Some "
                    "<a href=/x>text</a> &amp; <img src=/i.png alt=i></p></div></article>\n"),
        std::string("plain text without any markup, only words and words. "),
        std::string("<b><i><u>"), std::string("<p title='a long attribute value &amp; more'>")}) {
    std::string input = "<!doctype html><html><head><title>t</title></head><body>";
    while (input.size() < (1u << 20)) {
      input += piece;
    }
    const HtmlDocument document = HtmlDocument::Parse(input);
    EXPECT_GT(document.memory_bytes(), 0u) << piece;
    // (gumbo's own malloc holds 22 times the first page at the end of its parse, the arena 23, and
    // the tree over it 9 more: 32. The owned copy this tree replaced was larger than 9 and was
    // held beside gumbo's 23 while it was made.)
    EXPECT_LE(document.memory_bytes(), 36 * input.size()) << piece;
  }
}

}  // namespace
}  // namespace portcullis::verifier::html
