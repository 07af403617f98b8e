#include "engine/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "engine/backend/cuda/cuda_memory_plan.h"
#include "engine/core/error.h"

namespace sluice {

size_t cpu_kv_bytes_per_token(const ModelConfig& config) {
  // A hybrid model's recurrent layers keep a state slot instead of K and V.
  return 2 * static_cast<size_t>(config.num_attention_layers()) *
         static_cast<size_t>(config.kv_size()) * sizeof(float);
}

StateSlotPlan plan_state_slots(const EngineConfig& engine, size_t slot_bytes, size_t budget_bytes) {
  StateSlotPlan plan;
  if (slot_bytes == 0) return plan;
  plan.slot_bytes = slot_bytes;
  plan.max_checkpoints = std::max(engine.max_state_checkpoints, 0);
  plan.num_wanted = engine.max_num_seqs + plan.max_checkpoints;
  if (engine.num_state_slots > 0) {
    plan.num_slots = engine.num_state_slots;
    return plan;
  }
  const auto affordable = static_cast<int64_t>(
      kMaxStateBudgetShare * static_cast<double>(budget_bytes) / static_cast<double>(slot_bytes));
  plan.num_slots =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(plan.num_wanted, affordable)));
  plan.is_capped = plan.num_slots < plan.num_wanted;
  return plan;
}

size_t cpu_state_slot_bytes(const ModelConfig& config) {
  return static_cast<size_t>(config.state_floats()) * sizeof(float);
}

int plan_num_kv_blocks_beside_state(const EngineConfig& config, size_t block_bytes,
                                    int max_model_len, size_t default_budget_bytes,
                                    size_t state_bytes) {
  if (state_bytes == 0)
    return plan_num_kv_blocks(config, block_bytes, max_model_len, default_budget_bytes);
  EngineConfig rest = config;
  const size_t budget = config.kv_cache_bytes > 0 ? config.kv_cache_bytes : default_budget_bytes;
  if (config.num_kv_blocks == 0 && state_bytes + block_bytes > budget) {
    fail("the state slots take ", state_bytes, " bytes of the ", budget,
         " byte KV budget, which leaves no room for a KV block (", block_bytes,
         " bytes); raise the budget or lower --max-num-seqs");
  }
  if (config.kv_cache_bytes > 0) rest.kv_cache_bytes -= state_bytes;
  return plan_num_kv_blocks(
      rest, block_bytes, max_model_len,
      default_budget_bytes > state_bytes ? default_budget_bytes - state_bytes : block_bytes);
}

std::string describe_state_slots(const StateSlotPlan& state) {
  if (state.slot_bytes == 0) return {};
  const auto mib = [](size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return std::string(text);
  };
  const int num_running = std::max(state.num_slots - state.max_checkpoints, 0);
  std::string text =
      str_cat("state slots: ", state.num_slots, " x ", mib(state.slot_bytes), " = ",
              mib(state.pool_bytes()), " (", num_running, " running + ",
              std::min(state.max_checkpoints, state.num_slots), " prefix checkpoints)");
  if (state.is_capped) text += str_cat(", capped by the budget: ", state.num_wanted, " wanted");
  return text;
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
  // The same sizing rule as the engine's (see plan_num_kv_blocks): the state slots first.
  constexpr size_t kDefaultBudgetBytes = size_t{2} << 30;
  plan.state =
      plan_state_slots(engine, cpu_state_slot_bytes(config),
                       engine.kv_cache_bytes > 0 ? engine.kv_cache_bytes : kDefaultBudgetBytes);
  const size_t block_bytes = plan.kv_bytes_per_token * static_cast<size_t>(engine.block_size);
  try {
    plan.num_blocks = plan_num_kv_blocks_beside_state(engine, block_bytes, plan.max_model_len,
                                                      kDefaultBudgetBytes, plan.state.pool_bytes());
  } catch (const Error&) {
    plan.num_blocks = 0;  // the plan shows the state leaving no room; the engine would refuse
  }
  fit_rows(plan, engine, prompt_lengths, max_tokens);
  // A hybrid model's rows each need a state slot too.
  if (plan.state.num_slots > 0)
    plan.max_concurrent_rows = std::min(plan.max_concurrent_rows, plan.state.num_slots);
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
  const size_t spent = plan.weight_bytes + plan.activation_bytes;
  const size_t pool_budget =
      engine.kv_cache_bytes > 0
          ? engine.kv_cache_bytes
          : (plan.device_budget_bytes > spent ? plan.device_budget_bytes - spent : 0);
  // The state slots (fp32, as the CPU's) come out of the pool's budget first.
  plan.state = plan_state_slots(engine, cpu_state_slot_bytes(config), pool_budget);
  if (engine.num_kv_blocks > 0) {
    plan.num_blocks = engine.num_kv_blocks;
  } else {
    const size_t state_bytes = plan.state.pool_bytes();
    plan.num_blocks =
        pool_budget > state_bytes ? static_cast<int>((pool_budget - state_bytes) / block_bytes) : 0;
  }
  fit_rows(plan, engine, prompt_lengths, max_tokens);
  // A hybrid model's rows each need a state slot too.
  if (plan.state.num_slots > 0)
    plan.max_concurrent_rows = std::min(plan.max_concurrent_rows, plan.state.num_slots);
  return plan;
}

}  // namespace sluice
