// How much memory a run needs and what fits: weights, KV bytes per token, the pool the engine
// would allocate, and how many rows of a dataset can be in flight at once given their prompt
// lengths. Shown in the model panel before a run starts.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/engine.h"
#include "engine/model/model_config.h"

namespace sluice {

struct MemoryPlan {
  size_t weight_bytes = 0;
  size_t kv_bytes_per_token = 0;  // K and V over all layers (fp32 on the CPU backend)
  int block_size = 0;
  int num_blocks = 0;  // the pool the engine would allocate
  size_t kv_pool_bytes = 0;
  int max_model_len = 0;
  double mean_row_tokens = 0.0;  // prompt + max_tokens, averaged over the rows given
  int max_concurrent_rows = 0;  // rows whose full length fits in the pool at once (<= max_num_seqs)
  size_t max_length_reservation_bytes = 0;  // max_num_seqs x max_model_len tokens, for contrast
};

// Returns the KV bytes one token takes on the CPU backend (K and V, every layer, fp32).
size_t cpu_kv_bytes_per_token(const ModelConfig& config);

// Plans for a run. prompt_lengths may be empty (then the mean and the fit use max_tokens only).
MemoryPlan plan_memory(const ModelConfig& config, size_t weight_bytes, const EngineConfig& engine,
                       const std::vector<int>& prompt_lengths, int max_tokens);

}  // namespace sluice
