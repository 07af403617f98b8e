// The one forward pass (engine/model/forward_pass.h) over CUDA primitives, launched on one
// stream. For the Llama family it runs:
//   embedding -> per layer: rms_norm_residual (fused with the residual add) -> one q|k|v product
//   (+ bias) -> rope_and_cache -> paged_attention -> o product -> rms_norm_residual -> one
//   gate|up product -> silu_mul (over the gate half) -> down product -> the rows needing logits
//   gathered -> final norm -> LM head product in fp32.
// The other architectures add launches only for the options they have: head_rms_norm before
// rope_and_cache (q/k norms: Qwen3, Gemma 3), an in-place rms_norm of the o and down products
// (post norms: Gemma 2/3) and soft_cap over the logits (Gemma 2). Scaled embeddings, GeGLU,
// partial rotary and per-layer RoPE frequencies change the arguments of existing launches.
// Hybrid models (Qwen3.5): a DeltaNet layer is one stacked input product into fp32 rows,
// deltanet_conv, gated_delta_rule and gated_rms_norm (kernels/gated_delta_net.cuh) over the
// requests' state slots, then the output product; a gated attention layer's doubled q product
// is split into q and its gate (kernels/sigmoid_gates.cuh), which multiplies the attention output;
// a shared expert adds sigmoid(router) * its SwiGLU after the routed experts.
// Mixture-of-experts layers: the router's product in fp32, the top-k choice on the device
// (kernels/moe.cuh), the choice copied to the host to group the tokens by expert, the grouped
// rows gathered, one gate|up product, activation and down product per chosen expert, and the
// weighted outputs added per token in top-k order; or, for the layers whose experts stay on the
// host, Normed copied to the host and the CPU's moe_ffn.
// enqueue_forward neither allocates nor synchronises (except in mixture-of-experts layers), so a
// dense model's step can be captured into a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/backend/cpu/cpu_moe.h"
#include "engine/backend/cuda/cublas_gemm.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/backend/cuda/pinned_batch.h"
#include "engine/backend/cuda/quant_products.h"
#include "engine/model/model_config.h"
#include "kernels/moe.cuh"
#include "kernels/paged_attention.cuh"

