#include "engine/backend/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "engine/backend/cuda/cuda_backend_impl.h"
#include "engine/backend/cuda/profiled_step.h"
#include "engine/core/dtype.h"
#include "kernels/block_copy.cuh"
#include "kernels/paged_attention.cuh"

namespace sluice {

namespace {

// cuBLAS's recommended workspace on Hopper; a workspace of our own is what lets products be
// captured into graphs.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

}  // namespace

std::string_view activation_dtype_name(ActivationDType dtype) {
  switch (dtype) {
    case ActivationDType::F32:
      return "fp32";
    case ActivationDType::F16:
      return "fp16";
    case ActivationDType::BF16:
      return "bf16";
  }
  return "?";
}

ActivationDType parse_activation_dtype(std::string_view name) {
  if (name == "fp32" || name == "f32") return ActivationDType::F32;
  if (name == "fp16" || name == "f16") return ActivationDType::F16;
  if (name == "bf16") return ActivationDType::BF16;
  fail("unknown activation type '", name, "' (bf16, fp16 or fp32)");
}

CudaBackend::Impl::Impl(const Model& m, const CudaBackendOptions& o)
    : model(m),
      config(m.config),
      options(o),
      element_bytes(activation_element_bytes(o.activation_dtype)) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fail("device cuda:", o.device_index, ": no usable GPU: ", cudaGetErrorString(status));
  }
  if (o.device_index < 0 || o.device_index >= count)
    fail("device cuda:", o.device_index, ": there are ", count, " CUDA devices");
  if (const std::string missing = cuda_unsupported_features(config); !missing.empty()) {
    fail("device cuda:", o.device_index, ": ", config.architecture, " needs ", missing,
         ", which the CUDA backend does not run yet; use --device cpu");
  }
  make_device_current(o.device_index);
  cudaDeviceProp prop{};
  SLUICE_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device_index));
  device_name = prop.name;
  stream = std::make_unique<CudaStream>();
  gemm = std::make_unique<CublasGemm>(stream->get(), kCublasWorkspaceBytes);
  num_host_expert_layers =
      config.is_moe() ? std::clamp(o.num_host_expert_layers, 0, config.num_layers) : 0;
  weights = std::make_unique<CudaWeights>(m.weights, config, o.activation_dtype, stream->get(),
                                          num_host_expert_layers);
  if (config.is_moe()) make_moe_host();
  if (o.dense_gemv) {
    dense_gemv = {*o.dense_gemv, *o.dense_gemv ? "GEMV (asked for)" : "cuBLAS (asked for)"};
  } else {
    dense_gemv = choose_dense_gemv(*weights, *gemm, o.activation_dtype, stream->get());
  }
  quant_products = make_quant_products(
      *weights, *gemm, o.activation_dtype,
      QuantProductsSetup{
          .direct_max_tokens = o.quant_direct_max_tokens,
          .scratch_max_bytes = o.quant_scratch_max_bytes,
          .mmq_chunk_tokens = std::max(1, o.quant_mmq_chunk_tokens),
          .mmq_parts =
              o.quant_mmq_parts ? std::clamp(*o.quant_mmq_parts, 1, kernels::kMmqMostParts) : 0,
          .sms = prop.multiProcessorCount},
      quant_buffers, stream->get());
  if (o.quant_tiles_min_tokens && quant_products.scratch) {
    quant_products.tiles_min_tokens =
        std::clamp(*o.quant_tiles_min_tokens, 1, kernels::kQuantGemvMaxTokens + 1);
    quant_products.reason +=
        "; tiles from " + std::to_string(quant_products.tiles_min_tokens) + " tokens (asked for)";
  }
  if (o.quant_mmq && quant_products.scratch) {
    quant_products.mmq = *o.quant_mmq;
    quant_products.reason +=
        *o.quant_mmq ? "; integer tiles (asked for)" : "; 16-bit tiles (asked for)";
  }
  if (o.quant_mmq_parts && quant_products.scratch) {
    quant_products.reason += "; the integer tiles' K in " +
                             std::to_string(quant_products.mmq_parts) + " parts (asked for)";
  }
  if (quant_products.int8_gemv && o.fused_norm_quantize && config.hidden_size % 32 == 0) {
    quant_normed_q8 =
        DeviceBuffer(kernels::q8_rows_bytes(kernels::kQuantInt8GemvMaxTokens, config.hidden_size),
                     "the norms' quantized outputs");
    quant_products.normed_q8 = quant_normed_q8.get();
  }
  const int ffn = config.intermediate_size;
  if (quant_products.int8_gemv && o.fused_norm_quantize && ffn > 0 && ffn % 32 == 0) {
    quant_hidden_q8 = DeviceBuffer(kernels::q8_rows_bytes(kernels::kQuantInt8GemvMaxTokens, ffn),
                                   "the gated activations' quantized outputs");
    quant_products.hidden_q8 = quant_hidden_q8.get();
  }
  if (moe) {
    prepare_grouped_experts(*moe, *weights, config, num_host_expert_layers, o.grouped_moe_gemv,
                            stream->get());
  }
  for (int l = 0; l < config.num_layers; ++l) {
    if (!config.is_deltanet_layer(l)) attention_layers.push_back(l);
  }
  kv.k.resize(static_cast<size_t>(config.num_layers));
  kv.v.resize(static_cast<size_t>(config.num_layers));
  kv.is_fp8 = o.kv_cache_dtype == KvCacheDType::Fp8;
  kv.k_scales.resize(kv.is_fp8 ? kv.k.size() : 0);
  kv.v_scales.resize(kv.is_fp8 ? kv.v.size() : 0);
  graph_batch_sizes = cuda_graph_batch_sizes(256);
  graph_max_model_len = config.max_position_embeddings;
}

