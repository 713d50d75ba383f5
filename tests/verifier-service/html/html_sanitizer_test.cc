#include "verifier-service/src/html/html_sanitizer.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier-service/src/html/html_document.h"

namespace portcullis::verifier::html {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const url::Url& Base() {
  static const url::Url* const kBase = new url::Url(*url::ParseUrl("https://alice.example/post/1"));
  return *kBase;
}

std::string Sanitize(absl::string_view html) { return SanitizeHtml(html, Base()).html; }

constexpr const char* kLinkRel = " rel=\"nofollow noopener ugc\"";

// ---- the property: re-parsing the output builds nothing outside the allow-list --------------

bool AllowedAfterReparse(absl::string_view tag) {
  static const std::vector<std::string> kAllowed = {
      "a",     "abbr",  "b",     "bdi",    "blockquote", "br",  "caption", "cite",       "code",
      "dd",    "del",   "dfn",   "div",    "dl",         "dt",  "em",      "figcaption", "figure",
      "h1",    "h2",    "h3",    "h4",     "h5",         "h6",  "hr",      "i",          "img",
      "ins",   "kbd",   "li",    "mark",   "ol",         "p",   "pre",     "q",          "s",
      "samp",  "small", "span",  "strong", "sub",        "sup", "table",   "tbody",      "td",
      "tfoot", "th",    "thead", "time",   "tr",         "u",   "ul",      "var",        "wbr"};
  return std::find(kAllowed.begin(), kAllowed.end(), tag) != kAllowed.end();
}

bool AllowedAttributeAfterReparse(absl::string_view tag, absl::string_view name) {
  if (name == "title") {
    return true;
  }
  if (tag == "a") {
    return name == "href" || name == "rel";
  }
  if (tag == "img") {
    return name == "src" || name == "alt" || name == "width" || name == "height";
  }
  if (name == "cite") {
    return tag == "blockquote" || tag == "q" || tag == "del" || tag == "ins";
  }
  if (name == "datetime") {
    return tag == "time" || tag == "del" || tag == "ins";
  }
  if (name == "colspan" || name == "rowspan") {
    return tag == "td" || tag == "th";
  }
  return tag == "ol" && name == "start";
}

// Everything wrong with `node`'s subtree as a browser would build it from sanitized output.
void Violations(const HtmlNode& node, std::vector<std::string>& out) {
  for (const auto& child : node.children) {
    if (child->kind == HtmlNode::Kind::kComment) {
      out.push_back(absl::StrCat("comment <!--", child->text, "-->"));
      continue;
    }
    if (!child->is_element()) {
      continue;
    }
    if (!child->html_namespace || !AllowedAfterReparse(child->tag)) {
      out.push_back(absl::StrCat("element <", child->tag, ">"));
    }
    for (const auto& [name, value] : child->attributes) {
      if (!AllowedAttributeAfterReparse(child->tag, name)) {
        out.push_back(absl::StrCat("attribute ", name, " on <", child->tag, ">"));
      }
      if (name == "href" || name == "src" || name == "cite") {
        const bool ok = absl::StartsWith(value, "http://") || absl::StartsWith(value, "https://") ||
                        (name == "href" && absl::StartsWith(value, "mailto:"));
        if (!ok) {
          out.push_back(absl::StrCat(name, "=\"", value, "\" on <", child->tag, ">"));
        }
      }
      if (child->tag == "a" && name == "rel" && value != "nofollow noopener ugc") {
        out.push_back(absl::StrCat("rel=\"", value, "\""));
      }
    }
    Violations(*child, out);
  }
}

// The sanitized output of `input`, re-parsed as a browser parses a document: only allowed
// elements, attributes and URLs.
std::vector<std::string> ReparseViolations(absl::string_view sanitized) {
  const HtmlDocument document = HtmlDocument::Parse(sanitized);
  std::vector<std::string> violations;
  // html > (head, body): the document skeleton the parser adds is not the output's.
  for (const auto& html : document.root().children) {
    if (!html->is_element()) {
      if (html->kind == HtmlNode::Kind::kComment) {
        violations.push_back("comment outside <html>");
      }
      continue;
    }
    for (const auto& section : html->children) {
      if (section->is_element() && section->tag == "head" && !section->children.empty()) {
        violations.push_back("something in <head>");
      }
      if (section->is_element()) {
        Violations(*section, violations);
      }
    }
  }
  return violations;
}

// A test helper asserting the property on one input.
void ExpectSafe(absl::string_view input) {
  const std::string output = Sanitize(input);
  EXPECT_THAT(ReparseViolations(output), ::testing::IsEmpty())
      << "input: " << input << "\noutput: " << output;
}

// ---- what is kept ------------------------------------------------------------------------------

TEST(HtmlSanitizerTest, KeepsFormattingAndEscapesText) {
  EXPECT_EQ(Sanitize("<p>Hello <b>bold</b> <em>em</em> &amp; <code>a &lt; b</code></p>"),
            "<p>Hello <b>bold</b> <em>em</em> &amp; <code>a &lt; b</code></p>");
  EXPECT_EQ(Sanitize("5 > 3 & 2 < 4 \"quoted\""), "5 &gt; 3 &amp; 2 &lt; 4 \"quoted\"");
  EXPECT_EQ(Sanitize("<ul><li>one<li>two</ul><hr><br>"),
            "<ul><li>one</li><li>two</li></ul><hr><br>");
  EXPECT_EQ(Sanitize("<blockquote cite=\"/src\">q</blockquote>"),
            "<blockquote cite=\"https://alice.example/src\">q</blockquote>");
  EXPECT_EQ(Sanitize("<time datetime=\"2024-01-02\" title=\"t\">Jan</time>"),
            "<time datetime=\"2024-01-02\" title=\"t\">Jan</time>");
  EXPECT_EQ(Sanitize("<table><tr><td colspan=2 rowspan=x>c</td></tr></table>"),
            "<table><tbody><tr><td colspan=\"2\">c</td></tr></tbody></table>");
  EXPECT_EQ(Sanitize("<ol start=\"-3\" reversed><li>x</li></ol>"),
            "<ol start=\"-3\"><li>x</li></ol>");
}

TEST(HtmlSanitizerTest, LinksBecomeAbsoluteWithRelNofollow) {
  EXPECT_EQ(Sanitize("<a href=\"/other\" target=_blank class=x id=y>x</a>"),
            absl::StrCat("<a href=\"https://alice.example/other\"", kLinkRel, ">x</a>"));
  EXPECT_EQ(Sanitize("<a href=\"../up?q=1#f\">x</a>"),
            absl::StrCat("<a href=\"https://alice.example/up?q=1#f\"", kLinkRel, ">x</a>"));
  EXPECT_EQ(Sanitize("<a href=\"//cdn.example/x\">x</a>"),
            absl::StrCat("<a href=\"https://cdn.example/x\"", kLinkRel, ">x</a>"));
  EXPECT_EQ(Sanitize("<a href=\"mailto:bob@example.com\">mail</a>"),
            absl::StrCat("<a href=\"mailto:bob@example.com\"", kLinkRel, ">mail</a>"));
  // An existing rel is replaced, not merged.
  EXPECT_EQ(Sanitize("<a href=\"http://x.example/\" rel=\"me opener\">x</a>"),
            absl::StrCat("<a href=\"http://x.example/\"", kLinkRel, ">x</a>"));
  // A link inside a link (the parser builds one across a table cell): the inner one is unwrapped.
  EXPECT_EQ(Sanitize("<a href=\"http://a.example/\">a<table><tr><td><a href=\"http://b.example/\">b"
                     "</a></td></tr></table></a>"),
            absl::StrCat("<a href=\"http://a.example/\"", kLinkRel,
                         ">a<table><tbody><tr><td>b</td></tr></tbody></table></a>"));
}

TEST(HtmlSanitizerTest, ImagesKeepOnlySafeAttributes) {
  EXPECT_EQ(Sanitize("<img src=\"p.jpg\" alt=\"A &quot;cat&quot;\" width=\"10\" height=\"1e9\" "
                     "srcset=\"evil.jpg 2x\" style=\"x\" loading=lazy>"),
            "<img src=\"https://alice.example/post/p.jpg\" alt=\"A &quot;cat&quot;\" "
            "width=\"10\">");
  EXPECT_EQ(Sanitize("<img alt=no-src>text"), "text");
  EXPECT_EQ(Sanitize("<img src=\"data:image/png;base64,AAAA\">"), "");
  EXPECT_EQ(Sanitize("<img src=\"mailto:a@b\">"), "");
}

TEST(HtmlSanitizerTest, UnknownAndLayoutElementsAreUnwrapped) {
  EXPECT_EQ(Sanitize("<section><article><header>H</header><my-widget>W</my-widget>"
                     "<font color=red>F</font><center>C</center></article></section>"),
            "HWFC");
  EXPECT_EQ(Sanitize("<details><summary>S</summary>D</details>"), "SD");
}

TEST(HtmlSanitizerTest, PreKeepsALeadingNewlineThroughAReparse) {
  const std::string output = Sanitize("<pre>\n\nindented\n</pre>");
  EXPECT_EQ(output, "<pre>\n\nindented\n</pre>");
  EXPECT_EQ(Sanitize(output), output);
}

// ---- what is dropped: the adversarial corpus ----------------------------------------------------

TEST(HtmlSanitizerTest, ScriptsStylesAndActiveContentGoWithTheirContents) {
  EXPECT_EQ(Sanitize("a<script>alert(1)</script>b"), "ab");
  EXPECT_EQ(Sanitize("a<style>body{display:none}</style>b"), "ab");
  EXPECT_EQ(Sanitize("a<iframe src=\"https://evil.example/\">x</iframe>b"), "ab");
  EXPECT_EQ(Sanitize("a<object data=x><param name=a value=b>fallback</object>b"), "ab");
  EXPECT_EQ(Sanitize("a<embed src=x>b"), "ab");
  EXPECT_EQ(Sanitize("a<form action=/x><input name=q><button>go</button></form>b"), "ab");
  EXPECT_EQ(Sanitize("a<template><img src=x onerror=alert(1)></template>b"), "ab");
  EXPECT_EQ(Sanitize("a<textarea><img src=x onerror=1></textarea>b"), "ab");
  // Read with scripting disabled, the </noscript> inside the attribute ends nothing, and the
  // stray one is ignored inside <p>: everything after <noscript> is in it, and goes.
  EXPECT_EQ(Sanitize("a<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">"
                     "</noscript>b"),
            "a");
  ExpectSafe("<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">");
  EXPECT_EQ(Sanitize("a<xmp><script>alert(1)</script></xmp>b"), "ab");
  EXPECT_EQ(Sanitize("a<title>t</title><meta http-equiv=refresh content=\"0;url=x\">"
                     "<link rel=stylesheet href=x><base href=\"https://evil.example/\">b"),
            "ab");
  EXPECT_EQ(Sanitize("a<video src=x.mp4 poster=x onerror=1>v</video><audio src=y>b</audio>c"),
            "ac");
  EXPECT_EQ(Sanitize("a<plaintext><b>all text now"), "a");
}

TEST(HtmlSanitizerTest, SplitTagsDoNotReassemble) {
  const std::string output = Sanitize("<scr<script>ipt>alert(1)</scr</script>ipt>");
  EXPECT_THAT(output, Not(HasSubstr("<script")));
  EXPECT_THAT(output, Not(HasSubstr("<scr")));
  ExpectSafe("<scr<script>ipt>alert(1)</scr</script>ipt>");
  EXPECT_EQ(Sanitize("<<script>script>alert(1)<</script>/script>"),
            "&lt;/script&gt;");  // "<" + a dropped <script> + "/script>"
}

TEST(HtmlSanitizerTest, EventHandlersAndStylesAreDropped) {
  EXPECT_EQ(Sanitize("<img src=x onerror=alert(1)>"), "<img src=\"https://alice.example/post/x\">");
  EXPECT_EQ(Sanitize("<p onclick=\"alert(1)\" style=\"background:url(javascript:x)\" "
                     "class=\"h-card\" id=\"login\" ONMOUSEOVER=x>p</p>"),
            "<p>p</p>");
  EXPECT_EQ(Sanitize("<b/onmouseover=alert(1)>x</b>"), "<b>x</b>");
  EXPECT_EQ(Sanitize("<body onload=alert(1)>x"), "x");
}

TEST(HtmlSanitizerTest, DangerousSchemesAreDroppedHoweverSpelled) {
  for (const char* href :
       {"javascript:alert(1)", "JaVaScRiPt:alert(1)", "jav&#x09;ascript:alert(1)",
        "jav&#x0A;ascript:alert(1)", "jav&#13;ascript:alert(1)", " javascript:alert(1)",
        "&#x01;javascript:alert(1)", "javascript&colon;alert(1)", "&#106;avascript:alert(1)",
        "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "DATA:text/html,<script>alert(1)</script>", "file:///etc/passwd", "ftp://x.example/",
        "about:blank", "blob:https://x.example/1", "ws://x.example/", "http://[::1", "http://"}) {
    const std::string input = absl::StrCat("<a href=\"", href, "\">click</a>");
    EXPECT_EQ(Sanitize(input), "click") << input;
  }
  // As the browser reads it: "java\0script:" is no scheme at all, so it is a relative path.
  const std::string relative = Sanitize("<a href=\"java&#0;script:alert(1)\">x</a>");
  EXPECT_THAT(relative, HasSubstr("href=\"https://alice.example/post/java"));
  EXPECT_EQ(Sanitize("<blockquote cite=\"javascript:alert(1)\">q</blockquote>"),
            "<blockquote>q</blockquote>");
  EXPECT_EQ(Sanitize("<q cite=\"mailto:a@b.example\">q</q>"), "<q>q</q>");
}

TEST(HtmlSanitizerTest, ForeignContentIsDroppedWhole) {
  EXPECT_EQ(Sanitize("a<svg><script>alert(1)</script></svg>b"), "ab");
  EXPECT_EQ(Sanitize("a<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>b"),
            "ab");
  EXPECT_EQ(Sanitize("a<svg onload=alert(1)>b"), "a");
  EXPECT_EQ(Sanitize("a<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>b"), "ab");
  // Mutation XSS shapes (namespace confusion between parse and re-parse).
  ExpectSafe("<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style>");
  ExpectSafe("<svg></p><style><a id=\"</style><img src=1 onerror=alert(1)>\">");
  ExpectSafe(
      "<math><mtext><h1><a><h6></a></h6><mglyph><svg><mtext><style><a title=\""
      "</style><img src onerror=alert(1)>\"></style></h1>");
  ExpectSafe("<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>");
  ExpectSafe("<svg><p><style><g title=\"</style><img src=x onerror=alert(1)>\">");
  ExpectSafe("<math><annotation-xml encoding=\"text/html\"><style><img src=x onerror=alert(1)>");
}

TEST(HtmlSanitizerTest, CommentsAreDroppedHoweverTheyEnd) {
  EXPECT_EQ(Sanitize("a<!-- <img src=x onerror=alert(1)> -->b"), "ab");
  EXPECT_EQ(Sanitize("a<!-- x --!><img src=x onerror=alert(1)>b"),
            "a<img src=\"https://alice.example/post/x\">b");
  EXPECT_EQ(Sanitize("a<!--><img src=x onerror=alert(1)>-->b"),
            "a<img src=\"https://alice.example/post/x\">--&gt;b");
  EXPECT_EQ(Sanitize("a<!-->b"), "ab");
  EXPECT_EQ(Sanitize("a<![CDATA[<img src=x onerror=alert(1)>]]>b"), "a]]&gt;b");
  EXPECT_EQ(Sanitize("a<?xml version=1?>b<!DOCTYPE html>c"), "abc");
  ExpectSafe("<!--<script>--><script>alert(1)</script>");
}

TEST(HtmlSanitizerTest, AttributeQuotesCannotBeBroken) {
  EXPECT_EQ(Sanitize("<img src=x alt=\"\\\" onerror=alert(1) \\\"\">"),
            "<img src=\"https://alice.example/post/x\" alt=\"\\\">");
  EXPECT_EQ(Sanitize("<img src=x alt='\" onerror=\"alert(1)'>"),
            "<img src=\"https://alice.example/post/x\" alt=\"&quot; onerror=&quot;alert(1)\">");
  EXPECT_EQ(Sanitize("<abbr title=\"a'b<c>&amp;\">t</abbr>"),
            "<abbr title=\"a&#39;b&lt;c&gt;&amp;\">t</abbr>");
  EXPECT_EQ(Sanitize("<a title=`x` href=\"http://a.example/\"onclick=1>x</a>"),
            absl::StrCat("<a title=\"`x`\" href=\"http://a.example/\"", kLinkRel, ">x</a>"));
  EXPECT_EQ(Sanitize("<a href=\"http://a.example/\" title=\"</a><script>alert(1)</script>\">"
                     "x</a>"),
            absl::StrCat("<a href=\"http://a.example/\" title=\"&lt;/a&gt;&lt;script&gt;"
                         "alert(1)&lt;/script&gt;\"",
                         kLinkRel, ">x</a>"));
  // Quotes in a URL are percent-encoded by the URL serializer.
  EXPECT_EQ(
      Sanitize("<a href='http://a.example/\"onmouseover=\"alert(1)'>x</a>"),
      absl::StrCat("<a href=\"http://a.example/%22onmouseover=%22alert(1)\"", kLinkRel, ">x</a>"));
}

TEST(HtmlSanitizerTest, UnclosedAndMisnestedMarkupIsClosed) {
  EXPECT_EQ(Sanitize("<b><i>x"), "<b><i>x</i></b>");
  EXPECT_EQ(Sanitize("<b>1<i>2</b>3</i>"), "<b>1<i>2</i></b><i>3</i>");
  EXPECT_EQ(Sanitize("<p>a<p>b"), "<p>a</p><p>b</p>");
  EXPECT_EQ(Sanitize("<a href=\"http://a.example/\">x"),
            absl::StrCat("<a href=\"http://a.example/\"", kLinkRel, ">x</a>"));
  EXPECT_EQ(Sanitize("<img src=\"http://a.example/x.jpg"), "");  // the tag never ended
  EXPECT_EQ(Sanitize("x<script>alert(1)"), "x");
  EXPECT_EQ(Sanitize("</p></div></b>x"), "<p></p>x");
}

TEST(HtmlSanitizerTest, NulAndInvalidUtf8AreReplaced) {
  const std::string output = Sanitize(std::string("a\0b\xff<b>c\0</b>", 12));
  EXPECT_EQ(output.find('\0'), std::string::npos);
  EXPECT_THAT(output, HasSubstr("\xEF\xBF\xBD"));
  ExpectSafe(output);
}

// ---- limits -------------------------------------------------------------------------------------

TEST(HtmlSanitizerTest, OutputIsCappedAndStaysWellFormed) {
  SanitizeLimits limits;
  limits.max_output_bytes = 40;
  std::string input = "<p><b>";
  for (int i = 0; i < 100; ++i) {
    input += "\xE2\x82\xAC & ";  // € &
  }
  const SanitizedHtml result = SanitizeHtml(input, Base(), limits);
  EXPECT_TRUE(result.truncated);
  EXPECT_LE(result.html.size(), 40u);
  EXPECT_TRUE(absl::EndsWith(result.html, "</b></p>")) << result.html;
  EXPECT_TRUE(absl::StartsWith(result.html, "<p><b>\xE2\x82\xAC &amp; ")) << result.html;
  ExpectSafe(result.html);
  // Every prefix cap gives well-formed output within the cap.
  for (size_t cap = 0; cap < 120; ++cap) {
    limits.max_output_bytes = cap;
    const SanitizedHtml capped = SanitizeHtml(
        "<p>x <a href=/a>link &amp; text</a> <img src=/i.png></p><ul><li>1</ul>", Base(), limits);
    EXPECT_LE(capped.html.size(), cap);
    EXPECT_THAT(ReparseViolations(capped.html), ::testing::IsEmpty()) << capped.html;
    EXPECT_EQ(Sanitize(capped.html), capped.html) << "not stable: " << capped.html;
  }
  const SanitizedHtml small = SanitizeHtml("<p>short</p>", Base());
  EXPECT_FALSE(small.truncated);
}

TEST(HtmlSanitizerTest, InputIsCapped) {
  SanitizeLimits limits;
  limits.max_input_bytes = 10;
  const SanitizedHtml result = SanitizeHtml("<b>12345678901234567890</b>", Base(), limits);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(result.html, "<b>1234567</b>");
}

TEST(HtmlSanitizerTest, DeepNestingIsBoundedAndFast) {
  std::string input;
  for (int i = 0; i < 100000; ++i) {
    input += "<span>";
  }
  input += "deep";
  SanitizeLimits limits;
  limits.max_output_bytes = size_t{1} << 20;
  const SanitizedHtml result = SanitizeHtml(input, Base(), limits);
  EXPECT_THAT(result.html, HasSubstr("deep"));
  ExpectSafe(input);
}

TEST(HtmlSanitizerTest, LongUrlsAreDropped) {
  const std::string long_url = "http://a.example/" + std::string(5000, 'x');
  EXPECT_EQ(Sanitize("<a href=\"" + long_url + "\">x</a>"), "x");
}

TEST(HtmlSanitizerTest, SafeUrl) {
  EXPECT_EQ(SafeUrl(" /a b ", Base(), false), "https://alice.example/a%20b");
  EXPECT_EQ(SafeUrl("mailto:x@y", Base(), false), "");
  EXPECT_EQ(SafeUrl("mailto:x@y", Base(), true), "mailto:x@y");
  EXPECT_EQ(SafeUrl(std::string("mailto:x\x01@y"), Base(), true), "");
  EXPECT_EQ(SafeUrl("java\tscript:alert(1)", Base(), true), "");
  EXPECT_EQ(SafeUrl("https://a.example/" + std::string(100, 'x'), Base(), false, 50), "");
}

// ---- the property, over a generated corpus ------------------------------------------------------

// Pieces of hostile markup, joined at random into the generated corpus.
const std::vector<std::string>& HostilePieces() {
  static const auto* const kPieces = new std::vector<std::string>{"<script>",
                                           "</script>",
                                           "<style>",
                                           "</style>",
                                           "<svg>",
                                           "</svg>",
                                           "<math>",
                                           "</math>",
                                           "<mtext>",
                                           "<mglyph>",
                                           "<table>",
                                           "<tr>",
                                           "<td>",
                                           "</table>",
                                           "<p>",
                                           "</p>",
                                           "<a href=",
                                           "\"javascript:alert(1)\"",
                                           "'http://ok.example/'",
                                           ">",
                                           "<img src=x onerror=alert(1)>",
                                           "<!--",
                                           "-->",
                                           "--!>",
                                           "<noscript>",
                                           "</noscript>",
                                           "<textarea>",
                                           "</textarea>",
                                           "<title>",
                                           "</title>",
                                           "<template>",
                                           "</template>",
                                           "<iframe>",
                                           "</iframe>",
                                           "\"",
                                           "'",
                                           "<b title=\"",
                                           "<form>",
                                           "</form>",
                                           "<select>",
                                           "<option>",
                                           "<xmp>",
                                           "<plaintext>",
                                           "<foreignObject>",
                                           "<desc>",
                                           "<annotation-xml encoding=text/html>",
                                           "<style>",
                                           "x",
                                           " ",
                                           "&lt;",
                                           "&amp;",
                                           "&#x3C;script&#x3E;",
                                           "<br/>",
                                           "<a>",
                                           "</a>",
                                           "<object>",
                                           "<![CDATA[",
                                           "]]>",
                                           "<li>",
                                           "<ul>",
                                           "<pre>",
                                           "\n",
                                           "<h1>",
                                           "<div>",
                                           "</div>",
                                           "<q cite=data:x>"};
  return *kPieces;
}

TEST(HtmlSanitizerTest, ReparsedOutputOfGeneratedHostileInputHoldsOnlyAllowedMarkup) {
  const std::vector<std::string>& pieces = HostilePieces();
  std::mt19937 random(20260530);  // fixed: failures reproduce
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(1, 40);
  int checked = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    for (int i = length(random); i > 0; --i) {
      input += pieces[pick(random)];
    }
    const std::string output = Sanitize(input);
    const std::vector<std::string> violations = ReparseViolations(output);
    ASSERT_THAT(violations, ::testing::IsEmpty()) << "input: " << input << "\noutput: " << output;
    // Sanitizing again changes nothing: the output reads back as itself.
    const std::vector<std::string> again = ReparseViolations(Sanitize(output));
    ASSERT_THAT(again, ::testing::IsEmpty()) << "input: " << input;
    EXPECT_EQ(Sanitize(output), output) << "input: " << input;
    ++checked;
  }
  EXPECT_EQ(checked, 3000);
}

// Allowed markup, misnested every way the parser repairs (see the test below).
const std::vector<std::string>& AllowedMisnestedPieces() {
  static const auto* const kPieces = new std::vector<std::string>{
      "<b>", "</b>", "<i>", "</i>", "<em>", "</em>", "<strong>", "</strong>", "<code>", "<p>",
      "</p>", "<div>", "</div>", "<blockquote cite=/q>", "</blockquote>", "<ul>", "<ol start=-3>",
      "<li>", "</li>", "<dl>", "<dt>", "<dd>", "<table>", "</table>", "<caption>", "<thead>",
      "<tbody>", "<tr>", "</tr>", "<th colspan=2>", "<td>", "</td>", "<h1>", "</h1>", "<h2>",
      "<hr>", "<br>", "</br>", "<img src=a.png alt=A>", "<a href=/x>", "<a href='../y?z'>",
      "</a>", "<q cite=/c>", "</q>", "<!--c-->", "<pre>", "</pre>", "\n", "\r\n", "&#13;", " ",
      "x", "&amp;", "<span title='&#13;t'>", "</span>", "<del datetime=2024>", "<sub>", "<s>",
      "<u>", "<small>", "<figure>", "<figcaption>", "</figure>", "<time datetime=1>"};
  return *kPieces;
}

// Inputs of allowed markup only, misnested every way the parser repairs (formatting elements
// across blocks, tables and foster parenting, implied end tags, <pre> newlines, carriage returns
// from references, relative URLs): nothing is unwrapped, so one pass is all SanitizeHtml runs, and
// its output must still read back as itself.
TEST(HtmlSanitizerTest, AllowedButMisnestedMarkupIsAFixedPointAfterOnePass) {
  const std::vector<std::string>& pieces = AllowedMisnestedPieces();
  std::mt19937 random(20261130);  // fixed: failures reproduce
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(1, 40);
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    for (int i = length(random); i > 0; --i) {
      input += pieces[pick(random)];
    }
    const std::string output = Sanitize(input);
    ASSERT_THAT(ReparseViolations(output), ::testing::IsEmpty()) << "input: " << input;
    ASSERT_EQ(Sanitize(output), output) << "input: " << input;
  }
}


