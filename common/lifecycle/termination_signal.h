#pragma once

namespace portcullis::lifecycle {

// Blocks SIGTERM and SIGINT in the calling thread and in every thread it starts afterwards. Call
// first thing in main(), before any thread exists, then wait with WaitForTerminationSignal().
void BlockTerminationSignals();

// Waits until SIGTERM or SIGINT arrives; returns the signal number.
int WaitForTerminationSignal();

}  // namespace portcullis::lifecycle