void CudaBackend::Impl::make_moe_host() {
  // A mixture-of-experts layer synchronises with the host (the choice groups the tokens), which a
  // graph cannot capture.
  options.enable_cuda_graphs = false;
  moe = std::make_unique<CudaMoeHost>();
  if (num_host_expert_layers == 0) return;
  moe->pool = std::make_unique<ThreadPool>(options.num_host_threads);
  const auto widen = [](const WeightTensor& t) {
    std::vector<float> out(static_cast<size_t>(t.num_elements()));
    dequantize_row(t.dtype, t.data, out.data(), t.num_elements());
    return out;
  };
  using enum WeightRole;
  for (int l = 0; l < num_host_expert_layers; ++l) {
    const LayerWeights& layer = model.weights.layers[static_cast<size_t>(l)];
    const LayerExperts& stacks = model.weights.experts[static_cast<size_t>(l)];
    CpuExperts& e = moe->host_experts.emplace_back();
    e.router = CpuMatrix(layer[Router]);
    if (!layer[RouterBias].empty()) e.router_bias = widen(layer[RouterBias]);
    for (const WeightTensor& t : stacks[GateExps]) e.gate.emplace_back(t);
    for (const WeightTensor& t : stacks[UpExps]) e.up.emplace_back(t);
    for (const WeightTensor& t : stacks[DownExps]) e.down.emplace_back(t);
    for (const WeightTensor& t : stacks[GateExpsBias]) e.gate_bias.push_back(widen(t));
    for (const WeightTensor& t : stacks[UpExpsBias]) e.up_bias.push_back(widen(t));
    for (const WeightTensor& t : stacks[DownExpsBias]) e.down_bias.push_back(widen(t));
  }
}

