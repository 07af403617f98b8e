#include "engine/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/backend/cuda/cuda_memory_plan.h"

namespace sluice {

size_t cpu_kv_bytes_per_token(const ModelConfig& config) {
  return 2 * static_cast<size_t>(config.num_layers) * static_cast<size_t>(config.kv_size()) *
         sizeof(float);
}

namespace {

// Fills the fit of the rows into plan's pool: mean row length, rows at once, the max-length
// reservation. Needs kv_bytes_per_token, block_size, num_blocks and max_model_len set.
void fit_rows(MemoryPlan& plan, const EngineConfig& engine, const std::vector<int>& prompt_lengths,
              int max_tokens) {
  plan.kv_pool_bytes = static_cast<size_t>(plan.num_blocks) *
                       static_cast<size_t>(engine.block_size) * plan.kv_bytes_per_token;
  double total_blocks = 0.0;
  for (const int length : prompt_lengths) {
    const int row_tokens = std::min(plan.max_model_len, length + max_tokens);
    plan.mean_row_tokens += row_tokens;
    total_blocks += (row_tokens + engine.block_size - 1) / engine.block_size;
  }
  if (prompt_lengths.empty()) {
    plan.mean_row_tokens = std::min(plan.max_model_len, max_tokens);
    total_blocks = std::ceil(plan.mean_row_tokens / engine.block_size);
  } else {
    plan.mean_row_tokens /= static_cast<double>(prompt_lengths.size());
    total_blocks /= static_cast<double>(prompt_lengths.size());
  }
  const int fit = total_blocks > 0 ? static_cast<int>(plan.num_blocks / total_blocks) : 0;
  plan.max_concurrent_rows = std::min(fit, engine.max_num_seqs);
  plan.max_length_reservation_bytes = static_cast<size_t>(engine.max_num_seqs) *
                                      static_cast<size_t>(plan.max_model_len) *
                                      plan.kv_bytes_per_token;
}

int max_model_len_of(const ModelConfig& config, const EngineConfig& engine) {
  return engine.max_model_len > 0 ? std::min(engine.max_model_len, config.max_position_embeddings)
                                  : config.max_position_embeddings;
}

}  // namespace

EngineConfig fit_engine_to_backend(Backend& backend, EngineConfig config) {
  config.max_num_batched_tokens = resolve_max_num_batched_tokens(config, backend);
  const bool is_pool_fixed = config.num_kv_blocks > 0 || config.kv_cache_bytes > 0;
  const size_t available = backend.determine_available_memory(
      MemoryPlanRequest{.max_num_batched_tokens = config.max_num_batched_tokens,
                        .max_num_seqs = config.max_num_seqs,
                        .max_model_len = config.max_model_len,
                        .block_size = config.block_size,
                        .gpu_memory_utilization = config.gpu_memory_utilization,
                        .is_pool_fixed = is_pool_fixed});
  if (!is_pool_fixed) config.kv_cache_bytes = available;
  return config;
}

MemoryPlan plan_memory(const ModelConfig& config, size_t weight_bytes, const EngineConfig& engine,
                       const std::vector<int>& prompt_lengths, int max_tokens) {
  MemoryPlan plan;
  plan.device = "cpu";
  plan.weight_bytes = weight_bytes;
  plan.kv_bytes_per_token = cpu_kv_bytes_per_token(config);
  plan.block_size = engine.block_size;
  plan.max_model_len = max_model_len_of(config, engine);
  // The same sizing rule as the engine's (see plan_num_kv_blocks).
  plan.num_blocks =
      plan_num_kv_blocks(engine, plan.kv_bytes_per_token * static_cast<size_t>(engine.block_size),
                         plan.max_model_len, size_t{2} << 30);
  fit_rows(plan, engine, prompt_lengths, max_tokens);
  return plan;
}

MemoryPlan plan_gpu_memory(const ModelConfig& config, const GpuDevicePlan& gpu,
                           const EngineConfig& engine, const std::vector<int>& prompt_lengths,
                           int max_tokens) {
  constexpr size_t kElementBytes = 2;  // BF16
  MemoryPlan plan;
  plan.device = gpu.label;
  plan.device_total_bytes = gpu.total_bytes;
  plan.device_budget_bytes =
      static_cast<size_t>(engine.gpu_memory_utilization * static_cast<double>(gpu.total_bytes));
  plan.weight_bytes = gpu.weight_bytes;
  plan.kv_bytes_per_token = cuda_kv_bytes_per_token(config, kElementBytes, engine.kv_cache_dtype);
  const int step_tokens = engine.max_num_batched_tokens > 0 ? engine.max_num_batched_tokens
                                                            : kDefaultMaxNumBatchedTokens;
  plan.activation_bytes = cuda_activation_bytes(config, kElementBytes, step_tokens,
                                                std::min(engine.max_num_seqs, step_tokens));
  plan.block_size = engine.block_size;
  plan.max_model_len = max_model_len_of(config, engine);
  const size_t block_bytes = plan.kv_bytes_per_token * static_cast<size_t>(engine.block_size);
  if (engine.num_kv_blocks > 0 || engine.kv_cache_bytes > 0) {
    plan.num_blocks = plan_num_kv_blocks(engine, block_bytes, plan.max_model_len, 0);
  } else {
    const size_t spent = plan.weight_bytes + plan.activation_bytes;
    plan.num_blocks = plan.device_budget_bytes > spent
                          ? static_cast<int>((plan.device_budget_bytes - spent) / block_bytes)
                          : 0;
  }
  fit_rows(plan, engine, prompt_lengths, max_tokens);
  return plan;
}

}  // namespace sluice
