#pragma once

namespace portcullis::testing {

// True under CI=true: there, a test that lacks a real part it needs (PostgreSQL, the shared
// conformance data, the npm registry) fails instead of skipping.
bool RunningInCi();

}  // namespace portcullis::testing
