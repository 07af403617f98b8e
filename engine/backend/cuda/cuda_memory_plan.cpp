#include "engine/backend/cuda/cuda_memory_plan.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr size_t align_to(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

}  // namespace

size_t cuda_activation_bytes(const ModelConfig& config, size_t element_bytes, int max_num_tokens,
                             int max_num_logits_rows) {
  const auto tokens = static_cast<size_t>(std::max(max_num_tokens, 0));
  const auto rows = static_cast<size_t>(std::max(max_num_logits_rows, 0));
  const auto hidden = static_cast<size_t>(config.hidden_size);
  const auto q = static_cast<size_t>(config.q_size());
  const auto kv = static_cast<size_t>(config.kv_size());
  const auto ffn = static_cast<size_t>(config.intermediate_size);
  const auto vocab = static_cast<size_t>(config.vocab_size);
  size_t total = 0;
  // Per token: residual, alternate residual, normed input, q|k|v, attention out, gate|up.
  for (const size_t width : {hidden, hidden, hidden, q + 2 * kv, q, 2 * ffn})
    total += align_to(tokens * width * element_bytes, 256);
  // Per logits row: the two gathered rows, their normed sum, and fp32 logits.
  for (int i = 0; i < 3; ++i) total += align_to(rows * hidden * element_bytes, 256);
  total += align_to(rows * vocab * sizeof(float), 256);
  if (config.is_moe()) {
    // Mixture of experts (carve_forward_buffers): the fp32 input of the router, its logits, the
    // choice (ids, weights), the row maps, then per (token, slot) the gathered input, gate|up and
    // the fp32 expert output.
    const auto experts = static_cast<size_t>(config.num_experts);
    const auto slots = tokens * static_cast<size_t>(config.num_experts_used);
    const auto expert_ffn = static_cast<size_t>(config.expert_intermediate_size);
    total += align_to(tokens * hidden * sizeof(float), 256);
    total += align_to(tokens * experts * sizeof(float), 256);
    total += 2 * align_to(slots * 4, 256);  // ids, weights
    total += align_to(2 * slots * 4, 256);  // token of each grouped row, row of each slot
    total += align_to(slots * hidden * element_bytes, 256);
    total += align_to(slots * 2 * expert_ffn * element_bytes, 256);
    total += align_to(slots * hidden * sizeof(float), 256);
  }
  total += cuda_hybrid_activation_bytes(config, element_bytes, max_num_tokens);
  return total;
}

size_t cuda_hybrid_activation_bytes(const ModelConfig& config, size_t element_bytes,
                                    int max_num_tokens) {
  const auto tokens = static_cast<size_t>(std::max(max_num_tokens, 0));
  size_t total = 0;
  if (config.is_hybrid()) {
    const DeltaNetConfig& d = config.deltanet;
    const auto value = static_cast<size_t>(d.value_dim());
    // The stacked input product (fp32), the delta rule's output (fp32), the gated norm's (T).
    total += align_to(tokens * static_cast<size_t>(cuda_deltanet_row_width(config)) * 4, 256);
    total += align_to(tokens * value * 4, 256);
    total += align_to(tokens * value * element_bytes, 256);
  }
  if (config.attn_output_gate) {
    const auto q = static_cast<size_t>(config.q_size());
    const auto kv = static_cast<size_t>(config.kv_size());
    // The doubled q projection's rows, and the gate split from them.
    total += align_to(tokens * (2 * q + 2 * kv) * element_bytes, 256);
    total += align_to(tokens * q * element_bytes, 256);
  }
  if (config.shared_expert_intermediate_size > 0) {
    const auto ffn = static_cast<size_t>(config.shared_expert_intermediate_size);
    // Its gate|up (T), its output (fp32), its router logit (fp32).
    total += align_to(tokens * 2 * ffn * element_bytes, 256);
    total += align_to(tokens * static_cast<size_t>(config.hidden_size) * 4, 256);
    total += align_to(tokens * 4, 256);
  }
  return total;
}

