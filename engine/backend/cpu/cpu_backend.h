// The CPU backend: the primitives of the one forward pass (engine/model/forward_pass.h) in fp32
// over weights of any stored type, fixed-order matrix products across all tokens of a step, the
// thread pool for attention and RoPE, and a paged KV pool in host memory. It is the reference
// every CUDA op is tested against.
#pragma once

#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_linear.h"
#include "engine/backend/cpu/cpu_moe.h"
#include "engine/core/thread_pool.h"
#include "engine/model/model.h"

namespace sluice {

struct CpuBackendOptions {
  int num_threads = 0;  // 0 = one per hardware thread
  // Rounds every K and V row as the CUDA backend's FP8 cache stores it (E4M3 with a scale per
  // token and KV head, engine/core/fp8_e4m3.h) before caching it. The cache stays float32: this
  // is the CPU reference for that cache's numerics, not a memory saving (make_backend refuses an
  // FP8 cache on the CPU).
  bool round_kv_to_fp8 = false;
  // Mixture-of-experts models: called with every layer's chosen experts as each step runs
  // (tests and diagnostics); empty = not called.
  ExpertChoiceObserver on_experts_chosen;
};

class CpuBackend final : public Backend {
 public:
  // Prepares the model's weights. The model must outlive the backend.
  CpuBackend(const Model& model, const CpuBackendOptions& options = {});
  ~CpuBackend() override;

  std::string name() const override { return "cpu"; }
  std::string describe() const override;
  size_t kv_block_bytes(int block_size) const override;
  void allocate_kv_cache(int num_blocks, int block_size) override;
  void copy_blocks(std::span<const int32_t> src_block_ids,
                   std::span<const int32_t> dst_block_ids) override;
  size_t state_slot_bytes() const override;
  void allocate_state_slots(int num_slots) override;
  void copy_state_slots(std::span<const int32_t> src_slots,
                        std::span<const int32_t> dst_slots) override;
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override;
  BackendMemory memory() const override;
  // 512, llama.cpp's micro-batch: the GEMMs are as fast per token as at 2048, and the fp32
  // activations of a 2048-token step would add about 14% to a 1B Q4_K_M model's resident
  // memory (file plus KV pool).
  int default_max_num_batched_tokens() const override { return 512; }

 private:
  struct Layer;
  struct Scratch;
  class Ops;

  // Prepares a layer's tensor of a role for the forward pass, by the role's kind.
  void prepare(WeightRole role, const WeightTensor& tensor, Layer& layer);
  // Prepares a layer's router and expert stacks (none in a dense model).
  void prepare_experts(const LayerExperts& experts, Layer& layer);
  // Returns a norm weight widened to fp32 with the model's offset applied.
  std::vector<float> norm_weights(const WeightTensor& tensor) const;

  const Model& model_;
  ModelConfig config_;
  ThreadPool pool_;
  bool round_kv_to_fp8_ = false;
  ExpertChoiceObserver on_experts_chosen_;
  std::vector<Layer> layers_;
  CpuMatrix embedding_;
  CpuMatrix lm_head_;
  std::vector<float> final_norm_;
  size_t owned_weight_bytes_ = 0;
  size_t replaced_map_bytes_ = 0;  // of the file map, by interleaved tiles (CpuMatrix)

  int num_blocks_ = 0;
  int block_size_ = 0;
  // [attention layer, num_blocks, block_size, num_kv_heads, head_dim]: a hybrid's DeltaNet
  // layers have no KV cache; kv_layer_[l] is layer l's index among the attention layers.
  std::vector<float> k_cache_;
  std::vector<float> v_cache_;
  std::vector<int> kv_layer_;
  int num_kv_layers_ = 0;
  // Hybrid models: [slot, DeltaNet layer, DeltaNetConfig::state_floats()]; state_layer_[l] is
  // layer l's index among the DeltaNet layers.
  std::vector<float> states_;
  std::vector<int> state_layer_;
  int num_state_slots_ = 0;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace sluice
