#include "common/metrics/text_exposition.h"

#include "prometheus/text_serializer.h"

namespace portcullis::metrics {

std::string RenderText(const prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

}  // namespace portcullis::metrics