// ---- SanitizeParsedHtml: the parsed tree instead of a second parse ------------------------------

// The fragment of every HTML element of `document` (its children, ASCII whitespace trimmed off
// the ends as an mf2 e-* html value is) with its serialization.
struct FragmentCase {
  HtmlFragment fragment;
  std::string html;
};

void CollectFragments(const HtmlNode& node, std::vector<FragmentCase>& out) {
  for (const auto& child : node.children) {
    if (!child->is_element()) {
      continue;
    }
    const std::string serialized = SerializeChildren(*child);
    const size_t front = std::min(serialized.find_first_not_of(" \t\n\f"), serialized.size());
    const size_t end = serialized.find_last_not_of(" \t\n\f");
    const size_t back = end == std::string::npos ? 0 : serialized.size() - end - 1;
    out.push_back({HtmlFragment{child, front, back},
                   serialized.substr(front, serialized.size() - front - back)});
    CollectFragments(*child, out);
  }
}

// The fragment of the first <div> of `document`.
std::optional<FragmentCase> FirstDiv(const HtmlDocument& document) {
  std::vector<FragmentCase> cases;
  CollectFragments(document.root(), cases);
  for (FragmentCase& c : cases) {
    if (c.fragment.parent->tag == "div") {
      return std::move(c);
    }
  }
  return std::nullopt;
}

