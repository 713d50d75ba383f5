#pragma once

#include <string_view>

namespace portcullis::lifecycle {

// Names the calling thread (what `top -H`, `ps -L`, perf and /proc/<pid>/task/<tid>/comm show,
// and what bench/load splits a process's CPU by). Linux keeps at most 15 bytes: a longer name is
// cut there. Call first thing in a thread a service starts.
void NameCurrentThread(std::string_view name);

}  // namespace portcullis::lifecycle
