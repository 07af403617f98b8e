#include "app/server/server_memory.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sluice {

void tune_malloc_for_serving(int max_arenas) {
#if defined(__GLIBC__)
  constexpr int kThresholdBytes = 1 << 20;
  mallopt(M_ARENA_MAX, max_arenas);
  // Setting them also stops glibc from raising them as large blocks are freed.
  mallopt(M_MMAP_THRESHOLD, kThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kThresholdBytes);
#else
  (void)max_arenas;
#endif
}

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace sluice
