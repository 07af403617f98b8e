#include "engine/backend/backend.h"

#include "engine/core/error.h"

namespace sluice {

std::string_view kv_cache_dtype_name(KvCacheDType dtype) {
  return dtype == KvCacheDType::Fp8 ? "fp8" : "auto";
}

KvCacheDType parse_kv_cache_dtype(std::string_view name) {
  if (name == "auto") return KvCacheDType::Auto;
  if (name == "fp8" || name == "fp8_e4m3") return KvCacheDType::Fp8;
  fail("KV cache type must be auto or fp8, got '", name, "'");
}

void Backend::allocate_state_slots(int num_slots) {
  if (num_slots > 0) fail(name(), ": this backend holds no recurrent state");
}

void Backend::copy_state_slots(std::span<const int32_t> src_slots, std::span<const int32_t>) {
  if (!src_slots.empty()) fail(name(), ": this backend holds no recurrent state");
}

size_t Backend::determine_available_memory(const MemoryPlanRequest&) {
  return 0;
}

void Backend::forward_and_sample(const BatchInputs&, std::span<const SampleRow>, TokenMaskSource*,
                                 std::vector<int32_t>&, std::vector<TokenLogprobs>&) {
  fail("backend ", name(), " does not sample on its device; use forward() and the host Sampler");
}

}  // namespace sluice
