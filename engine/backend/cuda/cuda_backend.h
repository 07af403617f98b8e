// The CUDA backend: the CPU backend's forward pass on one GPU. Weights are uploaded once: float
// matrices in the activation type (BF16 by default; FP32 for exact comparisons in tests; FP16
// possible), quantized GGUF matrices in their blocks, norm weights and biases in fp32
// (cuda_weight_layout.h). Products of float matrices go through cuBLAS, products of quantized ones
// through kernels/quant_linear.cuh (both accumulate in fp32), everything else through the kernels
// in kernels/*.cuh, on one compute stream.
//
// A step: the BatchInputs are packed into one of two pinned host buffers and sent to the device
// with a single asynchronous copy, the layers are enqueued (or, for a decode-only step, one CUDA
// graph captured for its batch and context bucket is replayed), and the fp32 logits of the rows
// that sample are copied back. That download is the step's only synchronisation point, so
// forward() keeps the engine's synchronous contract while the host never waits for the device
// between launching the inputs copy and the last kernel. The second pinned buffer lets a caller
// pack step N+1 while step N runs (see PinnedBatchStaging).
//
// This header includes no CUDA header, so the app and tests can use it wherever SLUICE_HAS_CUDA
// is defined.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cuda/cuda_memory_plan.h"
#include "engine/backend/device.h"
#include "engine/model/model.h"
#include "engine/sched/sampling_params.h"

namespace sluice {

// The element type of activations, the KV cache and the weights on the device.
enum class ActivationDType : uint8_t { F32, F16, BF16 };

// "fp32", "fp16" or "bf16".
std::string_view activation_dtype_name(ActivationDType dtype);
// Parses "fp32"/"f32", "fp16"/"f16", "bf16"; throws Error for anything else.
ActivationDType parse_activation_dtype(std::string_view name);

struct CudaBackendOptions {
  int device_index = 0;
  ActivationDType activation_dtype = ActivationDType::BF16;
  bool enable_cuda_graphs = true;  // replay decode-only steps as CUDA graphs
  // Products of float matrices with 1-8 tokens: through the GEMV kernel (true), cuBLAS (false),
  // or whichever measures faster on the device when the backend is built (unset;
  // dense_gemv_choice.h).
  std::optional<bool> dense_gemv;
  // Products of matrices kept in their GGUF blocks: with up to this many tokens read from the
  // blocks (the GEMV, then the tiles), with more dequantized into a scratch buffer a chunk at a
  // time and multiplied by cuBLAS; unset: the ranges measured on the device (quant_products.h).
  std::optional<int> quant_direct_max_tokens;
  // The fewest tokens quant_linear's tiles take instead of the GEMV (1..17, 17: none of the GEMV's
  // counts); unset: from where they measured faster than the GEMV (quant_products.h).
  std::optional<int> quant_tiles_min_tokens;
  // The tiles of the formats the integer GEMV has, with bf16/fp16 activations: the integer ones
  // (kernels/quant_mmq.cuh, true) or quant_linear's 16-bit ones (false); unset: whichever
  // measures faster on the device (quant_products.h; the 16-bit ones under the emulator).
  std::optional<bool> quant_mmq;
  // The most tokens the integer tiles take at once: their quantized activations' buffer holds
  // this many of the widest row; more go through in chunks (the same bits).
  int quant_mmq_chunk_tokens = 256;
  // The parts the integer tiles split every product's K into (1: none, at most 8); unset: by the
  // matrix's shape and the device's SM count (kernels::quant_mmq_parts).
  std::optional<int> quant_mmq_parts;
  // Mixture-of-experts layers on the device: a step whose experts each take no more rows than
  // the measured GEMV range multiplies every expert's projection in one launch of the integer
  // GEMV (true), or each expert in launches of its own (false; the same products).
  bool grouped_moe_gemv = true;
  // bf16/fp16 activations and products by the integer GEMV: a norm whose output feeds products,
  // and a gated activation whose output feeds the down product, also quantizes that output for
  // them in the same launch (true), or the first product quantizes it (false; the same bits).
  bool fused_norm_quantize = true;
  // The most bytes of a matrix that scratch buffer holds at a time (at least one row).
  size_t quant_scratch_max_bytes = size_t{256} << 20;
  // The KV cache's elements: the activation type (Auto), or FP8 E4M3 codes with a float scale
  // per token and KV head (engine/core/fp8_e4m3.h).
  KvCacheDType kv_cache_dtype = KvCacheDType::Auto;
  // Mixture-of-experts models: the experts of this many leading layers stay in host memory and
  // run on the CPU (--n-cpu-moe N; --cpu-moe: every layer, any value >= num_layers); the router,
  // attention and everything else stay on the device. 0: every expert on the device.
  int num_host_expert_layers = 0;
  // Threads of the CPU experts' pool, used only when some layer's experts stay on the host
  // (0: one per hardware thread, as --threads).
  int num_host_threads = 0;
};

using CudaSampleRow = SampleRow;

// How steps were run, for tests and the bench.
struct CudaStepCounters {
  int64_t num_eager_steps = 0;
  int64_t num_graph_replays = 0;
  int64_t num_graph_captures = 0;
  int64_t num_padded_rows = 0;           // padding rows computed by decode steps
  int64_t num_masked_rows = 0;           // rows sampled on the device under a grammar's token mask
  int64_t num_grouped_moe_layers = 0;    // MoE layers whose experts ran as grouped products
  int64_t num_fused_norm_quantizes = 0;  // norms that quantized their output for the GEMV
  int64_t num_fused_activation_quantizes = 0;  // gated activations that did the same
};

class CudaBackend final : public Backend {
 public:
  // Uploads the model's weights to the device. The model must outlive the backend. Throws Error
  // when the device is missing or the weights do not fit.
  CudaBackend(const Model& model, const CudaBackendOptions& options = {});
  ~CudaBackend() override;

