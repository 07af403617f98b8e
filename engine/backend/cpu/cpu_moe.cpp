#include "engine/backend/cpu/cpu_moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

template <typename T>
void grow(std::vector<T>& buffer, int64_t n) {
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
}

// softmax(x) over n values into out as ggml rounds it: exp in float, the sum in double, then one
// multiplication by its inverse.
void softmax(const float* x, int n, float* out) {
  const float max_value = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    out[i] = std::exp(x[i] - max_value);
    sum += out[i];
  }
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int i = 0; i < n; ++i) out[i] *= inverse;
}

// The k highest of n scores, highest first (ties: the lower index first).
void top_k(const float* scores, int n, int k, int32_t* ids) {
  thread_local std::vector<int32_t> order;
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  std::copy_n(order.begin(), k, ids);
}

void add_row_bias(float* rows, const std::vector<float>& bias, int64_t num_rows) {
  if (!bias.empty()) add_bias(rows, bias.data(), num_rows, static_cast<int64_t>(bias.size()));
}

// Whether every expert's gate and up matrices are quantized in one type (then the step's rows are
// quantized once for all of them).
bool quantized_alike(const CpuExperts& experts) {
  if (experts.gate.empty() || !experts.gate.front().is_quantized()) return false;
  const QuantMatrixView first = experts.gate.front().quant_view();
  for (const auto* stack : {&experts.gate, &experts.up}) {
    for (const CpuMatrix& m : *stack) {
      if (!m.is_quantized() || m.quant_view().dtype != first.dtype) return false;
    }
  }
  return true;
}

// The active experts (expert_begin) and their gate and up products of the step, rows in
// expert order, from float rows gathered per expert.
void gate_and_up(const CpuExperts& experts, const float* x, int64_t hidden, int k, int64_t ffn,
                 ThreadPool& pool, MoeScratch& s) {
  const int64_t num_slots = s.expert_begin.back();
  grow(s.gathered, num_slots * hidden);
  for (int64_t p = 0; p < num_slots; ++p) {
    std::copy_n(x + (s.rows_of_expert[static_cast<size_t>(p)] / k) * hidden, hidden,
                s.gathered.data() + p * hidden);
  }
  s.products.clear();
  for (size_t e = 0; e + 1 < s.expert_begin.size(); ++e) {
    const int64_t begin = s.expert_begin[e];
    const int64_t rows = s.expert_begin[e + 1] - begin;
    if (rows == 0) continue;
    const int gate_index = static_cast<int>(s.products.size());
    s.products.push_back(
        {&experts.gate[e], s.gathered.data() + begin * hidden, rows, s.gate.data() + begin * ffn});
    s.products.push_back({&experts.up[e], s.gathered.data() + begin * hidden, rows,
                          s.up.data() + begin * ffn, gate_index});
  }
  multiply_all(s.products, pool);
}

// The same products when every gate and up matrix is quantized in one type: the step's rows are
// quantized once and each expert's gathered from them (the same bits as quantizing the gathered
// float rows: each row is quantized on its own).
void gate_and_up_quantized_once(const CpuExperts& experts, const float* x, int64_t num_tokens,
                                int64_t hidden, int k, int64_t ffn, ThreadPool& pool,
                                MoeScratch& s) {
  const QuantKernelIsa isa = best_quant_kernel_isa();
  const DType dtype = experts.gate.front().quant_view().dtype;
  shape_activations(dtype, num_tokens, hidden, wants_offset_activations(isa, dtype), s.x_quantized);
  pool.parallel_for(
      num_tokens,
      [&](int64_t begin, int64_t end) { quantize_activations(x, begin, end, s.x_quantized); },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(1, hidden)));
  const int64_t num_slots = s.expert_begin.back();
  grow(s.gather_rows, num_slots);
  for (int64_t p = 0; p < num_slots; ++p)
    s.gather_rows[static_cast<size_t>(p)] = s.rows_of_expert[static_cast<size_t>(p)] / k;
  const size_t num_experts = s.expert_begin.size() - 1;
  if (s.expert_activations.size() < num_experts) s.expert_activations.resize(num_experts);
  s.quant_products.clear();
  for (size_t e = 0; e < num_experts; ++e) {
    const int64_t begin = s.expert_begin[e];
    const int64_t rows = s.expert_begin[e + 1] - begin;
    if (rows == 0) continue;
    gather_activations(s.x_quantized, s.gather_rows.data() + begin, rows, s.expert_activations[e]);
    const QuantizedActivations* a = &s.expert_activations[e];
    s.quant_products.push_back(
        {experts.gate[e].quant_view(), nullptr, rows, s.gate.data() + begin * ffn, ffn, -1, a});
    s.quant_products.push_back(
        {experts.up[e].quant_view(), nullptr, rows, s.up.data() + begin * ffn, ffn, -1, a});
  }
  quant_gemm_group(s.quant_products, pool, isa);
}

}  // namespace

