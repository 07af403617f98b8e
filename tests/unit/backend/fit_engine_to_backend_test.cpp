// fit_engine_to_backend over Backend::determine_available_memory: the backend is asked once with
// the config's largest step and device share, its answer sizes the pool only when the config
// leaves the pool open, and the CPU backend (no device memory of its own) leaves the config to
// the engine's host-memory rules.
#include <gtest/gtest.h>

#include "engine/backend/borrowed_backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/memory_plan.h"
#include "engine/model/dummy_model.h"

namespace sluice {
namespace {

// A backend with device memory: records what it is asked, answers a fixed pool.
class RecordingDeviceBackend final : public Backend {
 public:
  std::string name() const override { return "recording"; }
  size_t kv_block_bytes(int) const override { return 1024; }
  void allocate_kv_cache(int, int) override {}
  void copy_blocks(std::span<const int32_t>, std::span<const int32_t>) override {}
  void forward(const BatchInputs&, std::vector<float>&) override {}
  BackendMemory memory() const override { return {}; }
  size_t determine_available_memory(const MemoryPlanRequest& request) override {
    requests.push_back(request);
    return request.is_pool_fixed ? 0 : kAvailableBytes;
  }

  static constexpr size_t kAvailableBytes = size_t{3} << 20;
  std::vector<MemoryPlanRequest> requests;
};

TEST(FitEngineToBackend, AnOpenPoolTakesWhatTheDeviceHasLeft) {
  RecordingDeviceBackend backend;
  const EngineConfig fitted =
      fit_engine_to_backend(backend, EngineConfig{.block_size = 32,
                                                  .max_num_seqs = 7,
                                                  .max_model_len = 300,
                                                  .gpu_memory_utilization = 0.5});
  EXPECT_EQ(fitted.kv_cache_bytes, RecordingDeviceBackend::kAvailableBytes);
  EXPECT_EQ(fitted.max_num_batched_tokens, kDefaultMaxNumBatchedTokens);
  ASSERT_EQ(backend.requests.size(), 1u);
  const MemoryPlanRequest& r = backend.requests[0];
  EXPECT_EQ(r.max_num_batched_tokens, kDefaultMaxNumBatchedTokens);
  EXPECT_EQ(r.max_num_seqs, 7);
  EXPECT_EQ(r.max_model_len, 300);
  EXPECT_EQ(r.block_size, 32);
  EXPECT_EQ(r.gpu_memory_utilization, 0.5);
  EXPECT_FALSE(r.is_pool_fixed);
}

// A pool the config fixes is kept: the backend still reserves the step, but sizes nothing.
TEST(FitEngineToBackend, AFixedPoolIsKeptAndTheStepStillReserved) {
  for (EngineConfig config :
       {EngineConfig{.num_kv_blocks = 40}, EngineConfig{.kv_cache_bytes = size_t{5} << 20}}) {
    config.max_num_batched_tokens = 100;
    RecordingDeviceBackend backend;
    const EngineConfig fitted = fit_engine_to_backend(backend, config);
    EXPECT_EQ(fitted.num_kv_blocks, config.num_kv_blocks);
    EXPECT_EQ(fitted.kv_cache_bytes, config.kv_cache_bytes);
    ASSERT_EQ(backend.requests.size(), 1u);
    EXPECT_TRUE(backend.requests[0].is_pool_fixed);
    EXPECT_EQ(backend.requests[0].max_num_batched_tokens, 100);
  }
}

// The CPU's pool lives in host memory and is sized by the engine: only the step budget changes
// (the CPU's own default), and a borrowed backend is planned by its lender's owner, not here.
TEST(FitEngineToBackend, TheCpuAndABorrowedBackendLeaveThePoolToTheEngine) {
  const auto model = make_dummy_model("stories15M", DType::F32, 0, 1);
  CpuBackend cpu(*model, CpuBackendOptions{.num_threads = 1});
  const EngineConfig fitted = fit_engine_to_backend(cpu, EngineConfig{.max_num_seqs = 9});
  EXPECT_EQ(fitted.max_num_batched_tokens, cpu.default_max_num_batched_tokens());
  EXPECT_EQ(fitted.kv_cache_bytes, 0u);
  EXPECT_EQ(fitted.num_kv_blocks, 0);

  RecordingDeviceBackend lender;
  BorrowedBackend borrowed(lender);
  EXPECT_EQ(fit_engine_to_backend(borrowed, EngineConfig{}).kv_cache_bytes, 0u);
  EXPECT_TRUE(lender.requests.empty());
}

}  // namespace
}  // namespace sluice
