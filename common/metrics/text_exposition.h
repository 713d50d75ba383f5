#pragma once

#include <string>

#include "prometheus/registry.h"

namespace portcullis::metrics {

// The content type of the Prometheus text exposition format.
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Renders every metric in `registry` in the Prometheus text exposition format.
std::string RenderText(const prometheus::Registry& registry);

}  // namespace portcullis::metrics