void choose_experts(const float* router_logits, int64_t num_tokens, const MoeOptions& options,
                    ExpertChoice& choice) {
  const int n = options.num_experts, k = options.top_k;
  if (k < 1 || k > std::min(n, kMaxExpertsPerToken))
    fail("mixture of experts: top-k ", k, " must be 1 to ", std::min(n, kMaxExpertsPerToken));
  grow(choice.ids, num_tokens * k);
  grow(choice.weights, num_tokens * k);
  thread_local std::vector<float> probs;
  probs.resize(static_cast<size_t>(n));
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* logits = router_logits + t * n;
    int32_t* ids = choice.ids.data() + t * k;
    float* weights = choice.weights.data() + t * k;
    if (options.gating == MoeGating::TopKSoftmax) {
      top_k(logits, n, k, ids);
      float chosen[kMaxExpertsPerToken];
      for (int j = 0; j < k; ++j) chosen[j] = logits[ids[j]];
      softmax(chosen, k, weights);
      continue;
    }
    softmax(logits, n, probs.data());
    top_k(probs.data(), n, k, ids);
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) {
      weights[j] = probs[static_cast<size_t>(ids[j])];
      sum += weights[j];
    }
    if (options.renormalize) {
      for (int j = 0; j < k; ++j) weights[j] /= sum;
    }
  }
}

size_t MoeScratch::bytes() const {
  size_t n = 0;
  for (const auto* b : {&router_logits, &gathered, &gate, &up, &expert_out})
    n += b->capacity() * sizeof(float);
  return n +
         (rows_of_expert.capacity() + slot_position.capacity() + choice.ids.capacity()) *
             sizeof(int32_t) +
         choice.weights.capacity() * sizeof(float) + expert_begin.capacity() * sizeof(int64_t);
}

void moe_ffn(const CpuExperts& experts, const MoeOptions& options, const float* x,
             int64_t num_tokens, int64_t hidden, float* out, ThreadPool& pool, MoeScratch& s) {
  const int num_experts = options.num_experts, k = options.top_k;
  grow(s.router_logits, num_tokens * num_experts);
  experts.router.multiply(x, num_tokens, s.router_logits.data(), pool);
  add_row_bias(s.router_logits.data(), experts.router_bias, num_tokens);
  choose_experts(s.router_logits.data(), num_tokens, options, s.choice);

  // Each (token, slot) of the step, grouped by expert in token order.
  const int64_t num_slots = num_tokens * k;
  s.expert_begin.assign(static_cast<size_t>(num_experts) + 1, 0);
  for (int64_t i = 0; i < num_slots; ++i)
    ++s.expert_begin[static_cast<size_t>(s.choice.ids[i]) + 1];
  std::partial_sum(s.expert_begin.begin(), s.expert_begin.end(), s.expert_begin.begin());
  grow(s.rows_of_expert, num_slots);
  {
    std::vector<int64_t> next(s.expert_begin.begin(), s.expert_begin.end() - 1);
    for (int64_t i = 0; i < num_slots; ++i)
      s.rows_of_expert[static_cast<size_t>(next[static_cast<size_t>(s.choice.ids[i])]++)] =
          static_cast<int32_t>(i);
  }

  // Every expert's rows in one buffer (expert order), the products of all experts run together.
  const int64_t ffn = experts.gate.empty() ? 0 : experts.gate.front().rows();
  grow(s.gate, num_slots * ffn);
  grow(s.up, num_slots * ffn);
  grow(s.expert_out, num_slots * hidden);
  grow(s.slot_position, num_slots);
  for (int64_t p = 0; p < num_slots; ++p)
    s.slot_position[static_cast<size_t>(s.rows_of_expert[static_cast<size_t>(p)])] =
        static_cast<int32_t>(p);
  if (quantized_alike(experts)) {
    gate_and_up_quantized_once(experts, x, num_tokens, hidden, k, ffn, pool, s);
  } else {
    gate_and_up(experts, x, hidden, k, ffn, pool, s);
  }
  s.products.clear();
  for (int e = 0; e < num_experts; ++e) {
    const int64_t begin = s.expert_begin[static_cast<size_t>(e)];
    const int64_t rows = s.expert_begin[static_cast<size_t>(e) + 1] - begin;
    if (rows == 0) continue;
    const auto ue = static_cast<size_t>(e);
    if (options.biases) {
      add_row_bias(s.gate.data() + begin * ffn, experts.gate_bias[ue], rows);
      add_row_bias(s.up.data() + begin * ffn, experts.up_bias[ue], rows);
    }
    s.products.push_back({&experts.down[ue], s.gate.data() + begin * ffn, rows,
                          s.expert_out.data() + begin * hidden});
  }
  pool.parallel_for(
      num_slots,
      [&](int64_t begin, int64_t end) {
        gated_activation(options.activation, s.gate.data() + begin * ffn, s.up.data() + begin * ffn,
                         (end - begin) * ffn);
      },
      std::max<int64_t>(1, 16384 / std::max<int64_t>(1, ffn)));
  multiply_all(s.products, pool);
  if (options.biases) {
    for (int e = 0; e < num_experts; ++e) {
      const int64_t begin = s.expert_begin[static_cast<size_t>(e)];
      add_row_bias(s.expert_out.data() + begin * hidden, experts.down_bias[static_cast<size_t>(e)],
                   s.expert_begin[static_cast<size_t>(e) + 1] - begin);
    }
  }

  // Each token's weighted expert outputs, added in top-k order (llama.cpp's order).
  for (int64_t t = 0; t < num_tokens; ++t) {
    float* row = out + t * hidden;
    for (int j = 0; j < k; ++j) {
      const float w = s.choice.weights[static_cast<size_t>(t * k + j)];
      const float* y =
          s.expert_out.data() +
          static_cast<int64_t>(s.slot_position[static_cast<size_t>(t * k + j)]) * hidden;
      if (j == 0) {
        for (int64_t i = 0; i < hidden; ++i) row[i] = w * y[i];
      } else {
        for (int64_t i = 0; i < hidden; ++i) row[i] += w * y[i];
      }
    }
  }
}

}  // namespace sluice
