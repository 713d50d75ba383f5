#include "common/config/setting.h"

#include <string>
#include <vector>

#include "absl/flags/marshalling.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

namespace config = portcullis::config;

}  // namespace

// The settings of this test binary, one of each kind.
PORTCULLIS_SETTING(int, test_count, "TEST_COUNT", "3",
                   config::WholeNumber<int>(1, 10, "a whole number from 1 to 10"), "A count.");
PORTCULLIS_SETTING(absl::Duration, test_timeout, "TEST_TIMEOUT", "5s",
                   config::DurationParser(false, "a positive duration"), "A timeout.");
PORTCULLIS_SETTING(bool, test_switch, nullptr, "false", config::AnyBool(), "No variable.");
PORTCULLIS_SETTING(config::PortList, test_ports, "TEST_PORTS", "", config::Ports("a list of ports"),
                   "Ports.");

namespace portcullis::config {
namespace {

TEST(SettingParsersTest, WholeNumbersWithinTheirBounds) {
  const Parser<int> count = WholeNumber<int>(0, 8, "a count");
  EXPECT_EQ(*count("0"), 0);
  EXPECT_EQ(*count(" 8"), 8);
  EXPECT_EQ(count("9").status().message(), "'9' is not a count");
  EXPECT_EQ(count("-1").status().message(), "'-1' is not a count");
  EXPECT_EQ(count("two").status().message(), "'two' is not a count");
  const Parser<int> digits = WholeNumber<int>(0, 8, "digits", /*digits_only=*/true);
  EXPECT_EQ(*digits("7"), 7);
  EXPECT_FALSE(digits("+7").ok());
  EXPECT_FALSE(digits(" 7").ok());
  EXPECT_FALSE(digits("").ok());
}

TEST(SettingParsersTest, DurationsAndChecks) {
  const Parser<absl::Duration> positive = DurationParser(false, "positive");
  EXPECT_EQ(*positive("250ms"), absl::Milliseconds(250));
  for (const char* bad : {"0s", "-1s", "inf", "5", "soon", ""}) {
    EXPECT_EQ(positive(bad).status().message(), absl::StrCat("'", bad, "' is not positive"));
  }
  EXPECT_EQ(*DurationParser(true, "zero or more")("0s"), absl::ZeroDuration());
  const Parser<absl::Duration> bounded =
      positive.Check([](absl::Duration d) { return d <= absl::Hours(1); }, "at most 1h");
  EXPECT_EQ(*bounded("1h"), absl::Hours(1));
  EXPECT_EQ(bounded("2h").status().message(), "'2h' is not at most 1h");
  EXPECT_EQ(bounded("0s").status().message(), "'0s' is not positive");  // The first check first.
}

TEST(SettingParsersTest, TextsAndBooleans) {
  const Parser<std::string> level = OneOf({"info", "off"}, "info or off", /*lowercase=*/true);
  EXPECT_EQ(*level("INFO"), "info");
  EXPECT_EQ(level("loud").status().message(), "'loud' is not info or off");
  EXPECT_FALSE(OneOf({"info"}, "info")("INFO").ok());
  EXPECT_EQ(*AnyText()(" as written "), " as written ");
  EXPECT_TRUE(*TrueOrFalse()("true"));
  EXPECT_FALSE(*TrueOrFalse()("false"));
  EXPECT_EQ(TrueOrFalse()("yes").status().message(), "'yes' is not true or false");
  EXPECT_TRUE(*AnyBool()("yes"));
  EXPECT_FALSE(*AnyBool()("0"));
  EXPECT_FALSE(AnyBool()("maybe").ok());
}

TEST(SettingParsersTest, AddressesPortsAndBlocks) {
  EXPECT_EQ(Listen()("[::1]:0")->ToString(), "[::1]:0");
  EXPECT_EQ(Listen()("nohost").status().message(), "'nohost' is not host:port (missing port)");
  EXPECT_FALSE(OptionalListen()("")->has_value());
  EXPECT_EQ((*OptionalListen()("127.0.0.1:9090"))->port, 9090);
  EXPECT_FALSE(OptionalListen()("nope").ok());
  EXPECT_EQ(Ports("ports")("8080, 8443")->ports, (std::vector<uint16_t>{8080, 8443}));
  EXPECT_TRUE(Ports("ports")("")->ports.empty());
  EXPECT_EQ(Ports("ports")("80,0").status().message(), "'80,0' is not ports");
  EXPECT_EQ(Cidrs()("10.0.0.0/8,::1/128")->cidrs.size(), 2u);
  EXPECT_FALSE(Cidrs()("10.0.0.1/8").ok());
}

TEST(SettingParsersTest, FlagTypesRoundTripThroughAbseil) {
  std::string error;
  PortList ports;
  ASSERT_TRUE(absl::ParseFlag("8080,8443", &ports, &error)) << error;
  EXPECT_EQ(absl::UnparseFlag(ports), "8080,8443");
  EXPECT_FALSE(absl::ParseFlag("http", &ports, &error));
  CidrList cidrs;
  ASSERT_TRUE(absl::ParseFlag("10.0.0.0/8", &cidrs, &error)) << error;
  EXPECT_EQ(absl::UnparseFlag(cidrs), "10.0.0.0/8");
  HostPort listen;
  ASSERT_TRUE(absl::ParseFlag("[::1]:8080", &listen, &error)) << error;
  EXPECT_EQ(absl::UnparseFlag(listen), "[::1]:8080");
  std::optional<HostPort> none;
  ASSERT_TRUE(absl::ParseFlag("", &none, &error)) << error;
  EXPECT_FALSE(none.has_value());
}

TEST(SettingTest, EveryDeclaredSettingIsRegisteredWithItsNames) {
  ASSERT_EQ(AllSettings().size(), 4u);
  EXPECT_EQ(AllSettings()[0]->Name(), "--test_count (TEST_COUNT)");
  EXPECT_EQ(FindSetting("test_switch")->Name(), "--test_switch");
  EXPECT_TRUE(FindSetting("test_switch")->is_bool());
  EXPECT_EQ(FindSetting("nothing"), nullptr);
  for (const SettingBase* setting : AllSettings()) {
    EXPECT_TRUE(setting->Check(setting->default_text()).ok()) << setting->Name();
  }
}

TEST(SettingTest, CommandLineThenEnvironmentThenDefault) {
  ASSERT_TRUE(SetAll({}, NoEnvironment).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 3);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_timeout), absl::Seconds(5));
  const auto env = [](const char* name) -> const char* {
    const absl::string_view n(name);
    return n == "TEST_COUNT" ? "4" : n == "TEST_PORTS" ? "8080" : nullptr;
  };
  ASSERT_TRUE(SetAll({{"test_timeout", "1s"}}, env).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 4);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_timeout), absl::Seconds(1));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_ports).ports, std::vector<uint16_t>{8080});
  ASSERT_TRUE(SetAll({{"test_count", "9"}}, env).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 9);
}

