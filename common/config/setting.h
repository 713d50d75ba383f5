#pragma once

// Typed settings: every setting of a service is declared once, with its flag name, its real type,
// its environment variable, its default (as text, the way a user would write it) and its
// validation:
//
//   PORTCULLIS_SETTING(int, workers, "WORKERS", "8", config::WholeNumber<int>(0, 256, "..."),
//                      "Verification worker threads (env WORKERS).");
//
// The flag is an ordinary Abseil flag of that type (absl::GetFlag(FLAGS_workers) is an int). Its
// value comes from the command line, else from its environment variable, else from its default,
// and whichever text is used goes through the same parser: a bad value is one line naming the
// flag and the variable ("--workers (WORKERS): '-2' is not a whole number from 0 to 256"), from
// the command line and from the environment alike. Abseil never sees a value we would refuse, so
// it never exits on one with its own message.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/config/listen_address.h"
#include "common/net/cidr.h"

namespace portcullis::config {

// "'<text>' is not <expected>": how a parser refuses a value.
absl::Status NotA(absl::string_view text, absl::string_view expected);

// Text to value, or InvalidArgument with the words that follow the setting's name in its error
// ("'x' is not a whole number from 1 to 8"). Check() adds a validation with its own words.
template <typename T>
class Parser {
 public:
  using Fn = std::function<absl::StatusOr<T>(absl::string_view text)>;

  explicit Parser(Fn parse) : parse_(std::move(parse)) {}

  // This parser, also refusing a value for which `ok` is false: "'<text>' is not <expected>".
  Parser Check(std::function<bool(const T&)> ok, std::string expected) const {
    return Parser([parse = parse_, ok = std::move(ok),
                   expected = std::move(expected)](absl::string_view text) -> absl::StatusOr<T> {
      absl::StatusOr<T> value = parse(text);
      if (value.ok() && !ok(*value)) {
        return NotA(text, expected);
      }
      return value;
    });
  }

  absl::StatusOr<T> operator()(absl::string_view text) const { return parse_(text); }

 private:
  Fn parse_;
};

// Any text, taken as written.
Parser<std::string> AnyText();
// One of `allowed`, compared after lowering the text when `lowercase` (the value is then lowered).
Parser<std::string> OneOf(std::vector<std::string> allowed, std::string expected,
                          bool lowercase = false);
// "true" or "false" only.
Parser<bool> TrueOrFalse();
// Whatever Abseil accepts for a bool flag (true/false, yes/no, 1/0, ...).
Parser<bool> AnyBool();
// A finite duration such as 5s or 250ms, not negative, zero only when `allow_zero`.
Parser<absl::Duration> DurationParser(bool allow_zero, std::string expected);
// A host:port to listen on; port 0 picks one.
Parser<HostPort> Listen();
// Like Listen(); empty: none.
Parser<std::optional<HostPort>> OptionalListen();

// An integer from `min` to `max` as T; `digits_only` also refuses a sign or surrounding spaces.
template <typename T>
Parser<T> WholeNumber(int64_t min, int64_t max, std::string expected, bool digits_only = false) {
  return Parser<T>([=](absl::string_view text) -> absl::StatusOr<T> {
    int64_t value = 0;
    if ((digits_only &&
         (text.empty() || text.find_first_not_of("0123456789") != absl::string_view::npos)) ||
        !absl::SimpleAtoi(text, &value) || value < min || value > max) {
      return NotA(text, expected);
    }
    return static_cast<T>(value);
  });
}

// Ports separated by commas or spaces, each from 1 to 65535 (a flag type: Abseil parses it).
struct PortList {
  std::vector<uint16_t> ports;
};
bool AbslParseFlag(absl::string_view text, PortList* list, std::string* error);
std::string AbslUnparseFlag(const PortList& list);
Parser<PortList> Ports(std::string expected);

// CIDR blocks separated by commas (net::Cidr::ParseList; a flag type).
struct CidrList {
  std::vector<net::Cidr> cidrs;
};
bool AbslParseFlag(absl::string_view text, CidrList* list, std::string* error);
std::string AbslUnparseFlag(const CidrList& list);
Parser<CidrList> Cidrs();

// The flag names and texts given on a command line; and where environment variables are read
// (std::getenv; tests pass their own).
using Texts = std::map<std::string, std::string, std::less<>>;
using EnvLookup = std::function<const char*(const char* name)>;

// One declared setting, whatever its type. Settings register themselves when constructed (at
// static initialization, by PORTCULLIS_SETTING) and live as long as the program.
class SettingBase {
 public:
  SettingBase(const char* flag, const char* env, const char* default_text, bool is_bool);
  SettingBase(const SettingBase&) = delete;
  SettingBase& operator=(const SettingBase&) = delete;
  virtual ~SettingBase() = default;

