#include "engine/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace sluice {

size_t cpu_kv_bytes_per_token(const ModelConfig& config) {
  return 2 * static_cast<size_t>(config.num_layers) * static_cast<size_t>(config.kv_size()) *
         sizeof(float);
}

MemoryPlan plan_memory(const ModelConfig& config, size_t weight_bytes, const EngineConfig& engine,
                       const std::vector<int>& prompt_lengths, int max_tokens) {
  MemoryPlan plan;
  plan.weight_bytes = weight_bytes;
  plan.kv_bytes_per_token = cpu_kv_bytes_per_token(config);
  plan.block_size = engine.block_size;
  plan.max_model_len = engine.max_model_len > 0
                           ? std::min(engine.max_model_len, config.max_position_embeddings)
                           : config.max_position_embeddings;
  // The same sizing rule as the engine's (see plan_num_kv_blocks).
  plan.num_blocks =
      plan_num_kv_blocks(engine, plan.kv_bytes_per_token * static_cast<size_t>(engine.block_size),
                         plan.max_model_len, size_t{2} << 30);
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
    total_blocks = (plan.mean_row_tokens + engine.block_size - 1) / engine.block_size;
  } else {
    plan.mean_row_tokens /= static_cast<double>(prompt_lengths.size());
    total_blocks /= static_cast<double>(prompt_lengths.size());
  }
  const int fit = total_blocks > 0 ? static_cast<int>(plan.num_blocks / total_blocks) : 0;
  plan.max_concurrent_rows = std::min(fit, engine.max_num_seqs);
  plan.max_length_reservation_bytes = static_cast<size_t>(engine.max_num_seqs) *
                                      static_cast<size_t>(plan.max_model_len) *
                                      plan.kv_bytes_per_token;
  return plan;
}

}  // namespace sluice
