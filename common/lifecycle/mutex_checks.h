#pragma once

namespace portcullis::lifecycle {

// Debian builds Abseil without NDEBUG, so every absl::Mutex::Lock also runs Abseil's lock-order
// (deadlock) checker: a lookup in one process-wide graph under one process-wide lock, ~5% of the
// gateway's instructions per webmention. Each service's main turns it off, once at startup; tests
// keep it, which is where a lock-order cycle should be caught.
void SkipMutexDeadlockChecks();

}  // namespace portcullis::lifecycle
