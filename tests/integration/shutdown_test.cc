// SIGTERM while senders keep sending: every sender that got a 202 has its row.
#include <signal.h>

#include <atomic>
#include <boost/json.hpp>
#include <mutex>
#include <pqxx/pqxx>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

// Senders posting distinct pairs until told to stop, bounded in count and time.
class SenderLoad {
 public:
  SenderLoad(const Stack& stack, int senders) {
    for (int sender = 0; sender < senders; ++sender) {
      threads_.emplace_back([this, &stack, sender] {
        const absl::Time deadline = absl::Now() + absl::Seconds(30);
        for (int i = 0; i < 2000 && !stop_ && absl::Now() < deadline; ++i) {
          const testing::HttpResult result = stack.PostWebmention(
              absl::StrCat("https://sender", sender, ".example/post/", i),
              "https://receiver.example/");
          std::lock_guard<std::mutex> lock(mutex_);
          ++sent_;
          if (result.status == 202) {
            accepted_ids_.push_back(
                std::string(boost::json::parse(result.body).at("mention_id").as_string()));
          } else if (result.status != 503 && result.status != 0) {
            unexpected_.push_back(absl::StrCat(result.status, " ", result.body));
          }
        }
      });
    }
  }

  void WaitForAccepted(size_t count, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (accepted_ids_.size() >= count) {
          return;
        }
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
  }

  void Stop() {
    stop_ = true;
    for (std::thread& thread : threads_) {
      thread.join();
    }
    threads_.clear();
  }

  ~SenderLoad() { Stop(); }

  std::vector<std::string> accepted_ids() {
    std::lock_guard<std::mutex> lock(mutex_);
    return accepted_ids_;
  }
  std::vector<std::string> unexpected() {
    std::lock_guard<std::mutex> lock(mutex_);
    return unexpected_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  int sent_ = 0;
  std::vector<std::string> accepted_ids_;
  std::vector<std::string> unexpected_;
  std::vector<std::thread> threads_;
};

// How many of `ids` have no row in mentions.
size_t MissingRows(const testing::TestDatabase& database, const std::vector<std::string>& ids) {
  pqxx::connection connection(database.connection_string());
  pqxx::nontransaction work(connection);
  size_t missing = 0;
  for (const std::string& id : ids) {
    if (work.exec_params1("SELECT count(*) FROM mentions WHERE id = $1::uuid", id)[0]
            .as<int>() != 1) {
      ++missing;
    }
  }
  return missing;
}

using ShutdownTest = StackTest;

TEST_F(ShutdownTest, GatewaySigtermDuringLoadLosesNoAcceptedMention) {
  ASSERT_TRUE(stack_->ServeTarget("https://receiver.example/").ok());
  SenderLoad load(*stack_, 8);
  load.WaitForAccepted(50, absl::Seconds(20));
  stack_->gateway().Signal(SIGTERM);
  const absl::StatusOr<int> exit_code = stack_->gateway().Wait(absl::Seconds(20));
  load.Stop();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);

  const std::vector<std::string> accepted = load.accepted_ids();
  EXPECT_GE(accepted.size(), 50u);
  EXPECT_EQ(MissingRows(*database_, accepted), 0u) << "of " << accepted.size() << " accepted";
  EXPECT_TRUE(load.unexpected().empty()) << load.unexpected().front();
}

TEST_F(ShutdownTest, VerifierSigtermDuringLoadLosesNoAcceptedMention) {
  ASSERT_TRUE(stack_->ServeTarget("https://receiver.example/").ok());
  SenderLoad load(*stack_, 8);
  load.WaitForAccepted(50, absl::Seconds(20));
  stack_->verifier().Signal(SIGTERM);
  const absl::StatusOr<int> exit_code = stack_->verifier().Wait(absl::Seconds(20));
  absl::SleepFor(absl::Milliseconds(300));  // Senders keep sending to a gateway without verifier.
  load.Stop();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);

  const std::vector<std::string> accepted = load.accepted_ids();
  EXPECT_GE(accepted.size(), 50u);
  EXPECT_EQ(MissingRows(*database_, accepted), 0u) << "of " << accepted.size() << " accepted";
  // With the verifier gone the gateway answers 503 (counted as expected), never 5xx otherwise.
  EXPECT_TRUE(load.unexpected().empty()) << load.unexpected().front();
}

}  // namespace
}  // namespace portcullis::integration
