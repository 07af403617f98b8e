// CudaBackend::Impl, the CUDA backend's state, for the files that implement it:
// cuda_backend.cpp (construction, the KV cache and state slots, the forward pass, memory) and
// cuda_backend_sampling.cpp (sampling on the device, log-probabilities). Not a public header.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/cuda/cublas_gemm.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_forward.h"
#include "engine/backend/cuda/cuda_graphs.h"
#include "engine/backend/cuda/cuda_sampling.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/cuda_weight_layout.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/backend/cuda/dense_gemv_choice.h"
#include "engine/backend/cuda/pinned_batch.h"
#include "engine/backend/cuda/quant_products.h"
#include "kernels/logprobs.cuh"

namespace sluice {

// The 32-bit words of one row's log-probability results: the chosen token's, then the likeliest
// tokens' ids and log-probabilities.
inline constexpr size_t kLogprobWords = 1 + 2 * static_cast<size_t>(kernels::kMaxTopLogprobs);

struct CudaBackend::Impl {
  Impl(const Model& m, const CudaBackendOptions& o);

  // Enqueues the inputs' copy and the forward pass; returns the number of logits rows.
  int enqueue_step(const BatchInputs& in);
  ForwardShape plan_shape(const BatchInputs& in, std::optional<CudaGraphKey>& key);
  void ensure_step_buffers(int num_tokens, int num_rows);
  // Builds the host side of a mixture-of-experts model (graphs off; the host layers' experts).
  void make_moe_host();
  // The bytes of the experts kept in host memory (read in place from the model).
  size_t host_expert_bytes() const {
    return cuda_host_expert_bytes(model.weights, num_host_expert_layers);
  }
  // For describe(): where the experts are.
  std::string moe_summary() const;
  void ensure_attention_workspace(size_t bytes);
  void ensure_sampling_workspace(size_t bytes);
  // Sizes raw_logits and the log-probability results for capacity_rows rows.
  void ensure_logprob_buffers();
  // Allocates the activations and workspaces of the largest step limits allows, and sizes the
  // decode graphs for it.
  void reserve_activations(const MemoryPlanRequest& limits);
  void synchronize() const { SLUICE_CUDA_CHECK(cudaStreamSynchronize(stream->get())); }
  int32_t padding_block_id() const { return num_blocks; }  // the block past the engine's pool
  ForwardContext context() const {
    return ForwardContext{
        config,
        *weights,
        options.activation_dtype,
        *gemm,
        buffers,
        kv,
        stream->get(),
        dense_gemv.use_gemv,
        moe.get(),
        &quant_products,
        StateSlots{state_pool.as<float>(), config.state_floats(), num_state_slots}};
  }

  const Model& model;
  ModelConfig config;
  CudaBackendOptions options;
  std::string device_name;
  size_t element_bytes;
  std::unique_ptr<CudaStream> stream;
  std::unique_ptr<CudaWeights> weights;
  std::unique_ptr<CublasGemm> gemm;
  DenseGemvChoice dense_gemv;          // how float matrices multiply 1-8 tokens
  QuantProductsBuffers quant_buffers;  // the products' in blocks (quant_products.h)
  DeviceBuffer quant_normed_q8;      // a norm's output quantized for the GEMV (fused_norm_quantize)
  DeviceBuffer quant_hidden_q8;      // a gated activation's output so quantized
  QuantProducts quant_products;      // how matrices in blocks multiply, by token count
  std::unique_ptr<CudaMoeHost> moe;  // mixture-of-experts models only
  int num_host_expert_layers = 0;    // layers whose experts stay on the host

  // The pool holds num_blocks blocks for the engine and one more, the last, that padded decode
  // rows write into, so padding never touches a request's KV.
  DeviceBuffer kv_pool;
  // [2, num_attention_layers]: every attention layer's K, then every one's V; with an FP8 cache
  // followed by [2, num_attention_layers] more: their K scales, then their V scales.
  DeviceBuffer kv_layer_pointers;
  KvCacheLayers kv;
  int num_blocks = 0;
  std::vector<int> attention_layers;  // the layers that keep K and V (all but a hybrid's DeltaNet)

  // A hybrid's recurrent state: num_state_slots slots of config.state_floats() fp32 values.
  DeviceBuffer state_pool;
  int num_state_slots = 0;

  DeviceBuffer activations;
  DeviceBuffer attention_workspace;
  ForwardBuffers buffers;
  int capacity_tokens = 0;
  int capacity_rows = 0;
  PinnedStaging batch_staging;
  PinnedStaging copy_staging;
  BatchInputs padded;  // the padded decode batch, reused

  std::vector<int> graph_batch_sizes;
  int graph_max_model_len = 0;
  CudaGraphCache graphs;
  std::string graph_error;  // why graphs were turned off, when a capture failed

  DeviceBuffer sampling_workspace;
  DeviceBuffer sampled_tokens;       // [capacity_rows] int32
  PinnedBuffer sampled_tokens_host;  // [capacity_rows] int32
  PinnedStaging sampling_staging;
  std::vector<bool> rows_masked_empty;  // [num_rows] of the last step: a mask allowed nothing
  PackedSamplingRows packed_rows;
  // Log-probabilities (kernels/logprobs.cuh), allocated on the first step whose rows ask for them:
  // the raw logits copied before sampling changes them, and per row the chosen token's
  // log-probability and the likeliest tokens' ids and log-probabilities.
  DeviceBuffer raw_logits;       // [capacity_rows, vocab] fp32
  DeviceBuffer logprob_results;  // [capacity_rows] x kLogprobWords 32-bit words
  PinnedBuffer logprob_results_host;
  std::vector<int32_t> num_top;  // [num_rows] of the step: logprobs wanted, or -1

  CudaStepCounters counters;
};

}  // namespace sluice
