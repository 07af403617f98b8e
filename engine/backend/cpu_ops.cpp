#include "engine/backend/cpu_ops.h"

#include <cmath>

#include "engine/backend/cpu_math.h"

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

void rotate_heads(float* x, int num_heads, int head_dim, RopeLayout layout, const float* cos_table,
                  const float* sin_table) {
  const int half = head_dim / 2;
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
  const int half = head_dim / 2;
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
          rotate_heads(q + t * num_heads * head_dim, num_heads, head_dim, layout, cos_table.data(),
                       sin_table.data());
          rotate_heads(k + t * num_kv_heads * head_dim, num_kv_heads, head_dim, layout,
                       cos_table.data(), sin_table.data());
        }
      },
      16);
}

void silu_mul(float* gate, const float* up, int64_t n) {
  silu_mul_inplace(gate, up, n);
}

void add_bias(float* x, const float* bias, int64_t num_tokens, int64_t dim) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < dim; ++i) x[t * dim + i] += bias[i];
  }
}

}  // namespace sluice