// Decode-only steps (one sampled token per request) that fit a bucket are padded to it: with
// graphs on they replay the bucket's graph, with graphs off they run the same launches eagerly,
// so switching graphs changes how the work is launched and never what is computed.
ForwardShape CudaBackend::Impl::plan_shape(const BatchInputs& in,
                                           std::optional<CudaGraphKey>& key) {
  int max_seq_len = 0;
  int max_query_len = 0;
  int min_query_len = 0;
  for (int r = 0; r < in.num_requests(); ++r) {
    const auto i = static_cast<size_t>(r);
    const int query_len = in.query_start_loc[i + 1] - in.query_start_loc[i];
    max_seq_len = std::max(max_seq_len, in.seq_lens[i]);
    max_query_len = std::max(max_query_len, query_len);
    min_query_len = r == 0 ? query_len : std::min(min_query_len, query_len);
  }
  const int bucket =
      is_uniform_decode(in) ? cuda_graph_batch_bucket(in.num_requests(), graph_batch_sizes) : 0;
  if (bucket > 0 && max_seq_len <= graph_max_model_len) {
    const int seq_bucket =
        cuda_graph_seq_len_bucket(max_seq_len, graph_max_model_len, kv.block_size);
    const int stride = seq_bucket / kv.block_size;
    pad_decode_batch(in, bucket, stride, padding_block_id(), kv.block_size, padded);
    counters.num_padded_rows += bucket - in.num_requests();
    key = CudaGraphKey{bucket, seq_bucket};
    return ForwardShape{bucket, bucket, bucket, stride, 1, seq_bucket, 1};
  }
  key.reset();
  return ForwardShape{in.num_tokens(),
                      in.num_requests(),
                      static_cast<int>(in.logits_indices.size()),
                      in.max_blocks_per_request,
                      max_query_len,
                      max_seq_len,
                      min_query_len};
}

int CudaBackend::Impl::enqueue_step(const BatchInputs& in) {
  validate_batch_inputs(in, BatchLimits{.vocab_size = config.vocab_size,
                                        .max_position_embeddings = config.max_position_embeddings,
                                        .num_blocks = num_blocks,
                                        .block_size = kv.block_size,
                                        .kv_window = config.kv_window(),
                                        .num_state_slots = num_state_slots});
  std::optional<CudaGraphKey> key;
  const ForwardShape shape = plan_shape(in, key);
  const BatchInputs& batch = key ? padded : in;
  ensure_step_buffers(shape.num_tokens, shape.num_logits_rows);
  ensure_attention_workspace(
      kernels::paged_attention_workspace_bytes(attention_params(config, kv.block_size, shape)));
  const CudaBatchLayout layout = cuda_batch_layout(
      shape.num_tokens, shape.num_requests, shape.max_blocks_per_request, shape.num_logits_rows);
  if (batch_staging.reserve_device(layout.total_bytes, "a step's inputs")) graphs.clear();
  pack_batch_inputs(batch, layout, batch_staging.acquire(layout.total_bytes));
  const DeviceBatch device =
      device_batch(layout, batch_staging.commit(layout.total_bytes, stream->get()));
  const ForwardContext ctx = context();
  if (key && options.enable_cuda_graphs && graphs.contains(*key)) {
    graphs.launch(*key, stream->get());
    ++counters.num_graph_replays;
    return static_cast<int>(in.logits_indices.size());
  }
  {
    const ProfiledStep profiled(shape.num_tokens);
    enqueue_forward(ctx, device, shape);
  }
  ++counters.num_eager_steps;
  if (key && options.enable_cuda_graphs) {
    // The first step of a shape runs eagerly (warming kernels and cuBLAS), then is captured. A
    // capture that fails turns graphs off rather than failing a run that works without them.
    try {
      graphs.capture(*key, stream->get(), [&] { enqueue_forward(ctx, device, shape); });
      ++counters.num_graph_captures;
    } catch (const Error& e) {
      options.enable_cuda_graphs = false;
      graphs.clear();
      graph_error = e.what();
    }
  }
  return static_cast<int>(in.logits_indices.size());
}

