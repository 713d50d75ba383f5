#include "common/lifecycle/allocator_caches.h"

#include <cstddef>

#include "gtest/gtest.h"
#ifdef PORTCULLIS_TCMALLOC
#include "gperftools/malloc_extension.h"
#endif

namespace portcullis::lifecycle {
namespace {

#ifdef PORTCULLIS_TCMALLOC
TEST(AllocatorCachesTest, TcmallocThreadCachesAreCapped) {
  ASSERT_TRUE(LimitAllocatorCaches());
  size_t bytes = 0;
  ASSERT_TRUE(MallocExtension::instance()->GetNumericProperty(
      "tcmalloc.max_total_thread_cache_bytes", &bytes));
  EXPECT_EQ(bytes, kMaxThreadCacheBytes);
}
#else
TEST(AllocatorCachesTest, GlibcMallocHasNothingToSet) {
  EXPECT_FALSE(LimitAllocatorCaches()) << "this build does not link tcmalloc";
}
#endif

}  // namespace
}  // namespace portcullis::lifecycle
