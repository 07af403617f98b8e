#include "engine/backend/cpu/cpu_deltanet.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice {

namespace {

template <typename T>
void grow(std::vector<T>& buffer, int64_t n) {
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
}

float silu_of(float x) {
  return x / (1.0f + std::exp(-x));
}

float softplus_of(float x) {
  return x > 20.0f ? x : std::log1p(std::exp(x));
}

// Scales each head_dim-wide head of row in place to unit L2 norm (x / max(|x|, eps), as
// llama.cpp's ggml_l2_norm), then by `scale`.
void l2_normalize_heads(float* row, int num_heads, int head_dim, float eps, float scale) {
  for (int h = 0; h < num_heads; ++h) {
    float* head = row + static_cast<int64_t>(h) * head_dim;
    float sum = 0.0f;
    for (int i = 0; i < head_dim; ++i) sum += head[i] * head[i];
    const float inv = scale / std::max(std::sqrt(sum), eps);
    for (int i = 0; i < head_dim; ++i) head[i] *= inv;
  }
}

// The causal depthwise convolution and SiLU of one request's rows qkv[first, first + count)
// into mixed, then L2-normalised q and k; conv holds the K - 1 rows before them (zeros at
// position 0) and becomes the last K - 1 rows.
void convolve_request(const DeltaNetConfig& d, float eps, const float* taps, const float* qkv,
                      int64_t count, float* conv, float* mixed) {
  const int64_t channels = d.conv_dim();
  const int kernel = d.conv_kernel;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d.k_head_dim));
  // row(j) for j in [-(K-1), count): the state rows, then this step's.
  auto row = [&](int64_t j) {
    return j < 0 ? conv + (j + kernel - 1) * channels : qkv + j * channels;
  };
  for (int64_t t = 0; t < count; ++t) {
    float* y = mixed + t * channels;
    for (int64_t c = 0; c < channels; ++c) {
      float sum = 0.0f;
      for (int j = 0; j < kernel; ++j) sum += taps[c * kernel + j] * row(t - (kernel - 1) + j)[c];
      y[c] = silu_of(sum);
    }
    l2_normalize_heads(y, d.num_k_heads, d.k_head_dim, eps, q_scale);
    l2_normalize_heads(y + d.key_dim(), d.num_k_heads, d.k_head_dim, eps, 1.0f);
  }
  // The new state: the last K - 1 rows of [state; this step's rows].
  std::vector<float> next(static_cast<size_t>((kernel - 1) * channels));
  for (int j = 0; j < kernel - 1; ++j) {
    const float* src = row(count - (kernel - 1) + j);
    std::memcpy(next.data() + j * channels, src, static_cast<size_t>(channels) * sizeof(float));
  }
  std::memcpy(conv, next.data(), next.size() * sizeof(float));
}

// The delta rule of value head h over one request's count tokens, then the gated RMSNorm of its
// outputs into core.
void delta_rule_head(const DeltaNetConfig& d, const CpuDeltaNetWeights& w, float eps, int h,
                     const float* mixed, const float* z, const float* beta_logits,
                     const float* alpha_logits, int64_t count, float* s, float* core) {
  const int dk = d.k_head_dim;
  const int dv = d.v_head_dim;
  const int64_t channels = d.conv_dim();
  const int kh = d.key_head_of(h);
  std::vector<float> kv(static_cast<size_t>(dv)), o(static_cast<size_t>(dv));
  for (int64_t t = 0; t < count; ++t) {
    const float* q = mixed + t * channels + static_cast<int64_t>(kh) * dk;
    const float* k = mixed + t * channels + d.key_dim() + static_cast<int64_t>(kh) * dk;
    const float* v = mixed + t * channels + 2 * d.key_dim() + static_cast<int64_t>(h) * dv;
    const float beta = 1.0f / (1.0f + std::exp(-beta_logits[t * d.num_v_heads + h]));
    const float g = w.a[h] * softplus_of(alpha_logits[t * d.num_v_heads + h] + w.dt[h]);
    const float decay = std::exp(g);
    // Two passes over S (which decode reads from memory): kv = S^T k scaled by the decay, then
    // S = decay S + k delta^T and o = S^T q together.
    std::fill(kv.begin(), kv.end(), 0.0f);
    for (int i = 0; i < dk; ++i) {
      const float* row = s + static_cast<int64_t>(i) * dv;
      for (int j = 0; j < dv; ++j) kv[static_cast<size_t>(j)] += row[j] * k[i];
    }
    for (int j = 0; j < dv; ++j) {
      const auto jj = static_cast<size_t>(j);
      kv[jj] = beta * (v[j] - decay * kv[jj]);
    }
    std::fill(o.begin(), o.end(), 0.0f);
    for (int i = 0; i < dk; ++i) {
      float* row = s + static_cast<int64_t>(i) * dv;
      for (int j = 0; j < dv; ++j) {
        row[j] = row[j] * decay + k[i] * kv[static_cast<size_t>(j)];
        o[static_cast<size_t>(j)] += row[j] * q[i];
      }
    }
    float sum = 0.0f;
    for (int j = 0; j < dv; ++j) sum += o[static_cast<size_t>(j)] * o[static_cast<size_t>(j)];
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(dv) + eps);
    const float* zh = z + t * d.value_dim() + static_cast<int64_t>(h) * dv;
    float* y = core + t * d.value_dim() + static_cast<int64_t>(h) * dv;
    for (int j = 0; j < dv; ++j)
      y[j] = o[static_cast<size_t>(j)] * inv * w.norm[j] * silu_of(zh[j]);
  }
}

}  // namespace