void CudaBackend::Impl::ensure_step_buffers(int num_tokens, int num_rows) {
  if (num_tokens <= capacity_tokens && num_rows <= capacity_rows) return;
  num_tokens = std::max(num_tokens, capacity_tokens);
  num_rows = std::max(num_rows, capacity_rows);
  synchronize();  // nothing in flight may still use the old buffers
  graphs.clear();
  activations.reset();
  activations = DeviceBuffer(cuda_activation_bytes(config, element_bytes, num_tokens, num_rows),
                             "activations");
  void* workspace = buffers.attention_workspace;
  const size_t workspace_bytes = buffers.attention_workspace_bytes;
  buffers = carve_forward_buffers(activations.get(), config, element_bytes, num_tokens, num_rows);
  buffers.attention_workspace = workspace;
  buffers.attention_workspace_bytes = workspace_bytes;
  sampled_tokens = DeviceBuffer(static_cast<size_t>(num_rows) * sizeof(int32_t), "sampled tokens");
  sampled_tokens_host = PinnedBuffer(static_cast<size_t>(num_rows) * sizeof(int32_t));
  capacity_tokens = num_tokens;
  capacity_rows = num_rows;
}

void CudaBackend::Impl::ensure_attention_workspace(size_t bytes) {
  if (bytes <= attention_workspace.bytes() && attention_workspace.get()) return;
  synchronize();
  graphs.clear();
  attention_workspace.reset();
  attention_workspace = DeviceBuffer(std::max<size_t>(bytes, 256), "the attention workspace");
  buffers.attention_workspace = attention_workspace.get();
  buffers.attention_workspace_bytes = attention_workspace.bytes();
}