CudaKvLayerLayout cuda_kv_layer_layout(const ModelConfig& config, size_t element_bytes,
                                       KvCacheDType dtype, size_t num_slots) {
  const auto kv = static_cast<size_t>(config.kv_size());
  const bool is_fp8 = dtype == KvCacheDType::Fp8;
  const size_t values = align_to(num_slots * kv * (is_fp8 ? 1 : element_bytes), 256);
  CudaKvLayerLayout layout;
  layout.k = 0;
  layout.v = values;
  layout.total_bytes = 2 * values;
  if (is_fp8) {
    const size_t scales =
        align_to(num_slots * static_cast<size_t>(config.num_kv_heads) * sizeof(float), 256);
    layout.k_scales = layout.total_bytes;
    layout.v_scales = layout.k_scales + scales;
    layout.total_bytes += 2 * scales;
  }
  return layout;
}

size_t cuda_kv_bytes_per_token(const ModelConfig& config, size_t element_bytes,
                               KvCacheDType dtype) {
  const auto kv = static_cast<size_t>(config.kv_size());
  const size_t per_layer = dtype == KvCacheDType::Fp8
                               ? kv + static_cast<size_t>(config.num_kv_heads) * sizeof(float)
                               : kv * element_bytes;
  // Only attention layers keep K and V (a hybrid's DeltaNet layers keep a state slot instead).
  return 2 * static_cast<size_t>(config.num_attention_layers()) * per_layer;
}

CudaBatchLayout cuda_batch_layout(int num_tokens, int num_requests, int max_blocks_per_request,
                                  int num_logits_rows) {
  assert(num_tokens >= 0 && num_requests >= 0 && max_blocks_per_request >= 0 &&
         num_logits_rows >= 0);  // counts of a batch
  CudaBatchLayout layout;
  size_t offset = 0;
  auto place = [&offset](size_t& field, size_t bytes) {
    field = offset;
    offset = align_to(offset + bytes, 16);
  };
  const auto tokens = static_cast<size_t>(num_tokens);
  const auto requests = static_cast<size_t>(num_requests);
  place(layout.token_ids, tokens * sizeof(int32_t));
  place(layout.positions, tokens * sizeof(int32_t));
  place(layout.slot_mapping, tokens * sizeof(int64_t));
  place(layout.query_start_loc, (requests + 1) * sizeof(int32_t));
  place(layout.seq_lens, requests * sizeof(int32_t));
  place(layout.block_tables,
        requests * static_cast<size_t>(max_blocks_per_request) * sizeof(int32_t));
  place(layout.logits_indices, static_cast<size_t>(num_logits_rows) * sizeof(int32_t));
  place(layout.state_slots, requests * sizeof(int32_t));
  layout.total_bytes = offset;
  return layout;
}

CudaMemoryPlan plan_cuda_kv_cache(const CudaMemoryPlanInputs& in) {
  if (!(in.gpu_memory_utilization > 0.0 && in.gpu_memory_utilization <= 1.0))
    fail("--gpu-memory-utilization must be in (0, 1], got ", in.gpu_memory_utilization);
  if (in.kv_block_bytes == 0) fail("GPU memory plan: a KV block of 0 bytes");
  if (in.device_free_bytes > in.device_total_bytes)
    fail("GPU memory plan: ", in.device_free_bytes, " bytes free of ", in.device_total_bytes);
  CudaMemoryPlan plan;
  plan.budget_bytes = static_cast<size_t>(
      std::floor(in.gpu_memory_utilization * static_cast<double>(in.device_total_bytes)));
  plan.in_use_bytes = in.device_total_bytes - in.device_free_bytes;
  if (plan.in_use_bytes >= plan.budget_bytes) {
    fail("GPU memory: the budget of ", in.gpu_memory_utilization, " x ", gib(in.device_total_bytes),
         " = ", gib(plan.budget_bytes), " is already spent (", gib(plan.in_use_bytes),
         " in use by the weights, activations, the CUDA context and other processes); raise "
         "--gpu-memory-utilization, lower --max-num-batched-tokens, or free the GPU");
  }
  const size_t available = plan.budget_bytes - plan.in_use_bytes;
  const size_t num_blocks = available / in.kv_block_bytes;
  const auto reserved = static_cast<size_t>(std::max(in.num_reserved_blocks, 0));
  if (num_blocks < reserved + 1) {
    fail("GPU memory: ", gib(available), " left for the KV cache after ", gib(plan.in_use_bytes),
         " in use is less than ", reserved + 1, " blocks of ", in.kv_block_bytes,
         " bytes; raise --gpu-memory-utilization or lower --max-num-batched-tokens");
  }
  plan.num_kv_blocks = static_cast<int>(std::min<size_t>(num_blocks - reserved, 1u << 30));
  plan.kv_cache_bytes = static_cast<size_t>(plan.num_kv_blocks) * in.kv_block_bytes;
  return plan;
}