  const char* flag() const { return flag_; }
  // Null for a command-line-only setting.
  const char* env() const { return env_; }
  const char* default_text() const { return default_text_; }
  bool is_bool() const { return is_bool_; }
  // "--flag (ENV)", or "--flag" without a variable: how errors name the setting.
  std::string Name() const;

  // Whether `text` is a valid value; the one-line error naming the setting otherwise.
  virtual absl::Status Check(absl::string_view text) const = 0;
  // Check(), then sets the flag to the value.
  virtual absl::Status Set(absl::string_view text) const = 0;

  // For a check across settings, made after Set(): "--flag (ENV): '<text set>' is not <expected>".
  absl::Status Refuse(absl::string_view expected) const;

 protected:
  mutable std::string text_;  // What Set() was last given.

 private:
  const char* flag_;
  const char* env_;
  const char* default_text_;
  bool is_bool_;
};

template <typename T>
class Setting final : public SettingBase {
 public:
  Setting(absl::Flag<T>& flag, const char* name, const char* env, const char* default_text,
          Parser<T> parser)
      : SettingBase(name, env, default_text, std::is_same_v<T, bool>),
        flag_(flag),
        parser_(std::move(parser)) {}

  absl::Status Check(absl::string_view text) const override { return Parse(text).status(); }
  absl::Status Set(absl::string_view text) const override {
    absl::StatusOr<T> value = Parse(text);
    if (value.ok()) {
      text_ = std::string(text);
      absl::SetFlag(&flag_, *std::move(value));
    }
    return value.status();
  }

 private:
  absl::StatusOr<T> Parse(absl::string_view text) const {
    absl::StatusOr<T> value = parser_(text);
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": ", value.status().message()));
    }
    return value;
  }

  absl::Flag<T>& flag_;
  Parser<T> parser_;
};

// The default of a setting's Abseil flag (what --help shows): its default text parsed, or T{}
// when it does not parse (SetAll() then reports it, like any bad value).
template <typename T>
T DefaultOf(const Parser<T>& parser, absl::string_view text) {
  absl::StatusOr<T> value = parser(text);
  return value.ok() ? *std::move(value) : T{};
}

// Every setting of this program, in the order they were declared.
const std::vector<const SettingBase*>& AllSettings();
// The setting of flag `name`; null if none.
const SettingBase* FindSetting(absl::string_view name);

// The command line of a program whose flags are settings: accepts dashed flag names
// (flag_spelling.h), checks every setting given on it (the first bad one: its one-line error),
// then lets Abseil parse it (--help, unknown flags, plain flags). The settings' texts as given,
// by flag name, for SetAll().
absl::StatusOr<Texts> ParseCommandLine(int argc, char** argv);

// An environment without variables: for tests, so that only what they give counts.
const char* NoEnvironment(const char* name);

// Sets every setting from `command_line` when it is there, else from its environment variable
// when set, else from its default; the first bad value's one-line error.
absl::Status SetAll(const Texts& command_line, const EnvLookup& env = &std::getenv);

}  // namespace portcullis::config

// Declares setting `name` (see the top of this file): an ABSL_FLAG(type, name, ...) whose value is
// also read from environment variable `env` (a string literal, or nullptr for none), with
// `default_text` parsed by `parser`.
#define PORTCULLIS_SETTING(type, name, env, default_text, parser, help)                     \
  ABSL_FLAG(type, name, ::portcullis::config::DefaultOf<type>(parser, default_text), help); \
  static const ::portcullis::config::Setting<type> portcullis_setting_##name(               \
      FLAGS_##name, #name, env, default_text, parser)