CudaBackend::CudaBackend(const Model& model, const CudaBackendOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {}

CudaBackend::~CudaBackend() {
  if (impl_ && impl_->stream) {
    cudaSetDevice(impl_->options.device_index);
    cudaStreamSynchronize(impl_->stream->get());  // errors here cannot be reported
  }
}

std::string CudaBackend::name() const {
  return str_cat("cuda:", impl_->options.device_index);
}

size_t CudaBackend::kv_block_bytes(int block_size) const {
  return static_cast<size_t>(block_size) * cuda_kv_bytes_per_token(impl_->config,
                                                                   impl_->element_bytes,
                                                                   impl_->options.kv_cache_dtype);
}

void CudaBackend::allocate_kv_cache(int num_blocks, int block_size) {
  Impl& s = *impl_;
  if (num_blocks <= 0 || block_size <= 0)
    fail("KV cache: need at least one block of at least one token");
  make_device_current(s.options.device_index);
  s.synchronize();
  s.graphs.clear();
  s.kv_pool.reset();
  s.num_blocks = 0;
  const CudaKvLayerLayout layout =
      cuda_kv_layer_layout(s.config, s.element_bytes, s.options.kv_cache_dtype,
                           static_cast<size_t>(num_blocks + 1) * static_cast<size_t>(block_size));
  const size_t num_layers = s.attention_layers.size();
  s.kv_pool = DeviceBuffer(num_layers * layout.total_bytes,
                           str_cat("the KV cache (", num_blocks,
                                   " blocks; lower --kv-blocks, "
                                   "--kv-cache-bytes or --gpu-memory-utilization)")
                               .c_str());
  // Zeroed as the CPU pool is: bytes never written by a request are never NaN.
  SLUICE_CUDA_CHECK(cudaMemsetAsync(s.kv_pool.get(), 0, s.kv_pool.bytes(), s.stream->get()));
  std::vector<void*> pointers((s.kv.is_fp8 ? 4 : 2) * num_layers);
  for (size_t i = 0; i < num_layers; ++i) {
    const auto l = static_cast<size_t>(s.attention_layers[i]);
    unsigned char* base = s.kv_pool.as<unsigned char>() + i * layout.total_bytes;
    s.kv.k[l] = base + layout.k;
    s.kv.v[l] = base + layout.v;
    pointers[i] = s.kv.k[l];
    pointers[num_layers + i] = s.kv.v[l];
    if (s.kv.is_fp8) {
      s.kv.k_scales[l] = reinterpret_cast<float*>(base + layout.k_scales);
      s.kv.v_scales[l] = reinterpret_cast<float*>(base + layout.v_scales);
      pointers[2 * num_layers + i] = s.kv.k_scales[l];
      pointers[3 * num_layers + i] = s.kv.v_scales[l];
    }
  }
  if (!s.kv_layer_pointers.get())
    s.kv_layer_pointers = DeviceBuffer(pointers.size() * sizeof(void*), "KV layer pointers");
  // On the compute stream: a plain cudaMemcpy runs on the legacy stream, which the non-blocking
  // compute stream does not wait for.
  SLUICE_CUDA_CHECK(cudaMemcpyAsync(s.kv_layer_pointers.get(), pointers.data(),
                                    pointers.size() * sizeof(void*), cudaMemcpyHostToDevice,
                                    s.stream->get()));
  s.kv.block_size = block_size;
  s.num_blocks = num_blocks;
  s.synchronize();
}

void CudaBackend::copy_blocks(std::span<const int32_t> src_block_ids,
                              std::span<const int32_t> dst_block_ids) {
  Impl& s = *impl_;
  if (src_block_ids.size() != dst_block_ids.size())
    fail("copy_blocks: ", src_block_ids.size(), " sources for ", dst_block_ids.size(), " targets");
  if (src_block_ids.empty()) return;
  for (const auto ids : {src_block_ids, dst_block_ids}) {
    for (const int32_t id : ids) {
      if (id < 0 || id >= s.num_blocks)
        fail("copy_blocks: block id ", id, " is outside the pool (", s.num_blocks, " blocks)");
    }
  }
  make_device_current(s.options.device_index);
  const size_t n = src_block_ids.size();
  const size_t bytes = 2 * n * sizeof(int32_t);
  s.copy_staging.reserve_device(bytes, "block copy ids");
  unsigned char* host = s.copy_staging.acquire(bytes);
  std::memcpy(host, src_block_ids.data(), n * sizeof(int32_t));
  std::memcpy(host + n * sizeof(int32_t), dst_block_ids.data(), n * sizeof(int32_t));
  const auto* ids = static_cast<const int32_t*>(s.copy_staging.commit(bytes, s.stream->get()));
  const int64_t block_elements = static_cast<int64_t>(s.kv.block_size) * s.config.kv_size();
  const auto num_layers = static_cast<int>(s.attention_layers.size());
  if (s.kv.is_fp8) {
    auto* const* codes = s.kv_layer_pointers.as<uint8_t* const>();
    auto* const* scales = s.kv_layer_pointers.as<float* const>() + 2 * num_layers;
    SLUICE_KERNEL_CHECK(kernels::copy_blocks<uint8_t>(codes, codes + num_layers, ids, ids + n,
                                                      static_cast<int>(n), num_layers,
                                                      block_elements, s.stream->get()));
    SLUICE_KERNEL_CHECK(kernels::copy_blocks<float>(
        scales, scales + num_layers, ids, ids + n, static_cast<int>(n), num_layers,
        static_cast<int64_t>(s.kv.block_size) * s.config.num_kv_heads, s.stream->get()));
    return;
  }
  visit_activation_type(s.options.activation_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* const* layers = s.kv_layer_pointers.as<T* const>();
    SLUICE_KERNEL_CHECK(kernels::copy_blocks<T>(layers, layers + num_layers, ids, ids + n,
                                                static_cast<int>(n), num_layers, block_elements,
                                                s.stream->get()));
  });
}

size_t CudaBackend::state_slot_bytes() const {
  return static_cast<size_t>(impl_->config.state_floats()) * sizeof(float);
}

void CudaBackend::allocate_state_slots(int num_slots) {
  Impl& s = *impl_;
  if (num_slots < 0) fail("state slots: ", num_slots, " slots");
  if (num_slots > 0 && !s.config.is_hybrid())
    fail(name(), ": ", s.config.architecture, " has no recurrent layers to hold state for");
  make_device_current(s.options.device_index);
  s.synchronize();
  s.graphs.clear();  // they bake in the pool's address
  s.state_pool.reset();
  s.num_state_slots = 0;
  if (num_slots == 0) return;
  s.state_pool = DeviceBuffer(static_cast<size_t>(num_slots) * state_slot_bytes(),
                              str_cat("the recurrent state (", num_slots, " slots)").c_str());
  // Zeroed, as the KV pool is: a slot never written is never NaN.
  SLUICE_CUDA_CHECK(cudaMemsetAsync(s.state_pool.get(), 0, s.state_pool.bytes(), s.stream->get()));
  s.num_state_slots = num_slots;
  s.synchronize();
}