// SanitizeParsedHtml gives SanitizeHtml's result for every element of `page`; returns how many
// were written without a parse.
int ExpectSameAsSanitizeHtml(absl::string_view page, const SanitizeLimits& limits = {}) {
  HtmlDocument document = HtmlDocument::Parse(page);
  std::vector<FragmentCase> cases;
  CollectFragments(document.root(), cases);
  int unparsed = 0;
  for (const FragmentCase& c : cases) {
    const SanitizedHtml parsed = SanitizeParsedHtml(c.fragment, c.html, Base(), limits);
    const SanitizedHtml reference = SanitizeHtml(c.html, Base(), limits);
    EXPECT_EQ(parsed.html, reference.html)
        << "page: " << page << "\nelement: " << c.fragment.parent->tag << "\nhtml: " << c.html;
    EXPECT_EQ(parsed.truncated, reference.truncated) << "html: " << c.html;
    EXPECT_LE(parsed.parses, reference.parses) << "html: " << c.html;
    unparsed += parsed.parses == 0 ? 1 : 0;
  }
  return unparsed;
}

TEST(HtmlSanitizerTest, ParsedEContentIsWrittenWithoutAnotherParse) {
  HtmlDocument document = HtmlDocument::Parse(
      "<!doctype html><article><div class=e-content>\n  <p>Hello <em>you</em>, see "
      "<a href=\"https://bob.example/x\" class=u-url>this</a> and <img src=\"https://bob.example/"
      "i.png\" alt=\"A\" onerror=x>.</p><!-- wp:list --><ul><li>one<li>two</ul>"
      "<my-card><b>custom</b></my-card>\n</div></article>");
  const HtmlNode& content = *document.root().children[0]->children[1]->children[0]->children[0];
  ASSERT_EQ(content.tag, "div");
  const std::string serialized = SerializeChildren(content);
  const std::string html = std::string(absl::StripAsciiWhitespace(serialized));
  const HtmlFragment fragment{&content, 3, 1};
  const SanitizedHtml parsed = SanitizeParsedHtml(fragment, html, Base());
  EXPECT_EQ(parsed.parses, 0);
  EXPECT_EQ(parsed.html, SanitizeHtml(html, Base()).html);
  EXPECT_EQ(parsed.html, absl::StrCat("<p>Hello <em>you</em>, see <a href=\"https://bob.example/x\"",
                                      kLinkRel, ">this</a> and <img src=\"https://bob.example/i.png\" "
                                      "alt=\"A\">.</p><ul><li>one</li><li>two</li></ul><b>custom</b>"));
}

