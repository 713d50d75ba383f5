#pragma once

// Checks a service's config test runs over the settings its binary declares (config::AllSettings,
// common/config/setting.h): every default parses, and a bad value is refused in the same one line
// whether it comes as a flag or from the environment.

#include <cstddef>
#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/config/setting.h"
#include "gtest/gtest.h"

namespace portcullis::config::test_support {

// The binary declares exactly `count` settings (a new one is counted on purpose), and each
// parses its own default.
inline void ExpectEveryDeclaredSettingParsesItsDefault(size_t count) {
  ASSERT_EQ(AllSettings().size(), count);
  for (const SettingBase* setting : AllSettings()) {
    EXPECT_TRUE(setting->Check(setting->default_text()).ok())
        << setting->Name() << ": " << setting->Check(setting->default_text());
  }
}

// A bad value of one setting, as flag `flag` or variable `env`, and the one line refusing it.
struct BadValue {
  const char* flag;
  const char* env;
  const char* value;
  const char* message;
};

// A service's config from a command line and an environment, reduced to its status.
using BuildStatus = std::function<absl::Status(const Texts& command_line, const EnvLookup& env)>;

// Each case is refused with exactly its message: given as the flag on top of `valid` (no
// environment), and given in the environment (`valid` on the command line).
inline void ExpectBadValuesRefusedInOneLine(const Texts& valid, absl::Span<const BadValue> cases,
                                            const BuildStatus& build) {
  for (const BadValue& c : cases) {
    Texts flags = valid;
    flags[c.flag] = c.value;
    EXPECT_EQ(build(flags, NoEnvironment).message(), c.message) << "flag " << c.flag;
    const EnvLookup env = [&c](const char* name) -> const char* {
      return absl::string_view(name) == c.env ? c.value : nullptr;
    };
    EXPECT_EQ(build(valid, env).message(), c.message) << "env " << c.env;
  }
}

}  // namespace portcullis::config::test_support
