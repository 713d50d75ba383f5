#pragma once

// Reading a Prometheus text scrape in the integration tests, and promtool's verdict on it.
#include <string>

#include "absl/strings/string_view.h"

namespace portcullis::integration {

// Sum of every sample of `metric` whose label set contains each of `label_matchers` (such as
// `method="/portcullis.verifier.v1.Verifier/SubmitMention"`); 0 when there is none.
double SumSamples(absl::string_view scrape, absl::string_view metric,
                  std::initializer_list<absl::string_view> label_matchers = {});

// Runs `$PORTCULLIS_PROMTOOL check metrics` on `scrape`. Returns "" when it passes, else its
// report. Sets `skipped` (and returns "") when PORTCULLIS_PROMTOOL is unset.
std::string PromtoolCheck(const std::string& scrape, bool* skipped);

}  // namespace portcullis::integration
