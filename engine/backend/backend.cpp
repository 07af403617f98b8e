#include "engine/backend/backend.h"

#include "engine/core/error.h"

namespace sluice {

size_t Backend::determine_available_memory(const MemoryPlanRequest&) {
  return 0;
}

void Backend::forward_and_sample(const BatchInputs&, std::span<const SampleRow>, TokenMaskSource*,
                                 std::vector<int32_t>&, std::vector<TokenLogprobs>&) {
  fail("backend ", name(), " does not sample on its device; use forward() and the host Sampler");
}

}  // namespace sluice
