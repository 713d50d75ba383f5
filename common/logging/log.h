#pragma once

#include "absl/strings/string_view.h"
#include <utility>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

// The one logging facade. One line per event, to stderr, UTC timestamps, the component name on
// every line. Request-scoped lines start with "request_id=<id>". Never log bodies, fetched
// documents or secrets.
namespace portcullis::logging {

// Sets up the process-wide logger. `level` is one of trace, debug, info, warn, error, off.
absl::Status Init(absl::string_view component, absl::string_view level);

template <typename... Args>
void Debug(spdlog::format_string_t<Args...> format, Args&&... args) {
  spdlog::debug(format, std::forward<Args>(args)...);
}
template <typename... Args>
void Info(spdlog::format_string_t<Args...> format, Args&&... args) {
  spdlog::info(format, std::forward<Args>(args)...);
}
template <typename... Args>
void Warn(spdlog::format_string_t<Args...> format, Args&&... args) {
  spdlog::warn(format, std::forward<Args>(args)...);
}
template <typename... Args>
void Error(spdlog::format_string_t<Args...> format, Args&&... args) {
  spdlog::error(format, std::forward<Args>(args)...);
}

}  // namespace portcullis::logging