TEST(SettingTest, ABadValueNamesTheFlagAndTheVariable) {
  EXPECT_EQ(SetAll({{"test_count", "11"}}, NoEnvironment).message(),
            "--test_count (TEST_COUNT): '11' is not a whole number from 1 to 10");
  const auto env = [](const char* name) -> const char* {
    return absl::string_view(name) == "TEST_TIMEOUT" ? "0s" : nullptr;
  };
  EXPECT_EQ(SetAll({}, env).message(),
            "--test_timeout (TEST_TIMEOUT): '0s' is not a positive duration");
  EXPECT_EQ(SetAll({{"test_switch", "maybe"}}, NoEnvironment).message(),
            "--test_switch: 'maybe' is not true or false");
  // A check across settings refuses the text that was set.
  ASSERT_TRUE(SetAll({{"test_count", "07"}}, NoEnvironment).ok());
  EXPECT_EQ(FindSetting("test_count")->Refuse("at most --other").message(),
            "--test_count (TEST_COUNT): '07' is not at most --other");
}

std::vector<char*> Argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  return argv;
}

TEST(SettingTest, TheCommandLineIsCheckedBeforeAbseilParsesIt) {
  std::vector<std::string> bad = {"test", "--test-timeout", "soon"};
  std::vector<char*> bad_argv = Argv(bad);
  EXPECT_EQ(ParseCommandLine(static_cast<int>(bad_argv.size()), bad_argv.data()).status().message(),
            "--test_timeout (TEST_TIMEOUT): 'soon' is not a positive duration");

  // Every spelling Abseil takes: =value, a separate value, one dash, dashes, --noflag; nothing
  // after "--".
  std::vector<std::string> args = {"test", "-test_count=4",   "--test-timeout",
                                   "2s",   "--notest_switch", "--test_ports=81",
                                   "--",   "--test_count=x"};
  std::vector<char*> argv = Argv(args);
  const absl::StatusOr<Texts> texts = ParseCommandLine(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(*texts, (Texts{{"test_count", "4"},
                           {"test_ports", "81"},
                           {"test_switch", "false"},
                           {"test_timeout", "2s"}}));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_timeout), absl::Seconds(2));  // Abseil parsed them too.
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 4);
}

}  // namespace
}  // namespace portcullis::config
