#include "ingest-gateway/src/http/http_message.h"

#include <string>
#include <utility>
#include <vector>

#include "boost/json/parse.hpp"
#include "gtest/gtest.h"

namespace portcullis::gateway::http {
namespace {

TEST(GatewayHttpMessageTest, HeaderLookupIgnoresCase) {
  HeaderMap headers;
  headers.Add("Content-Type", "text/plain");
  headers.Add("X-Dup", "1");
  headers.Add("x-dup", "2");
  EXPECT_EQ(headers.Get("content-type"), "text/plain");
  EXPECT_EQ(headers.Get("X-DUP"), "1");
  EXPECT_FALSE(headers.Get("missing").has_value());
  headers.Set("X-DUP", "3");
  EXPECT_EQ(headers.Get("x-dup"), "3");
  EXPECT_EQ(headers.fields().size(), 2u);
}

// Fields live in one buffer: a copied or moved map (short values, kept inside the string
// itself) must still read its own fields.
TEST(GatewayHttpMessageTest, CopiedAndMovedMapsKeepTheirFields) {
  HeaderMap original;
  original.Add("A", "1");
  original.Add("Content-Type", "text/plain");
  HeaderMap copy = original;
  original.Set("A", "changed");
  HeaderMap moved = std::move(copy);
  EXPECT_EQ(moved.Get("a"), "1");
  EXPECT_EQ(moved.Get("content-type"), "text/plain");
  EXPECT_EQ(original.Get("A"), "changed");
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& [name, value] : moved.fields()) {
    fields.emplace_back(name, value);
  }
  EXPECT_EQ(fields, (std::vector<std::pair<std::string, std::string>>{
                        {"A", "1"}, {"Content-Type", "text/plain"}}));
}

TEST(GatewayHttpMessageTest, JsonErrorEscapes) {
  const HttpResponse response = JsonError(400, "bad\"code", "line\nbreak <tag>");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/json");
  const boost::json::value body = boost::json::parse(response.body);
  EXPECT_EQ(body.at("error").as_string(), "bad\"code");
  EXPECT_EQ(body.at("error_description").as_string(), "line\nbreak <tag>");
}

TEST(GatewayHttpMessageTest, RequestIdAcceptance) {
  EXPECT_TRUE(IsAcceptableRequestId("abc-DEF_1.2"));
  EXPECT_TRUE(IsAcceptableRequestId(std::string(64, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId(std::string(65, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId(""));
  EXPECT_FALSE(IsAcceptableRequestId("a b"));
  EXPECT_FALSE(IsAcceptableRequestId("a\r\nb"));
  EXPECT_FALSE(IsAcceptableRequestId("é"));
}

}  // namespace
}  // namespace portcullis::gateway::http