// The rare case: a tree that its serialization does not build again. The parser drops the newline
// right after <pre>, so a <pre> whose text starts with one (two in the page) reads back without
// it; a carriage return from &#13; reads back as a newline; in a page without a doctype (quirks
// mode) a <table> stays inside a <p>, which a fragment parse closes first. Each is parsed again,
// and the result is SanitizeHtml's.
TEST(HtmlSanitizerTest, TreesTheirSerializationDoesNotRebuildAreParsedAgain) {
  for (const std::string page :
       {"<!doctype html><div><pre>\n\ncode</pre></div>", "<!doctype html><div>a&#13;b</div>",
        "<div><p>x<table><tr><td>y</table>z</div>",
        "<!doctype html><div><span title='a&#13;b'>t</span></div>"}) {
    HtmlDocument document = HtmlDocument::Parse(page);
    const std::optional<FragmentCase> div = FirstDiv(document);
    ASSERT_TRUE(div.has_value()) << page;
    const SanitizedHtml parsed = SanitizeParsedHtml(div->fragment, div->html, Base());
    EXPECT_GE(parsed.parses, 1) << page;
    EXPECT_EQ(parsed.html, SanitizeHtml(div->html, Base()).html) << page;
  }
  // The <pre>: the stored HTML is what the serialization means, not the page's tree.
  HtmlDocument document = HtmlDocument::Parse("<!doctype html><div><pre>\n\ncode</pre></div>");
  const std::optional<FragmentCase> div = FirstDiv(document);
  ASSERT_TRUE(div.has_value());
  EXPECT_EQ(div->html, "<pre>\ncode</pre>");
  EXPECT_EQ(SanitizeParsedHtml(div->fragment, div->html, Base()).html, "<pre>code</pre>");
}

