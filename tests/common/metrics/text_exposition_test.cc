#include "common/metrics/text_exposition.h"

#include "gtest/gtest.h"
#include "prometheus/counter.h"

namespace portcullis::metrics {
namespace {

TEST(RenderTextTest, RendersCountersWithHelpTypeAndLabels) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter()
                     .Name("portcullis_test_events_total")
                     .Help("Events seen.")
                     .Register(registry);
  family.Add({{"route", "/webmention"}}).Increment(3);
  const std::string text = RenderText(registry);
  EXPECT_NE(text.find("# HELP portcullis_test_events_total Events seen."), std::string::npos);
  EXPECT_NE(text.find("# TYPE portcullis_test_events_total counter"), std::string::npos);
  EXPECT_NE(text.find("portcullis_test_events_total{route=\"/webmention\"} 3"), std::string::npos);
}

}  // namespace
}  // namespace portcullis::metrics