  std::string name() const override;  // "cuda:N"
  size_t kv_block_bytes(int block_size) const override;
  void allocate_kv_cache(int num_blocks, int block_size) override;
  void copy_blocks(std::span<const int32_t> src_block_ids,
                   std::span<const int32_t> dst_block_ids) override;
  // Hybrid models: fp32 slots of ModelConfig::state_floats() (cuda_forward.h's StateSlots),
  // zeroed when allocated; copies are device copies on the compute stream.
  size_t state_slot_bytes() const override;
  void allocate_state_slots(int num_slots) override;
  void copy_state_slots(std::span<const int32_t> src_slots,
                        std::span<const int32_t> dst_slots) override;
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override;
  BackendMemory memory() const override;

  // One line for logs and the model panel: device, activation type, and what happened to the
  // stored weights ("Q4_K weights kept in their blocks", "F32 weights converted to bf16").
  std::string describe() const override;

  // Allocates the activations and workspaces of the request's largest step and sizes the decode
  // graphs for it (larger steps still run: their buffers grow, and captured graphs are dropped),
  // then returns the KV pool that fits gpu_memory_utilization of the device now, with one block
  // kept for padded decode rows (cuda_memory_plan.h). Throws Error when nothing is left for it.
  size_t determine_available_memory(const MemoryPlanRequest& request) override;

  // Runs the forward pass and samples every logits row on the device with the host Sampler's
  // semantics (kernels/sampling.cuh); token_ids gets one id per row. Only the ids cross to the
  // host. Masked rows' bitmasks are filled from masks while the forward pass runs and travel with
  // the sampling parameters. Throws Error naming the row when its logits cannot be sampled (NaN,
  // all -inf but for a mask that allows nothing, which gives -1). Precondition: rows.size() ==
  // inputs.logits_indices.size().
  bool samples_on_device() const override { return true; }
  // Rows that ask for log-probabilities get them from a copy of the raw logits taken before
  // sampling changes them (kernels/logprobs.cuh); the copy is allocated on the first such step.
  void forward_and_sample(const BatchInputs& inputs, std::span<const SampleRow> rows,
                          TokenMaskSource* masks, std::vector<int32_t>& token_ids,
                          std::vector<TokenLogprobs>& logprobs) override;

  const CudaStepCounters& step_counters() const;
  ActivationDType activation_dtype() const;
  int device_index() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
