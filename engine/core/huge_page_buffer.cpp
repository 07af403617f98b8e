#include "engine/core/huge_page_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace sluice {

void HugePageBuffer::Free::operator()(uint8_t* p) const {
  std::free(p);
}

void HugePageBuffer::allocate(size_t size) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t rounded = (std::max<size_t>(size, 1) + kHugePage - 1) / kHugePage * kHugePage;
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kHugePage, rounded)));
  if (!data_) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  madvise(data_.get(), rounded, MADV_HUGEPAGE);  // a hint: refused, the pages stay 4 KiB
#endif
  size_ = size;
}

}  // namespace sluice
