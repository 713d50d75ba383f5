#include "common/config/setting.h"

#include <algorithm>
#include <cstring>

#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/config/flag_spelling.h"

namespace portcullis::config {
namespace {

std::vector<const SettingBase*>& Registry() {
  static auto* settings = new std::vector<const SettingBase*>();
  return *settings;
}

// The ports of `text`, or nothing when one is not a number from 1 to 65535.
std::optional<PortList> SplitPorts(absl::string_view text) {
  PortList list;
  for (absl::string_view port : absl::StrSplit(text, absl::ByAnyChar(", "), absl::SkipEmpty())) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(port, &value) || value < 1 || value > 65535) {
      return std::nullopt;
    }
    list.ports.push_back(static_cast<uint16_t>(value));
  }
  return list;
}

}  // namespace

absl::Status NotA(absl::string_view text, absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not ", expected));
}

Parser<std::string> AnyText() {
  return Parser<std::string>([](absl::string_view text) { return std::string(text); });
}

Parser<std::string> OneOf(std::vector<std::string> allowed, std::string expected, bool lowercase) {
  return Parser<std::string>([=](absl::string_view text) -> absl::StatusOr<std::string> {
    const std::string value = lowercase ? absl::AsciiStrToLower(text) : std::string(text);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      return NotA(text, expected);
    }
    return value;
  });
}

Parser<bool> TrueOrFalse() {
  return Parser<bool>([](absl::string_view text) -> absl::StatusOr<bool> {
    if (text == "true" || text == "false") {
      return text == "true";
    }
    return NotA(text, "true or false");
  });
}

Parser<bool> AnyBool() {
  return Parser<bool>([](absl::string_view text) -> absl::StatusOr<bool> {
    bool value = false;
    std::string error;
    if (!absl::ParseFlag(text, &value, &error)) {
      return NotA(text, "true or false");
    }
    return value;
  });
}

Parser<absl::Duration> DurationParser(bool allow_zero, std::string expected) {
  return Parser<absl::Duration>([=](absl::string_view text) -> absl::StatusOr<absl::Duration> {
    absl::Duration value;
    if (!absl::ParseDuration(text, &value) || value < absl::ZeroDuration() ||
        (value == absl::ZeroDuration() && !allow_zero) || value == absl::InfiniteDuration()) {
      return NotA(text, expected);
    }
    return value;
  });
}

Parser<HostPort> Listen() {
  return Parser<HostPort>(
      [](absl::string_view text) { return ParseHostPort(text, /*allow_port_zero=*/true); });
}

Parser<std::optional<HostPort>> OptionalListen() {
  return Parser<std::optional<HostPort>>(
      [](absl::string_view text) -> absl::StatusOr<std::optional<HostPort>> {
        if (text.empty()) {
          return std::optional<HostPort>();
        }
        absl::StatusOr<HostPort> listen = ParseHostPort(text, /*allow_port_zero=*/true);
        if (!listen.ok()) {
          return listen.status();
        }
        return std::optional<HostPort>(*std::move(listen));
      });
}

bool AbslParseFlag(absl::string_view text, PortList* list, std::string* error) {
  std::optional<PortList> parsed = SplitPorts(text);
  if (!parsed.has_value()) {
    *error = "not a list of ports from 1 to 65535";
    return false;
  }
  *list = *std::move(parsed);
  return true;
}

std::string AbslUnparseFlag(const PortList& list) { return absl::StrJoin(list.ports, ","); }

Parser<PortList> Ports(std::string expected) {
  return Parser<PortList>([=](absl::string_view text) -> absl::StatusOr<PortList> {
    std::optional<PortList> parsed = SplitPorts(text);
    if (!parsed.has_value()) {
      return NotA(text, expected);
    }
    return *std::move(parsed);
  });
}

bool AbslParseFlag(absl::string_view text, CidrList* list, std::string* error) {
  absl::StatusOr<std::vector<net::Cidr>> cidrs = net::Cidr::ParseList(text);
  if (!cidrs.ok()) {
    *error = std::string(cidrs.status().message());
    return false;
  }
  list->cidrs = *std::move(cidrs);
  return true;
}

std::string AbslUnparseFlag(const CidrList& list) {
  return absl::StrJoin(list.cidrs, ",", [](std::string* out, const net::Cidr& cidr) {
    out->append(cidr.ToString());
  });
}

Parser<CidrList> Cidrs() {
  return Parser<CidrList>([](absl::string_view text) -> absl::StatusOr<CidrList> {
    absl::StatusOr<std::vector<net::Cidr>> cidrs = net::Cidr::ParseList(text);
    if (!cidrs.ok()) {
      return cidrs.status();
    }
    return CidrList{*std::move(cidrs)};
  });
}

SettingBase::SettingBase(const char* flag, const char* env, const char* default_text, bool is_bool)
    : flag_(flag), env_(env), default_text_(default_text), is_bool_(is_bool) {
  Registry().push_back(this);
}

std::string SettingBase::Name() const {
  return env_ == nullptr ? absl::StrCat("--", flag_) : absl::StrCat("--", flag_, " (", env_, ")");
}

absl::Status SettingBase::Refuse(absl::string_view expected) const {
  return absl::InvalidArgumentError(absl::StrCat(Name(), ": ", NotA(text_, expected).message()));
}

const std::vector<const SettingBase*>& AllSettings() { return Registry(); }

const SettingBase* FindSetting(absl::string_view name) {
  for (const SettingBase* setting : Registry()) {
    if (setting->flag() == name) {
      return setting;
    }
  }
  return nullptr;
}

absl::StatusOr<Texts> ParseCommandLine(int argc, char** argv) {
  AcceptDashedFlagNames(argc, argv);
  // The texts Abseil will parse, found the way it finds them: -name=value or --name=value, a
  // non-bool flag's value as the next argument, a bare bool flag (true) or --noname (false);
  // everything else is Abseil's to judge.
  Texts texts;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      continue;
    }
    absl::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<absl::string_view> value;
    if (const size_t equals = name.find('='); equals != absl::string_view::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    const SettingBase* setting = FindSetting(name);
    if (setting == nullptr && !value.has_value() && absl::ConsumePrefix(&name, "no")) {
      setting = FindSetting(name);
      if (setting != nullptr && setting->is_bool()) {
        value = "false";
      } else {
        continue;
      }
    }
    if (setting == nullptr) {
      continue;
    }
    if (!value.has_value()) {
      if (setting->is_bool()) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        continue;  // Abseil says the value is missing.
      }
    }
    texts[std::string(name)] = std::string(*value);
  }
  for (const auto& [name, text] : texts) {
    if (absl::Status status = FindSetting(name)->Check(text); !status.ok()) {
      return status;
    }
  }
  absl::ParseCommandLine(argc, argv);
  return texts;
}

const char* NoEnvironment(const char*) { return nullptr; }

absl::Status SetAll(const Texts& command_line, const EnvLookup& env) {
  for (const SettingBase* setting : Registry()) {
    const char* from_env = setting->env() != nullptr ? env(setting->env()) : nullptr;
    const auto given = command_line.find(setting->flag());
    const absl::string_view text = given != command_line.end() ? absl::string_view(given->second)
                                   : from_env != nullptr       ? absl::string_view(from_env)
                                                               : setting->default_text();
    if (absl::Status status = setting->Set(text); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace portcullis::config