void CudaBackend::copy_state_slots(std::span<const int32_t> src_slots,
                                   std::span<const int32_t> dst_slots) {
  Impl& s = *impl_;
  if (src_slots.size() != dst_slots.size())
    fail("copy_state_slots: ", src_slots.size(), " sources for ", dst_slots.size(), " targets");
  for (const auto slots : {src_slots, dst_slots}) {
    for (const int32_t slot : slots) {
      if (slot < 0 || slot >= s.num_state_slots)
        fail("copy_state_slots: slot ", slot, " is outside the ", s.num_state_slots, " slots");
    }
  }
  if (src_slots.empty()) return;
  make_device_current(s.options.device_index);
  const size_t bytes = state_slot_bytes();
  auto* base = s.state_pool.as<unsigned char>();
  // In order on the compute stream, so before the next step reads them.
  for (size_t i = 0; i < src_slots.size(); ++i) {
    if (src_slots[i] == dst_slots[i]) continue;
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(base + static_cast<size_t>(dst_slots[i]) * bytes,
                                      base + static_cast<size_t>(src_slots[i]) * bytes, bytes,
                                      cudaMemcpyDeviceToDevice, s.stream->get()));
  }
}

void CudaBackend::forward(const BatchInputs& inputs, std::vector<float>& logits) {
  Impl& s = *impl_;
  make_device_current(s.options.device_index);
  const int num_rows = s.enqueue_step(inputs);
  const size_t count = static_cast<size_t>(num_rows) * static_cast<size_t>(s.config.vocab_size);
  logits.resize(count);
  // The only synchronisation of a step: the logits the host sampler needs.
  if (count > 0) {
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), s.buffers.logits, count * sizeof(float),
                                      cudaMemcpyDeviceToHost, s.stream->get()));
  }
  s.synchronize();
}

void CudaBackend::Impl::reserve_activations(const MemoryPlanRequest& limits) {
  if (limits.max_num_batched_tokens < 1 || limits.max_num_seqs < 1 || limits.block_size < 1)
    fail("CUDA backend: step limits must be positive");
  make_device_current(options.device_index);
  const int max_len = limits.max_model_len > 0
                          ? std::min(limits.max_model_len, config.max_position_embeddings)
                          : config.max_position_embeddings;
  const int max_decode = std::min(limits.max_num_seqs, limits.max_num_batched_tokens);
  graphs.clear();
  graph_max_model_len = max_len;
  graph_batch_sizes = cuda_graph_batch_sizes(max_decode);
  const int max_graph = graph_batch_sizes.back();
  const int max_tokens = std::max(limits.max_num_batched_tokens, max_graph);
  const int max_rows = std::max(max_decode, max_graph);
  ensure_step_buffers(max_tokens, max_rows);

  // The attention workspace and staged inputs of the largest eager step and decode graph.
  const int stride = (max_len + limits.block_size - 1) / limits.block_size;
  const int seq_bucket = cuda_graph_seq_len_bucket(max_len, max_len, limits.block_size);
  const ForwardShape decode{max_graph, max_graph, max_graph, seq_bucket / limits.block_size,
                            1,         seq_bucket};
  size_t workspace =
      kernels::paged_attention_workspace_bytes(attention_params(config, limits.block_size, decode));
  for (const int query_len : {1, limits.max_num_batched_tokens}) {
    const ForwardShape eager{
        limits.max_num_batched_tokens, max_decode, max_decode, stride, query_len, max_len};
    workspace = std::max(workspace, kernels::paged_attention_workspace_bytes(
                                        attention_params(config, limits.block_size, eager)));
  }
  ensure_attention_workspace(workspace);
  const size_t staged =
      std::max(cuda_batch_layout(max_tokens, max_decode, stride, max_decode).total_bytes,
               cuda_batch_layout(max_graph, max_graph, decode.max_blocks_per_request, max_graph)
                   .total_bytes);
  batch_staging.reserve_device(staged, "a step's inputs");
  ensure_sampling_workspace(kernels::sampling_workspace_bytes(max_rows, config.vocab_size));
}

