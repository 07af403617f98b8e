#include "engine/backend/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>

#include "engine/backend/cpu/cpu_math.h"

namespace sluice {

void rms_norm(const float* x, const float* weight, float eps, int64_t num_tokens, int64_t dim,
              float* out) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* row = x + t * dim;
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += static_cast<double>(row[i]) * row[i];
    const auto scale =
        static_cast<float>(1.0 / std::sqrt(sum_squares / static_cast<double>(dim) + eps));
    float* dst = out + t * dim;
    for (int64_t i = 0; i < dim; ++i) dst[i] = row[i] * scale * weight[i];
  }
}

namespace {

// Rotates the first 2 * half dimensions of each head (all of them unless the rotary is partial).
void rotate_heads(float* x, int num_heads, int head_dim, int half, RopeLayout layout,
                  const float* cos_table, const float* sin_table) {
  for (int h = 0; h < num_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const int a = layout == RopeLayout::Interleaved ? 2 * i : i;
      const int b = layout == RopeLayout::Interleaved ? 2 * i + 1 : i + half;
      const float x0 = head[a], x1 = head[b];
      head[a] = x0 * cos_table[i] - x1 * sin_table[i];
      head[b] = x0 * sin_table[i] + x1 * cos_table[i];
    }
  }
}

}  // namespace

void apply_rope(float* q, float* k, const int32_t* positions, int64_t num_tokens, int num_heads,
                int num_kv_heads, int head_dim, RopeLayout layout,
                const std::vector<double>& inv_freq, ThreadPool& pool) {
  const auto half = static_cast<int>(inv_freq.size());
  pool.parallel_for(
      num_tokens,
      [&](int64_t begin, int64_t end) {
        std::vector<float> cos_table(static_cast<size_t>(half)),
            sin_table(static_cast<size_t>(half));
        for (int64_t t = begin; t < end; ++t) {
          for (int i = 0; i < half; ++i) {
            const double angle = positions[t] * inv_freq[static_cast<size_t>(i)];
            cos_table[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle));
            sin_table[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle));
          }
          rotate_heads(q + t * num_heads * head_dim, num_heads, head_dim, half, layout,
                       cos_table.data(), sin_table.data());
          rotate_heads(k + t * num_kv_heads * head_dim, num_kv_heads, head_dim, half, layout,
                       cos_table.data(), sin_table.data());
        }
      },
      16);
}

void silu_mul(float* gate, const float* up, int64_t n) {
  silu_mul_inplace(gate, up, n);
}

void gelu_tanh_mul(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    gate[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x))) * up[i];
  }
}

void swiglu_oai_mul(float* gate, const float* up, int64_t n) {
  constexpr float kAlpha = 1.702f;
  constexpr float kLimit = 7.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kLimit);
    const float u = std::clamp(up[i], -kLimit, kLimit);
    gate[i] = g / (1.0f + std::exp(-kAlpha * g)) * (u + 1.0f);
  }
}

void gated_activation(Activation activation, float* gate, const float* up, int64_t n) {
  switch (activation) {
    case Activation::Silu:
      return silu_mul(gate, up, n);
    case Activation::GeluTanh:
      return gelu_tanh_mul(gate, up, n);
    case Activation::SwigluOai:
      return swiglu_oai_mul(gate, up, n);
  }
}

void soft_cap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void add_bias(float* x, const float* bias, int64_t num_tokens, int64_t dim) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < dim; ++i) x[t * dim + i] += bias[i];
  }
}

}  // namespace sluice
