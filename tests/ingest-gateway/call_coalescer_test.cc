#include "ingest-gateway/src/call_coalescer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::ElementsAre;

// Requests and responses are strings; a call answers each item with "<item>!".
using StringCoalescer = CallCoalescer<std::string, std::string>;

// Holds every call sent until the test answers it.
class CoalescerHeldCalls {
 public:
  struct Sent {
    std::vector<std::string> requests;
    std::vector<std::string> request_ids;
    absl::Time deadline;
    StringCoalescer::CallDone done;
  };

  StringCoalescer::SendCall Sender() {
    return [this](const std::vector<StringCoalescer::Item>& items, absl::Time deadline,
                  StringCoalescer::CallDone done) {
      Sent sent;
      for (const StringCoalescer::Item& item : items) {
        sent.requests.push_back(item.request);
        sent.request_ids.push_back(item.request_id);
      }
      sent.deadline = deadline;
      sent.done = std::move(done);
      calls.push_back(std::move(sent));
    };
  }

  // CoalescerAnswers call `i` as a verifier answers each of its items.
  void Answer(size_t i) {
    std::vector<absl::StatusOr<std::string>> results;
    for (const std::string& request : calls[i].requests) {
      if (request == "refused") {
        results.push_back(absl::ResourceExhaustedError("over the limit"));
      } else {
        results.push_back(request + "!");
      }
    }
    std::move(calls[i].done)(std::move(results));
  }

  std::vector<Sent> calls;
};

// Every answer an item got, by request.
struct CoalescerAnswers {
  StringCoalescer::Callback For(std::string request) {
    return [this, request](absl::StatusOr<std::string> answer) {
      got.emplace_back(request, std::move(answer));
    };
  }
  std::vector<std::pair<std::string, absl::StatusOr<std::string>>> got;
};

class GatewayCallCoalescerTest : public ::testing::Test {
 protected:
  std::unique_ptr<StringCoalescer> Make(CallCoalescerOptions options = {}) {
    return std::make_unique<StringCoalescer>(
        options, held_.Sender(), [](const std::string& request) { return request.size(); },
        [this] { return now_; });
  }
  void Add(StringCoalescer& coalescer, const std::string& request,
           absl::Duration timeout = absl::Seconds(2)) {
    coalescer.Add(absl::StrCat("id-", request), request, now_ + timeout, answers_.For(request));
  }

  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  CoalescerHeldCalls held_;
  CoalescerAnswers answers_;
};

TEST_F(GatewayCallCoalescerTest, AnItemOnAnIdleClientIsSentAtOnceAlone) {
  auto coalescer = Make({.max_calls_in_flight = 1});
  Add(*coalescer, "a");
  ASSERT_EQ(held_.calls.size(), 1u) << "no waiting for company when nothing is in flight";
  EXPECT_THAT(held_.calls[0].requests, ElementsAre("a"));
  EXPECT_THAT(held_.calls[0].request_ids, ElementsAre("id-a"));
  EXPECT_EQ(held_.calls[0].deadline, now_ + absl::Seconds(2));
  held_.Answer(0);
  ASSERT_EQ(answers_.got.size(), 1u);
  EXPECT_EQ(*answers_.got[0].second, "a!");
  EXPECT_EQ(coalescer->in_flight(), 0);
}

TEST_F(GatewayCallCoalescerTest, ItemsArrivingWhileCallsAreInFlightGoTogetherWhenOneReturns) {
  auto coalescer = Make({.max_calls_in_flight = 2});
  Add(*coalescer, "a");
  Add(*coalescer, "b");
  ASSERT_EQ(held_.calls.size(), 2u) << "up to the cap, each item is a call of its own";
  for (const char* request : {"c", "d", "refused", "e"}) {
    Add(*coalescer, request);
  }
  EXPECT_EQ(held_.calls.size(), 2u) << "at the cap, items wait";
  EXPECT_TRUE(answers_.got.empty());

  held_.Answer(1);  // "b" returns: everything waiting goes out as one call.
  ASSERT_EQ(held_.calls.size(), 3u);
  EXPECT_THAT(held_.calls[2].requests, ElementsAre("c", "d", "refused", "e"));
  ASSERT_EQ(answers_.got.size(), 1u);
  EXPECT_EQ(answers_.got[0].first, "b");

  held_.Answer(2);
  held_.Answer(0);
  ASSERT_EQ(answers_.got.size(), 6u);
  for (const auto& [request, answer] : answers_.got) {
    if (request == "refused") {
      EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted)
          << "a per-item refusal stays that item's";
    } else {
      ASSERT_TRUE(answer.ok()) << request << ": " << answer.status();
      EXPECT_EQ(*answer, request + "!") << "each item gets its own answer";
    }
  }
  EXPECT_EQ(coalescer->in_flight(), 0);
  EXPECT_EQ(coalescer->calls(), 3);
  EXPECT_EQ(coalescer->items(), 6);
}