size_t DeltaNetScratch::bytes() const {
  size_t n = 0;
  for (const auto* b : {&qkv, &mixed, &z, &beta, &alpha, &core}) n += b->capacity();
  return n * sizeof(float);
}

void gated_delta_net(const DeltaNetConfig& d, float eps, const CpuDeltaNetWeights& w,
                     const BatchInputs& in, const float* x, CpuStateView state, float* out,
                     ThreadPool& pool, DeltaNetScratch& s) {
  const int64_t T = in.num_tokens();
  const int64_t channels = d.conv_dim();
  grow(s.qkv, T * channels);
  grow(s.mixed, T * channels);
  grow(s.z, T * d.value_dim());
  grow(s.beta, T * d.num_v_heads);
  grow(s.alpha, T * d.num_v_heads);
  grow(s.core, T * d.value_dim());
  w.qkv->multiply(x, T, s.qkv.data(), pool);
  w.z->multiply(x, T, s.z.data(), pool);
  w.beta->multiply(x, T, s.beta.data(), pool);
  w.alpha->multiply(x, T, s.alpha.data(), pool);
  const int num_requests = in.num_requests();
  const int64_t conv_floats = d.conv_state_floats();
  const int64_t matrix_floats = int64_t{d.k_head_dim} * d.v_head_dim;
  auto state_of = [&](int r) {
    return state.base + in.state_slots[static_cast<size_t>(r)] * state.slot_stride;
  };
  auto first_token = [&](int r) { return int64_t{in.query_start_loc[static_cast<size_t>(r)]}; };
  auto num_new = [&](int r) {
    return int64_t{in.query_start_loc[static_cast<size_t>(r) + 1]} - first_token(r);
  };
  // A request starting at position 0 starts from a zero state.
  for (int r = 0; r < num_requests; ++r) {
    if (in.seq_lens[static_cast<size_t>(r)] == num_new(r))
      std::fill_n(state_of(r), conv_floats + d.num_v_heads * matrix_floats, 0.0f);
  }
  pool.parallel_for(num_requests, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t0 = first_token(static_cast<int>(r));
      convolve_request(d, eps, w.conv, s.qkv.data() + t0 * channels, num_new(static_cast<int>(r)),
                       state_of(static_cast<int>(r)), s.mixed.data() + t0 * channels);
    }
  });
  pool.parallel_for(int64_t{num_requests} * d.num_v_heads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int r = static_cast<int>(i / d.num_v_heads);
      const int h = static_cast<int>(i % d.num_v_heads);
      const int64_t t0 = first_token(r);
      delta_rule_head(d, w, eps, h, s.mixed.data() + t0 * channels, s.z.data() + t0 * d.value_dim(),
                      s.beta.data() + t0 * d.num_v_heads, s.alpha.data() + t0 * d.num_v_heads,
                      num_new(r), state_of(r) + conv_floats + h * matrix_floats,
                      s.core.data() + t0 * d.value_dim());
    }
  });
  w.out->multiply(s.core.data(), T, out, pool);
}

}  // namespace sluice
