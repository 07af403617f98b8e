// The compute backend interface (CPU reference, CUDA). A backend owns the weights in its own
// memory and the paged KV pool; the runner hands it flat BatchInputs and gets logits back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/batch_inputs.h"
#include "engine/sched/sampling_params.h"
#include "engine/sched/token_logprobs.h"

namespace sluice {

// One row to sample on the backend's device: the request's parameters and context, exactly what
// the host Sampler gets. Row i samples from logits row i of the forward pass.
struct SampleRow {
  const SamplingParams* params = nullptr;
  SamplingContext context;
  bool is_masked = false;  // a grammar constrains the row: its mask comes from a TokenMaskSource
};

// The next-token masks of a step's constrained rows. forward_and_sample asks for them while the
// device runs the forward pass, so building them (engine/grammar) overlaps the model's work.
class TokenMaskSource {
 public:
  virtual ~TokenMaskSource() = default;

  // Writes row's mask into words ((vocab_size + 31) / 32 words, zeroed by the caller): bit
  // id % 32 of word id / 32 is set when token id may be drawn. Returns how many tokens the mask
  // allows. Precondition: rows[row].is_masked.
  virtual size_t fill(size_t row, std::span<uint32_t> words) = 0;
};

struct BackendMemory {
  size_t weight_bytes = 0;        // weights as the backend holds them
  size_t kv_cache_bytes = 0;      // the allocated KV pool
  size_t activation_bytes = 0;    // scratch for the largest step so far
  size_t device_total_bytes = 0;  // GPU only: device memory total / free (0 on the CPU)
  size_t device_free_bytes = 0;
  // GPU only: weights that stay in host memory and run on the CPU (the experts of --n-cpu-moe
  // layers, read in place from the model).
  size_t host_weight_bytes = 0;
  size_t state_bytes = 0;  // the allocated recurrent-state slots (hybrid models)
};

// The element type of a backend's KV cache. Auto: the backend's own (float32 on the CPU, the
// activation type on a GPU). Fp8: FP8 E4M3 codes with a float scale per token and KV head (the
// CUDA backend; engine/core/fp8_e4m3.h), about half the bytes of a 16-bit cache.
enum class KvCacheDType : uint8_t { Auto, Fp8 };

// "auto" or "fp8".
std::string_view kv_cache_dtype_name(KvCacheDType dtype);
// Parses "auto" or "fp8" (also "fp8_e4m3"); throws Error for anything else.
KvCacheDType parse_kv_cache_dtype(std::string_view name);

// A step's token budget on a GPU (and the default of every backend that does not choose less).
inline constexpr int kDefaultMaxNumBatchedTokens = 2048;

// What an engine will ask of a backend's memory: its largest step, and the share of the device
// the run may use.
struct MemoryPlanRequest {
  int max_num_batched_tokens = kDefaultMaxNumBatchedTokens;
  int max_num_seqs = 256;
  int max_model_len = 0;  // 0: the model's context
  int block_size = 16;
  double gpu_memory_utilization = 0.90;  // (0, 1]: weights, activations and KV pool together
  bool is_pool_fixed = false;  // the engine's config fixes the pool: reserve, but size nothing
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda:0".
  virtual std::string name() const = 0;

  // One line for logs and panels: the name, and what the backend does with the weights (the CPU's
  // fp32 compute; on a GPU the device, activation type and what became of the stored types,
  // such as "Q8_0 weights kept in their blocks").
  virtual std::string describe() const { return name(); }

  // Returns the bytes one KV block of block_size tokens takes over all layers, K and V.
  virtual size_t kv_block_bytes(int block_size) const = 0;

  // Allocates the paged KV pool of num_blocks blocks (replacing any earlier pool). Throws Error
  // when the memory cannot be had.
  virtual void allocate_kv_cache(int num_blocks, int block_size) = 0;

  // Copies whole blocks (every layer, K and V): dst[i] becomes a copy of src[i]. Used for
  // copy-on-write before a forward pass writes into a block another request still shares.
  virtual void copy_blocks(std::span<const int32_t> src_block_ids,
                           std::span<const int32_t> dst_block_ids) = 0;

  // Hybrid models (ModelConfig::is_hybrid): every running sequence also holds a state slot, the
  // recurrent state of all its DeltaNet layers (ModelConfig::state_floats()), beside its KV
  // blocks. Returns the bytes of one slot; 0 for a model without recurrent layers.
  virtual size_t state_slot_bytes() const { return 0; }

  // Allocates num_slots state slots (replacing any earlier ones; their contents are undefined
  // until a forward pass starts a sequence in them). Throws Error when the memory cannot be had,
  // or when num_slots > 0 for a model without recurrent layers.
  virtual void allocate_state_slots(int num_slots);

  // Copies whole slots: dst[i] becomes a copy of src[i] (a fork's state, a prefix checkpoint
  // saved or restored). Applied before the next forward pass.
  virtual void copy_state_slots(std::span<const int32_t> src_slots,
                                std::span<const int32_t> dst_slots);

  // Runs the model over the batch, writing each token's K/V into its slot first, and returns
  // logits [logits_indices.size(), vocab_size] row-major in `logits` (resized).
  // Precondition: a pool is allocated and every slot and block table entry lies in it.
  virtual void forward(const BatchInputs& inputs, std::vector<float>& logits) = 0;

  virtual BackendMemory memory() const = 0;

  // Plans the memory of an engine's run (vLLM's determine_available_memory): reserves the
  // activations and workspaces of the largest step the request allows, so that the device's
  // free memory counts them, and returns the bytes of gpu_memory_utilization x device memory
  // left for the KV pool. Returns 0 when the pool is not the backend's to size: request.
  // is_pool_fixed, or no device memory of its own (the CPU, whose pool the engine sizes in host
  // memory from its config). Throws Error when the share leaves no room for a block.
  virtual size_t determine_available_memory(const MemoryPlanRequest& request);

  // The most tokens one step schedules when the engine config leaves it open
  // (EngineConfig::max_num_batched_tokens == 0): kDefaultMaxNumBatchedTokens, or less where a
  // step's activations would cost more memory than the larger batch saves time.
  virtual int default_max_num_batched_tokens() const { return kDefaultMaxNumBatchedTokens; }

  // True when the backend can sample on its device (forward_and_sample), so only token ids, not
  // [rows, vocab] logits, cross back to the host.
  virtual bool samples_on_device() const { return false; }

  // Runs forward() and samples logits row i with rows[i] under the host Sampler's semantics
  // (same penalties, cuts and Philox draw, so the ids equal what Sampler::sample would return
  // from the same logits). A masked row first has the logits its mask (from masks) leaves out
  // set to -inf, as GrammarConstraints::mask_logits does on the host; a mask that allows nothing
  // gives that row token -1 and no error. token_ids gets one id per row, and logprobs one entry
  // per row: for a row whose parameters ask for log-probabilities (logprobs >= 0), the chosen
  // token's and its likeliest tokens' under the raw logits, as token_logprobs computes them on
  // the host (within float rounding); empty for the others. Throws Error naming the row when its
  // logits cannot be sampled. Precondition: samples_on_device(); rows.size() equals
  // inputs.logits_indices.size(); masks is set when a row is_masked.
  virtual void forward_and_sample(const BatchInputs& inputs, std::span<const SampleRow> rows,
                                  TokenMaskSource* masks, std::vector<int32_t>& token_ids,
                                  std::vector<TokenLogprobs>& logprobs);
};

}  // namespace sluice