// A character reference to a character gumbo's input stream does not take raw — a C0 control
// (&#8;), DEL, a C1 control without a windows-1252 meaning (&#x81;, &#x8D;; &#x9F; is Y with
// diaeresis), a noncharacter — puts that character into the tree, but its serialization holds it
// raw and reads back as U+FFFD. In text and in a kept attribute value: parsed again, and the
// stored HTML is what the serialization means. Characters that do read back (form feed, &#x80;
// which is the euro sign) are written from the tree.
TEST(HtmlSanitizerTest, CharactersOnlyAReferenceWritesAreParsedAgain) {
  for (const std::string page :
       {"<!doctype html><div>a&#x08;b</div>", "<!doctype html><div>a&#x1F;b</div>",
        "<!doctype html><div>a&#x7F;b</div>", "<!doctype html><div>a&#x81;b</div>",
        "<!doctype html><div>a&#xFDD0;b</div>", "<!doctype html><div>a&#xFFFE;b</div>",
        "<!doctype html><div>a&#x10FFFF;b</div>",
        "<!doctype html><div><span title='a&#x0B;b'>t</span></div>",
        "<!doctype html><div><img src=/i.png alt='&#x8D;'></div>"}) {
    HtmlDocument document = HtmlDocument::Parse(page);
    const std::optional<FragmentCase> div = FirstDiv(document);
    ASSERT_TRUE(div.has_value()) << page;
    const SanitizedHtml parsed = SanitizeParsedHtml(div->fragment, div->html, Base());
    EXPECT_GE(parsed.parses, 1) << page;
    EXPECT_EQ(parsed.html, SanitizeHtml(div->html, Base()).html) << page;
    EXPECT_THAT(parsed.html, HasSubstr("\xEF\xBF\xBD")) << page;
    EXPECT_EQ(Sanitize(parsed.html), parsed.html) << page;
  }
  for (const std::string page : {"<!doctype html><div>a&#x0C;b&#x80;c\xC3\xA9</div>",
                                 "<!doctype html><div><span title='&#x09;&#x80;'>t</span></div>"}) {
    HtmlDocument document = HtmlDocument::Parse(page);
    const std::optional<FragmentCase> div = FirstDiv(document);
    ASSERT_TRUE(div.has_value()) << page;
    const SanitizedHtml parsed = SanitizeParsedHtml(div->fragment, div->html, Base());
    EXPECT_EQ(parsed.parses, 0) << page;
    EXPECT_EQ(parsed.html, SanitizeHtml(div->html, Base()).html) << page;
  }
}

