#include "verifier-service/src/html/mf2_json.h"

#include <string>
#include <vector>

#include "boost/json/parse.hpp"
#include "gtest/gtest.h"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;

TEST(Mf2JsonTest, ReadsValuesOfEveryShapeAndToleratesMalformedJson) {
  const json::object mf2 = json::parse(R"({
    "items": [
      {"type": ["h-entry"], "properties": {
         "name": ["Title"], "content": [{"value": "text", "html": "<b>text</b>"}],
         "photo": [{"value": "http://a.example/p.jpg", "alt": "me"}], "bad": "not an array",
         "author": [{"type": ["h-card"], "properties": {"name": ["Al"]}, "value": "Al"}]},
       "children": [{"type": ["h-card"], "properties": {}}]},
      "not an object",
      {"type": "h-feed", "properties": []}
    ],
    "rels": {"me": ["http://a.example/", 7]}
  })")
                               .as_object();
  const json::object& entry = TopLevelItems(mf2).at(0).as_object();
  EXPECT_TRUE(HasMicroformatType(entry, "h-entry"));
  EXPECT_FALSE(HasMicroformatType(entry, "h-card"));
  EXPECT_EQ(FirstPropertyText(entry, "name"), "Title");
  EXPECT_EQ(FirstPropertyText(entry, "content"), "text");
  EXPECT_EQ(FirstPropertyText(entry, "photo"), "http://a.example/p.jpg");
  EXPECT_EQ(FirstPropertyText(entry, "author"), "Al");
  EXPECT_EQ(FirstPropertyText(entry, "bad"), "");
  EXPECT_EQ(FirstPropertyText(entry, "missing"), "");
  const json::object& feed = TopLevelItems(mf2).at(2).as_object();
  EXPECT_FALSE(HasMicroformatType(feed, "h-feed"));  // "type" is not an array
  EXPECT_TRUE(PropertyValues(feed, "name").empty());
  EXPECT_EQ(RelUrls(mf2, "me"), std::vector<std::string>{"http://a.example/"});
  EXPECT_TRUE(RelUrls(mf2, "author").empty());
  EXPECT_TRUE(TopLevelItems(json::object()).empty());
}

TEST(Mf2JsonTest, VisitsItemsAndChildrenInDocumentOrder) {
  const json::object mf2 = json::parse(R"({"items": [
      {"type": ["h-a"], "children": [{"type": ["h-b"], "children": [{"type": ["h-c"]}]}]},
      {"type": ["h-d"], "properties": {"p": [{"type": ["h-not-visited"]}]}}]})")
                               .as_object();
  std::vector<std::string> order;
  VisitItems(mf2, [&](const json::object& item) {
    order.emplace_back(item.at("type").at(0).as_string());
    return true;
  });
  EXPECT_EQ(order, (std::vector<std::string>{"h-a", "h-b", "h-c", "h-d"}));
  order.clear();
  VisitItems(mf2, [&](const json::object& item) {
    order.emplace_back(item.at("type").at(0).as_string());
    return order.size() < 2;
  });
  EXPECT_EQ(order.size(), 2u);
}

TEST(Mf2JsonTest, DeeplyNestedChildrenDoNotOverflowTheStack) {
  std::string text = R"({"items": [)";
  for (int i = 0; i < 5000; ++i) {
    text += R"({"type": ["h-x"], "children": [)";
  }
  for (int i = 0; i < 5000; ++i) {
    text += "]}";
  }
  text += "]}";
  json::parse_options options;
  options.max_depth = 20000;
  const json::object mf2 = json::parse(text, {}, options).as_object();
  int visited = 0;
  VisitItems(mf2, [&](const json::object&) {
    ++visited;
    return true;
  });
  EXPECT_GT(visited, 100);
  EXPECT_LE(visited, 601);
}

TEST(Mf2JsonTest, UrlHelpers) {
  EXPECT_FALSE(AbsoluteHttpUrl("/relative").has_value());
  EXPECT_FALSE(AbsoluteHttpUrl("javascript:alert(1)").has_value());
  const std::optional<url::Url> url = AbsoluteHttpUrl("HTTP://Example.COM/a#frag");
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(HrefWithoutFragment(*url), "http://example.com/a");
}

}  // namespace
}  // namespace portcullis::verifier::html