std::string describe(const CudaMemoryPlan& plan) {
  return str_cat("KV pool ", gib(plan.kv_cache_bytes), " (", plan.num_kv_blocks, " blocks) of a ",
                 gib(plan.budget_bytes), " budget with ", gib(plan.in_use_bytes),
                 " already in use");
}

std::vector<int> cuda_graph_batch_sizes(int max_batch_size) {
  assert(max_batch_size >= 1);  // a batch holds at least one request
  std::vector<int> sizes;
  for (int size = 1;; size *= 2) {
    sizes.push_back(size);
    if (size >= max_batch_size) break;
  }
  return sizes;
}

int cuda_graph_batch_bucket(int num_requests, const std::vector<int>& batch_sizes) {
  const auto it = std::lower_bound(batch_sizes.begin(), batch_sizes.end(), num_requests);
  return it == batch_sizes.end() ? 0 : *it;
}

int cuda_graph_seq_len_bucket(int max_seq_len, int max_model_len, int block_size) {
  assert(block_size >= 1 && max_seq_len <= max_model_len);  // contexts fit the model
  int bucket = 256;
  while (bucket < max_seq_len) bucket *= 2;
  bucket = std::min(bucket, max_model_len);
  return (bucket + block_size - 1) / block_size * block_size;
}

bool is_uniform_decode(const BatchInputs& in) {
  const int n = in.num_requests();
  if (n == 0 || in.num_tokens() != n || static_cast<int>(in.logits_indices.size()) != n)
    return false;
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<size_t>(r);
    if (in.query_start_loc[i + 1] != r + 1 || in.logits_indices[i] != r) return false;
  }
  return true;
}

void pad_decode_batch(const BatchInputs& in, int batch_size, int max_blocks_per_request,
                      int32_t padding_block_id, int block_size, BatchInputs& out) {
  assert(is_uniform_decode(in) && batch_size >= in.num_requests());  // see the header
  const int n = in.num_requests();
  const auto rows = static_cast<size_t>(batch_size);
  const auto stride = static_cast<size_t>(max_blocks_per_request);
  out.token_ids.assign(in.token_ids.begin(), in.token_ids.end());
  out.positions.assign(in.positions.begin(), in.positions.end());
  out.slot_mapping.assign(in.slot_mapping.begin(), in.slot_mapping.end());
  out.seq_lens.assign(in.seq_lens.begin(), in.seq_lens.end());
  out.token_ids.resize(rows, 0);
  out.positions.resize(rows, 0);
  out.slot_mapping.resize(rows, static_cast<int64_t>(padding_block_id) * block_size);
  out.seq_lens.resize(rows, 1);
  out.query_start_loc.resize(rows + 1);
  out.logits_indices.resize(rows);
  for (size_t r = 0; r <= rows; ++r) out.query_start_loc[r] = static_cast<int32_t>(r);
  for (size_t r = 0; r < rows; ++r) out.logits_indices[r] = static_cast<int32_t>(r);
  out.max_blocks_per_request = max_blocks_per_request;
  // A hybrid's padding rows have no state slot: they start from zeros and keep nothing.
  out.state_slots.assign(in.state_slots.begin(), in.state_slots.end());
  if (!in.state_slots.empty()) out.state_slots.resize(rows, -1);
  out.block_tables.assign(rows * stride, -1);
  for (int r = 0; r < n; ++r) {
    const int num_used = (in.seq_lens[static_cast<size_t>(r)] + block_size - 1) / block_size;
    assert(num_used <= max_blocks_per_request &&
           num_used <= in.max_blocks_per_request);  // the context fits the graph's table
    const int32_t* src = in.block_table(r);
    std::copy(src, src + num_used, out.block_tables.begin() + static_cast<long>(r * stride));
  }
  for (size_t r = static_cast<size_t>(n); r < rows; ++r)
    out.block_tables[r * stride] = padding_block_id;
}

}  // namespace sluice
