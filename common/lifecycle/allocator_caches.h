#pragma once

#include <cstddef>

namespace portcullis::lifecycle {

// What the per-thread caches of tcmalloc may hold in all (tcmalloc's own default is 32 MiB):
// with it the gateway stays within its 64 MiB budget at 256 connections (issue 21).
inline constexpr size_t kMaxThreadCacheBytes = size_t{8} << 20;

// Caps the allocator's caches, once at startup (each service's main). Release builds link
// tcmalloc (cmake/PortcullisDependencies.cmake, PORTCULLIS_TCMALLOC): its thread caches get
// kMaxThreadCacheBytes. Other builds keep glibc's malloc, with nothing to set: false.
bool LimitAllocatorCaches();

}  // namespace portcullis::lifecycle
