#include "common/logging/log.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace portcullis::logging {

absl::Status Init(absl::string_view component, absl::string_view level) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str answers "off" for anything it does not know; only accept "off" when asked for it.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level '", level, "' (trace, debug, info, warn, error, off)"));
  }
  auto logger = std::make_shared<spdlog::logger>(
      std::string(component), std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%Y-%m-%dT%H:%M:%S.%eZ %l %n %v", spdlog::pattern_time_type::utc));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return absl::OkStatus();
}

}  // namespace portcullis::logging
