#include "common/lifecycle/allocator_caches.h"

#ifdef PORTCULLIS_TCMALLOC
#include "gperftools/malloc_extension.h"
#endif

namespace portcullis::lifecycle {

bool LimitAllocatorCaches() {
#ifdef PORTCULLIS_TCMALLOC
  return MallocExtension::instance()->SetNumericProperty("tcmalloc.max_total_thread_cache_bytes",
                                                         kMaxThreadCacheBytes);
#else
  return false;
#endif
}

}  // namespace portcullis::lifecycle
