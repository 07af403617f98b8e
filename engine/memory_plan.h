// How much memory a run needs and what fits: weights, KV bytes per token, the pool the engine
// would allocate, and how many rows of a dataset can be in flight at once given their prompt
// lengths. Shown in the model panel before a run starts. And fitting an engine's config to the
// backend it will run on, which the engine does before it allocates its pool.
//
// On a GPU the KV pool is sized the way vLLM's profile run sizes it: weights first (uploaded
// when the backend was built), then the activations and workspaces of the largest step the
// config allows, then the pool takes what is left of gpu_memory_utilization x device memory
// (Backend::determine_available_memory; the arithmetic is engine/backend/cuda/cuda_memory_plan.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/model/model_config.h"

namespace sluice {

// A hybrid model's state slots (one per running sequence, plus prefix checkpoints), sized from
// the same budget as the KV blocks, before them.
struct StateSlotPlan {
  size_t slot_bytes = 0;    // one sequence's state over every recurrent layer; 0: no state
  int num_slots = 0;        // running sequences and checkpoints together
  int num_wanted = 0;       // max_num_seqs + max_state_checkpoints
  int max_checkpoints = 0;  // prefix checkpoints kept at most (in spare slots)
  bool is_capped = false;   // the budget allowed fewer slots than wanted
  size_t pool_bytes() const { return static_cast<size_t>(num_slots) * slot_bytes; }
};

// The state may take at most this share of the budget; the KV blocks get the rest.
inline constexpr double kMaxStateBudgetShare = 0.5;

// Returns the state slots of a run: engine.num_state_slots when set, else max_num_seqs +
// max_state_checkpoints capped at kMaxStateBudgetShare x budget_bytes (at least one). Empty
// when slot_bytes is 0 (no recurrent layers).
StateSlotPlan plan_state_slots(const EngineConfig& engine, size_t slot_bytes, size_t budget_bytes);

// Returns the bytes of one state slot on the CPU backend (fp32, ModelConfig::state_floats()).
size_t cpu_state_slot_bytes(const ModelConfig& config);

// Returns the KV pool size in blocks beside state_bytes of state slots: plan_num_kv_blocks with
// the state's bytes taken off the budget (kv_cache_bytes, or default_budget_bytes). Throws
// Error when the state leaves no room for the pool.
int plan_num_kv_blocks_beside_state(const EngineConfig& config, size_t block_bytes,
                                    int max_model_len, size_t default_budget_bytes,
                                    size_t state_bytes);

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
  // GPU plans only (0 on the CPU): the device's memory, the share the run may use, and the
  // activations and workspaces of the largest step.
  size_t device_total_bytes = 0;
  size_t device_budget_bytes = 0;
  size_t activation_bytes = 0;
  std::string device;   // "cpu" or the GPU's label
  StateSlotPlan state;  // hybrid models: the state slots beside the blocks (else empty)
};

// One line for the CLI and panels: "state slots: 36 x 1.2 MiB = 43 MiB (32 running + 4
// checkpoints)", with "capped by the budget: N wanted" when so. Empty without state.
std::string describe_state_slots(const StateSlotPlan& state);

// Returns the KV bytes one token takes on the CPU backend (K and V, every layer, fp32).
size_t cpu_kv_bytes_per_token(const ModelConfig& config);

// Plans for a run. prompt_lengths may be empty (then the mean and the fit use max_tokens only).
MemoryPlan plan_memory(const ModelConfig& config, size_t weight_bytes, const EngineConfig& engine,
                       const std::vector<int>& prompt_lengths, int max_tokens);

// Returns config ready for an Engine over backend: max_num_batched_tokens resolved, the largest
// step's activations reserved on the backend, and, unless num_kv_blocks or kv_cache_bytes fixes
// the pool, kv_cache_bytes set to what the backend's device has left for it (a GPU's share of
// gpu_memory_utilization; the CPU leaves it to the engine's host-memory rules). Throws Error
// when the device has no room left for a KV cache.
EngineConfig fit_engine_to_backend(Backend& backend, EngineConfig config);

// A GPU to plan for, and what the model's weights take on it: the CUDA backend keeps quantized
// matrices in their GGUF blocks (the file's bytes) and holds float ones in BF16, two bytes per
// weight (cuda_weight_bytes in engine/backend/cuda/cuda_weight_layout.h says exactly).
struct GpuDevicePlan {
  std::string label;        // "cuda:0 NVIDIA H100 ..."
  size_t total_bytes = 0;   // the device's memory
  size_t weight_bytes = 0;  // the weights on the device
};

// Plans a run on a GPU before its backend exists, as the CUDA backend will run it (the weights as
// gpu.weight_bytes says, BF16 activations, a BF16 or FP8 KV cache as engine.kv_cache_dtype says;
// the largest step's activations; the pool from engine.gpu_memory_utilization x the device's memory
// unless the config fixes it). The device is taken as empty: the CUDA context and other processes,
// which the real run subtracts, make the pool somewhat smaller. The pool is 0 when weights and
// activations already exceed the share.
MemoryPlan plan_gpu_memory(const ModelConfig& config, const GpuDevicePlan& gpu,
                           const EngineConfig& engine, const std::vector<int>& prompt_lengths,
                           int max_tokens);

}  // namespace sluice