size_t CudaBackend::determine_available_memory(const MemoryPlanRequest& request) {
  make_device_current(impl_->options.device_index);
  impl_->reserve_activations(request);
  if (request.is_pool_fixed) return 0;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  SLUICE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return plan_cuda_kv_cache(
             CudaMemoryPlanInputs{.device_total_bytes = total_bytes,
                                  .device_free_bytes = free_bytes,
                                  .gpu_memory_utilization = request.gpu_memory_utilization,
                                  .kv_block_bytes = kv_block_bytes(request.block_size),
                                  .num_reserved_blocks = 1})
      .kv_cache_bytes;
}

BackendMemory CudaBackend::memory() const {
  const Impl& s = *impl_;
  make_device_current(s.options.device_index);
  BackendMemory m;
  m.weight_bytes = s.weights->bytes();
  m.host_weight_bytes = s.host_expert_bytes();
  m.kv_cache_bytes = s.kv_pool.bytes();
  m.state_bytes = s.state_pool.bytes();
  m.activation_bytes =
      s.activations.bytes() + s.attention_workspace.bytes() + s.gemm->workspace_bytes() +
      s.sampling_workspace.bytes() + s.batch_staging.device_bytes() +
      s.copy_staging.device_bytes() + s.sampling_staging.device_bytes() + s.sampled_tokens.bytes() +
      s.raw_logits.bytes() + s.logprob_results.bytes() + s.quant_buffers.bytes() +
      s.quant_normed_q8.bytes() + s.quant_hidden_q8.bytes() +
      (s.moe ? s.moe->table_storage.bytes() + s.moe->q8.bytes() + s.moe->groups.bytes() : 0);
  SLUICE_CUDA_CHECK(cudaMemGetInfo(&m.device_free_bytes, &m.device_total_bytes));
  return m;
}

std::string CudaBackend::Impl::moe_summary() const {
  if (num_host_expert_layers == 0) return ", every expert on the device";
  return str_cat(", experts of ", num_host_expert_layers, " of ", config.num_layers,
                 " layers in host memory (", host_expert_bytes() >> 20, " MiB, ",
                 moe->pool->num_threads(), " CPU threads)");
}

std::string CudaBackend::describe() const {
  const Impl& s = *impl_;
  return str_cat(
      name(), " ", s.device_name, ": ", activation_dtype_name(s.options.activation_dtype),
      s.kv.is_fp8 ? " activations, FP8 E4M3 KV cache (a scale per token and head), "
                  : " activations and KV cache, ",
      s.weights->conversion_summary(), ", 1-8 token float products by ", s.dense_gemv.reason,
      s.quant_products.reason.empty() ? "" : ", products in blocks: ", s.quant_products.reason,
      ", CUDA graphs ", s.options.enable_cuda_graphs ? "on" : "off",
      s.graph_error.empty() ? "" : " (capture failed: " + s.graph_error + ")",
      s.config.is_moe() ? s.moe_summary() : "");
}

const CudaStepCounters& CudaBackend::step_counters() const {
  impl_->counters.num_grouped_moe_layers = impl_->moe ? impl_->moe->num_grouped_layers : 0;
  impl_->counters.num_fused_norm_quantizes = impl_->quant_products.num_fused_norms;
  impl_->counters.num_fused_activation_quantizes = impl_->quant_products.num_fused_activations;
  return impl_->counters;
}

ActivationDType CudaBackend::activation_dtype() const {
  return impl_->options.activation_dtype;
}

int CudaBackend::device_index() const {
  return impl_->options.device_index;
}

}  // namespace sluice