TEST_F(GatewayCallCoalescerTest, ACallCarriesAtMostTheItemCapAndTheByteCapButALargeItemGoesAlone) {
  auto coalescer =
      Make({.max_calls_in_flight = 1, .max_items_per_call = 3, .max_bytes_per_call = 10});
  Add(*coalescer, "first");
  for (const char* request : {"1", "2", "3", "4", "0123456789abcdef", "5"}) {
    Add(*coalescer, request);
  }
  held_.Answer(0);
  ASSERT_EQ(held_.calls.size(), 2u);
  EXPECT_THAT(held_.calls[1].requests, ElementsAre("1", "2", "3"));
  held_.Answer(1);
  ASSERT_EQ(held_.calls.size(), 3u);
  EXPECT_THAT(held_.calls[2].requests, ElementsAre("4")) << "the next item would pass 10 bytes";
  held_.Answer(2);
  ASSERT_EQ(held_.calls.size(), 4u);
  EXPECT_THAT(held_.calls[3].requests, ElementsAre("0123456789abcdef"));
  held_.Answer(3);
  ASSERT_EQ(held_.calls.size(), 5u);
  EXPECT_THAT(held_.calls[4].requests, ElementsAre("5"));
  held_.Answer(4);
  EXPECT_EQ(answers_.got.size(), 7u);
  EXPECT_EQ(coalescer->in_flight(), 0);
}

TEST_F(GatewayCallCoalescerTest, AFailedCallFailsEachOfItsItemsWithTheCallsStatus) {
  auto coalescer = Make({.max_calls_in_flight = 1});
  Add(*coalescer, "a");
  Add(*coalescer, "b");
  Add(*coalescer, "c");
  held_.Answer(0);
  ASSERT_EQ(held_.calls.size(), 2u);
  std::move(held_.calls[1].done)(absl::UnavailableError("verifier unavailable"));
  ASSERT_EQ(answers_.got.size(), 3u);
  EXPECT_EQ(answers_.got[1].first, "b");
  EXPECT_EQ(answers_.got[1].second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(answers_.got[2].first, "c");
  EXPECT_EQ(answers_.got[2].second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(coalescer->in_flight(), 0);
}

TEST_F(GatewayCallCoalescerTest, WrongResultCountFailsEveryItemRatherThanMisdirectingAnswers) {
  auto coalescer = Make({.max_calls_in_flight = 1});
  Add(*coalescer, "a");
  std::vector<absl::StatusOr<std::string>> two = {std::string("x"), std::string("y")};
  std::move(held_.calls[0].done)(std::move(two));
  ASSERT_EQ(answers_.got.size(), 1u);
  EXPECT_EQ(answers_.got[0].second.status().code(), absl::StatusCode::kInternal);
}

TEST_F(GatewayCallCoalescerTest, EachItemKeepsItsDeadline) {
  auto coalescer = Make({.max_calls_in_flight = 1});
  Add(*coalescer, "a", absl::Seconds(2));
  Add(*coalescer, "late", absl::Seconds(2));    // Waits; its deadline passes meanwhile.
  now_ += absl::Seconds(1);
  Add(*coalescer, "b", absl::Seconds(5));       // Deadline now + 5 s.
  Add(*coalescer, "c", absl::Milliseconds(1500));  // The earliest of those still waiting.
  now_ += absl::Seconds(1);                     // "late" expires (2 s after it came).
  held_.Answer(0);
  ASSERT_EQ(held_.calls.size(), 2u);
  EXPECT_THAT(held_.calls[1].requests, ElementsAre("b", "c"));
  EXPECT_EQ(held_.calls[1].deadline, now_ - absl::Seconds(1) + absl::Milliseconds(1500))
      << "a call's deadline is the earliest of its items'";
  ASSERT_EQ(answers_.got.size(), 2u);
  EXPECT_EQ(answers_.got[0].first, "late");
  EXPECT_EQ(answers_.got[0].second.status().code(), absl::StatusCode::kDeadlineExceeded)
      << "answered without being sent";
  EXPECT_EQ(answers_.got[1].first, "a");
  held_.Answer(1);
  EXPECT_EQ(answers_.got.size(), 4u);
  EXPECT_EQ(coalescer->in_flight(), 0);
}

}  // namespace
}  // namespace portcullis::gateway