// fuzz/regressions/html_sanitizer_fuzzer/control-char-reference-not-a-fixed-point, where the
// sanitizer fuzzer found SanitizeParsedHtml writing the <p>'s U+0008 (from "&#x08;") raw while
// SanitizeHtml of the serialization read it as U+FFFD: every element of it as the fragment.
TEST(HtmlSanitizerTest, ParsedHtmlOfTheControlCharacterRegressionIsSanitizeHtmlsResult) {
  const std::string input(
      "<p tAAAAAAAAAAAAAAitle=\"t\">Hi <a href=\"/x?a=1&amp;b\" .nclick=\"x()\""
      ">\x8f\x96nk</a> <a her\"jf=ava&#x09;script:alert(1)\">js</a> href=\"jav"
      "a&#x08;script:alert(1)\">GGGGGGGGGGjs</a><tf\x00\x00\x00"
      "datetime=\"2n=a>c</td></tr></table><ol start=3><li>x</ol>\n<!-- c --><b"
      "lockquote cite=\"https://q.example/\">q</blockquote><time datetime=\"20"
      "24\">t</time><a href=\"mailtolto:a@b\"><aef=\"https://n/\">nested<\n",
      373);
  ExpectSameAsSanitizeHtml(input);
}

// fuzz/regressions/html_sanitizer_fuzzer/ignored-end-tag-before-an-unknown-tag: gumbo starts the
// original text of <bl\0\0ime> at the "</>" it ignored before it, so the tree named the element
// "></><bl..." and SanitizeParsedHtml dropped the "<>" text its serialization reads back as. Every
// element of it as the fragment, and a name that cannot be written back is parsed again.
TEST(HtmlSanitizerTest, ParsedHtmlOfAnIgnoredEndTagBeforeAnUnknownTagIsSanitizeHtmlsResult) {
  ExpectSameAsSanitizeHtml(std::string("<p>js</><bl\0\0ime></>x</p><p>a<><b>b</b></p>", 43));
  HtmlDocument document = HtmlDocument::Parse(std::string("<div>a<x-y>b</x-y></div>"));
  HtmlNode& body = *document.mutable_root().children[0]->children[1];
  body.children[0]->children[1]->tag = "><x-y";  // as the tree named it before the fix
  std::optional<FragmentCase> div = FirstDiv(document);
  ASSERT_TRUE(div.has_value());
  const SanitizedHtml parsed = SanitizeParsedHtml(div->fragment, div->html, Base());
  EXPECT_EQ(parsed.html, SanitizeHtml(div->html, Base()).html);
  EXPECT_EQ(parsed.html, "a&lt;&gt;b");
  EXPECT_GE(parsed.parses, 1);
}