namespace sluice {

// The step buffers on the device, in the activation type unless noted.
struct ForwardBuffers {
  void* residual = nullptr;           // [max_tokens, hidden]
  void* residual_alt = nullptr;       // [max_tokens, hidden] projections before their residual add
  void* normed = nullptr;             // [max_tokens, hidden]
  void* qkv = nullptr;                // [max_tokens, q_size + 2 * kv_size] q | k | v per token
  void* attn = nullptr;               // [max_tokens, q_size]
  void* gate_up = nullptr;            // [max_tokens, 2 * intermediate] gate | up per token
  void* gathered = nullptr;           // [max_rows, hidden]
  void* gathered_residual = nullptr;  // [max_rows, hidden]
  void* final_normed = nullptr;       // [max_rows, hidden]
  float* logits = nullptr;            // [max_rows, vocab] fp32
  // Mixture-of-experts layers only (null otherwise); a slot is one of a token's top_k experts:
  float* moe_x = nullptr;       // [max_tokens, hidden] fp32 Normed (the router's, the host's input)
  float* moe_logits = nullptr;  // [max_tokens, num_experts] fp32 router logits
  int32_t* moe_ids = nullptr;   // [max_tokens, top_k] chosen experts, rank 0 first
  float* moe_weights = nullptr;  // [max_tokens, top_k] their weights
  int32_t* moe_rows =
      nullptr;  // [2, max_tokens * top_k] token of each grouped row | row of each slot
  void* moe_gathered = nullptr;  // [max_tokens * top_k, hidden] Normed rows grouped by expert
  void* moe_gate_up = nullptr;   // [max_tokens * top_k, 2 * expert_ffn] per grouped row
  float* moe_out = nullptr;      // [max_tokens * top_k, hidden] fp32 expert outputs per grouped row
  // Hybrid models only (cuda_hybrid_activation_bytes; null otherwise). DeltaNet layers:
  float* dn_proj = nullptr;   // [max_tokens, cuda_deltanet_row_width] q|k|v, z, b, alpha (fp32)
  float* dn_out = nullptr;    // [max_tokens, value_dim] the delta rule's output (fp32)
  void* dn_normed = nullptr;  // [max_tokens, value_dim] the gated norm's output
  // The gated attention (attn_output_gate):
  void* gated_q = nullptr;    // [max_tokens, 2 q_size + 2 kv_size] per head q | gate, then k | v
  void* attn_gate = nullptr;  // [max_tokens, q_size]
  // The shared expert:
  void* shexp_gate_up = nullptr;  // [max_tokens, 2 * shared_ffn]
  float* shexp_out = nullptr;     // [max_tokens, hidden] fp32
  float* shexp_logit = nullptr;   // [max_tokens] fp32, its router's logit
  void* attention_workspace = nullptr;
  size_t attention_workspace_bytes = 0;
};

// The host side of the mixture-of-experts layers: the step's choice copied back to group the
// tokens by expert (one synchronisation per layer), and the experts of the first
// host_experts.size() layers kept in host memory (--n-cpu-moe), run by the CPU's moe_ffn on the
// backend's thread pool.
// A layer's experts for the grouped products (kernels::quant_gemv_int8_experts): device arrays of
// every expert's gate|up and down blocks and fp32 biases. gate_up is null when the layer's experts
// are on the host or not all one run of one format that GEMV has.
struct CudaExpertTables {
  const uint8_t* const* gate_up = nullptr;
  const uint8_t* const* down = nullptr;
  const float* const* gate_up_bias = nullptr;  // null without expert biases
  const float* const* down_bias = nullptr;
  kernels::QuantFormat gate_up_format = kernels::QuantFormat::Dense;
  kernels::QuantFormat down_format = kernels::QuantFormat::Dense;
  size_t gate_up_row_bytes = 0;
  size_t down_row_bytes = 0;
};

// Builds the tables of every layer (in `storage`); layers from num_host_expert_layers on.
std::vector<CudaExpertTables> build_expert_tables(const CudaWeights& weights,
                                                  int num_host_expert_layers, DeviceBuffer& storage,
                                                  cudaStream_t stream);

struct CudaMoeHost;

// Sets up the grouped products of moe's layers whose experts are on the device: their tables,
// and the buffers of a step's rows and groups (none when no layer has tables).
void prepare_grouped_experts(CudaMoeHost& moe, const CudaWeights& weights,
                             const ModelConfig& config, int num_host_expert_layers, bool grouped,
                             cudaStream_t stream);

struct CudaMoeHost {
  std::vector<int32_t> ids;           // [num_tokens * top_k] the choice, copied back
  std::vector<int32_t> rows;          // [2 * num_tokens * top_k] ForwardBuffers::moe_rows' values
  std::vector<int64_t> expert_begin;  // [num_experts + 1] offsets of each expert's rows
  std::vector<CpuExperts> host_experts;  // [layer] for the layers whose experts stay on the host
  std::vector<float> x, out;             // [num_tokens, hidden] their input and output, fp32
  std::unique_ptr<ThreadPool> pool;      // null when no layer's experts are on the host
  MoeScratch scratch;
  // The grouped products of the layers whose experts are on the device: a step whose experts
  // each take at most QuantProducts::gemv_tokens() rows runs each projection of every expert in
  // one launch of the integer GEMV, over the rows quantized once.
  bool grouped = true;                   // CudaBackendOptions::grouped_moe_gemv
  std::vector<CudaExpertTables> tables;  // [layer]
  DeviceBuffer table_storage;
  DeviceBuffer q8;      // the rows quantized (kQuantGemvMaxTokens rows per expert at most)
  DeviceBuffer groups;  // [num_experts] kernels::ExpertRows of the step
  std::vector<kernels::ExpertRows> host_groups;
  int64_t num_grouped_layers = 0;  // layers that took the grouped products, for the counters
};

// Carves the buffers for max_tokens tokens and max_rows logits rows out of `base`, in the order
// and sizes cuda_activation_bytes counts. Precondition: base holds that many bytes.
ForwardBuffers carve_forward_buffers(void* base, const ModelConfig& config, size_t element_bytes,
                                     int max_tokens, int max_rows);

// The recurrent state of a hybrid's sequences (Backend::allocate_state_slots): fp32 slots of
// ModelConfig::state_floats() each; in a slot, every DeltaNet layer's conv state
// [conv_kernel - 1, conv_dim] then its recurrent state [num_v_heads, dk, dv], layer after layer.
struct StateSlots {
  float* base = nullptr;
  int64_t slot_floats = 0;
  int num_slots = 0;
};

// The paged KV cache: per layer, K and V of [num_blocks, block_size, num_kv_heads, head_dim] in
// the activation type, or FP8 codes with their scales ([num_blocks, block_size, num_kv_heads]
// floats) when is_fp8.
struct KvCacheLayers {
  // Indexed by layer; null for a hybrid's DeltaNet layers (only attention layers keep K and V).
  std::vector<void*> k;          // [num_layers]
  std::vector<void*> v;          // [num_layers]
  std::vector<float*> k_scales;  // [num_layers], FP8 only
  std::vector<float*> v_scales;  // [num_layers], FP8 only
  int block_size = 0;
  bool is_fp8 = false;
};

// The counts of one step, as the kernels are launched for it.
struct ForwardShape {
  int num_tokens = 0;
  int num_requests = 0;
  int num_logits_rows = 0;
  int max_blocks_per_request = 0;
  int max_query_len = 0;
  int max_seq_len = 0;
  int min_query_len = 0;
};

// Returns the attention launch parameters of a step.
kernels::PagedAttentionParams attention_params(const ModelConfig& config, int block_size,
                                               const ForwardShape& shape);

struct ForwardContext {
  const ModelConfig& config;
  const CudaWeights& weights;
  ActivationDType dtype;
  const CublasGemm& gemm;
  const ForwardBuffers& buffers;
  const KvCacheLayers& kv;
  cudaStream_t stream;
  bool dense_gemv =
      false;  // 1-8 token products of float matrices by the GEMV (dense_gemv_choice.h)
  // Mixture-of-experts models: the host side of their layers (they synchronise once per layer,
  // so such a step is never captured into a graph); null for dense models.
  CudaMoeHost* moe = nullptr;
  // How matrices kept in their blocks multiply, by token count (quant_products.h); null: always
  // from their blocks.
  const QuantProducts* quant = nullptr;
  StateSlots states;  // hybrid models
};

// Enqueues the whole forward pass for the staged batch; the fp32 logits of the shape's logits
// rows land in buffers.logits. Preconditions: the buffers hold the shape; the workspace holds
// paged_attention_workspace_bytes(attention_params(...)).
void enqueue_forward(const ForwardContext& context, const DeviceBatch& batch,
                     const ForwardShape& shape);

}  // namespace sluice