// Unwrapping and dropping leave a second parse only when what was written might nest differently
// when read back (a heading directly in a heading); otherwise the first pass is the result.
TEST(HtmlSanitizerTest, UnwrappingParsesAgainOnlyWhenTheNestingCouldChange) {
  const SanitizedHtml section = SanitizeHtml("<section><p>x</p><script>y</script></section>", Base());
  EXPECT_EQ(section.html, "<p>x</p>");
  EXPECT_EQ(section.parses, 1);
  const SanitizedHtml headings = SanitizeHtml("<h1><x-foo><h2>t</h2></x-foo></h1>", Base());
  EXPECT_EQ(headings.parses, 2);
  EXPECT_EQ(Sanitize(headings.html), headings.html);
  const SanitizedHtml items = SanitizeHtml("<ul><li>a<nav><li>b</li></nav></li></ul>", Base());
  EXPECT_EQ(items.parses, 2);
  EXPECT_EQ(Sanitize(items.html), items.html);
}

TEST(HtmlSanitizerTest, HtmlThatIsNotTheFragmentsSerializationIsParsed) {
  HtmlDocument document = HtmlDocument::Parse("<!doctype html><div><p>tree</p></div>");
  const std::optional<FragmentCase> div = FirstDiv(document);
  ASSERT_TRUE(div.has_value());
  // Trims longer than the fragment's end texts: not a serialization of it.
  const SanitizedHtml trimmed =
      SanitizeParsedHtml(HtmlFragment{div->fragment.parent, 5, 0}, "<p>text</p>", Base());
  EXPECT_EQ(trimmed.parses, 1);
  EXPECT_EQ(trimmed.html, "<p>text</p>");
  // Longer than the input limit: cut as SanitizeHtml cuts it.
  SanitizeLimits limits;
  limits.max_input_bytes = 6;
  const SanitizedHtml cut = SanitizeParsedHtml(div->fragment, div->html, Base(), limits);
  EXPECT_EQ(cut.html, SanitizeHtml(div->html, Base(), limits).html);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.parses, 1);
}

TEST(HtmlSanitizerTest, ParsedHtmlKeepsTheOutputCap) {
  std::string page = "<!doctype html><div>";
  for (int i = 0; i < 400; ++i) {
    absl::StrAppend(&page, "<p>Paragraph ", i, " <a href=\"https://bob.example/", i,
                    "\">link</a></p>");
  }
  page += "</div>";
  SanitizeLimits limits;
  limits.max_output_bytes = 2000;
  EXPECT_GT(ExpectSameAsSanitizeHtml(page, limits), 0);
}

// Every element of every page of the two generated corpora as the fragment: SanitizeParsedHtml
// gives SanitizeHtml's result, and writes a good share without a parse.
TEST(HtmlSanitizerTest, ParsedHtmlOfGeneratedInputIsSanitizeHtmlsResult) {
  std::mt19937 random(20261202);  // fixed: failures reproduce
  std::uniform_int_distribution<int> length(1, 40);
  int unparsed = 0;
  for (const std::vector<std::string>* pieces : {&HostilePieces(), &AllowedMisnestedPieces()}) {
    std::uniform_int_distribution<size_t> pick(0, pieces->size() - 1);
    for (int round = 0; round < 1500; ++round) {
      std::string input = round % 2 == 0 ? "<!doctype html><div>" : "<div>";
      for (int i = length(random); i > 0; --i) {
        input += (*pieces)[pick(random)];
      }
      unparsed += ExpectSameAsSanitizeHtml(input);
      if (::testing::Test::HasFailure()) {
        return;
      }
    }
  }
  EXPECT_GT(unparsed, 1000);
}

}  // namespace
}  // namespace portcullis::verifier::html
