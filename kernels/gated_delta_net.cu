// The Gated DeltaNet's kernels, in their recurrent form: every request's tokens are walked in
// order, so a prefill and the same tokens one step at a time do the same arithmetic.
// - deltanet_conv: one thread per (request, channel), the last kernel - 1 inputs in registers,
//   so the rows are convolved in place.
// - gated_delta_rule: one warp per (request, value head, tile of 32 value columns); lane j owns
//   column j of the head's state S [dk, dv] in shared memory and needs no other lane's: S^T k
//   and S^T q are per column sums over dk. The warp L2-normalises the token's q and k (a shuffle
//   butterfly over the key head) into shared memory first.
// - gated_rms_norm: one warp per (token, value head).
// Performance is the simplest correct form's: a chunked prefill (WY form) is the next step.
#include "kernels/gated_delta_net.cuh"

#include <cmath>

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;

constexpr int kConvThreads = 128;
constexpr int kColumns = 32;  // value columns of one warp
constexpr size_t kMaxSharedBytes = 48 * 1024;

__device__ __forceinline__ float silu_of(float x) {
  return x / (1.0f + expf(-x));
}

__device__ __forceinline__ float softplus_of(float x) {
  return x > 20.0f ? x : log1pf(expf(x));
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// The step's tokens of request r and whether it starts from zeros; its state or null.
struct RequestSpan {
  int begin = 0;
  int count = 0;
  bool from_zero = true;
  float* state = nullptr;  // the request's slot, or null
};

__device__ __forceinline__ RequestSpan request_span(const DeltaNetRequests& rq, int r) {
  RequestSpan s;
  s.begin = rq.query_start_loc[r];
  s.count = rq.query_start_loc[r + 1] - s.begin;
  const int32_t slot = rq.state_slots[r];
  s.from_zero = slot < 0 || rq.seq_lens[r] == s.count;
  s.state = slot < 0 ? nullptr : rq.states + static_cast<int64_t>(slot) * rq.slot_stride;
  return s;
}

// grid (channel blocks, requests); block kConvThreads.
__global__ void deltanet_conv_kernel(float* x, int64_t x_stride, const float* __restrict__ taps,
                                     int conv_dim, int kernel, DeltaNetRequests rq,
                                     int64_t conv_offset) {
  const int c = static_cast<int>(blockIdx.x) * kConvThreads + static_cast<int>(threadIdx.x);
  if (c >= conv_dim) return;
  const RequestSpan s = request_span(rq, static_cast<int>(blockIdx.y));
  float* state = s.state ? s.state + conv_offset : nullptr;
  const int history = kernel - 1;
  float window[kMaxDeltaNetConvKernel];  // window[j]: the input j steps after the oldest
  for (int j = 0; j < history; ++j) {
    window[j] = s.from_zero ? 0.0f : state[static_cast<int64_t>(j) * conv_dim + c];
  }
  const float* w = taps + static_cast<int64_t>(c) * kernel;
  for (int t = 0; t < s.count; ++t) {
    float* row = x + static_cast<int64_t>(s.begin + t) * x_stride;
    const float input = row[c];
    float acc = 0.0f;
    for (int j = 0; j < history; ++j) acc += w[j] * window[j];
    acc += w[history] * input;
    for (int j = 0; j + 1 < history; ++j) window[j] = window[j + 1];
    if (history > 0) window[history - 1] = input;
    row[c] = silu_of(acc);
  }
  if (state) {
    for (int j = 0; j < history; ++j) state[static_cast<int64_t>(j) * conv_dim + c] = window[j];
  }
}

// grid (column tiles, value heads, requests); block kColumns (one warp).
// Shared: S [dk][kColumns], then q [dk], k [dk].
__global__ void gated_delta_rule_kernel(const float* __restrict__ qkv, int64_t qkv_stride,
                                        const float* __restrict__ b,
                                        const float* __restrict__ alpha, int64_t gate_stride,
                                        const float* __restrict__ a, const float* __restrict__ dt,
                                        float* __restrict__ out, DeltaRuleShape shape,
                                        DeltaNetRequests rq, int64_t recurrent_offset) {
  SLUICE_DYNAMIC_SHARED(float, delta_rule_smem);
  const int dk = shape.k_head_dim;
  const int dv = shape.v_head_dim;
  float* S = delta_rule_smem;
  float* q_s = S + dk * kColumns;
  float* k_s = q_s + dk;
  const int lane = static_cast<int>(threadIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int col = static_cast<int>(blockIdx.x) * kColumns + lane;
  const bool has_col = col < dv;
  const int kh =
      shape.grouped_v_heads ? h / (shape.num_v_heads / shape.num_k_heads) : h % shape.num_k_heads;
  const RequestSpan s = request_span(rq, static_cast<int>(blockIdx.z));
  float* state = s.state ? s.state + recurrent_offset + static_cast<int64_t>(h) * dk * dv : nullptr;
  for (int i = 0; i < dk; ++i) {
    S[i * kColumns + lane] =
        s.from_zero || !has_col ? 0.0f : state[static_cast<int64_t>(i) * dv + col];
  }
  const int64_t key_dim = static_cast<int64_t>(shape.num_k_heads) * dk;
  const int64_t value_dim = static_cast<int64_t>(shape.num_v_heads) * dv;
  const float q_scale = 1.0f / sqrtf(static_cast<float>(dk));
  for (int t = 0; t < s.count; ++t) {
    const int64_t token = s.begin + t;
    const float* row = qkv + token * qkv_stride;
    const float* q = row + static_cast<int64_t>(kh) * dk;
    const float* k = row + key_dim + static_cast<int64_t>(kh) * dk;
    float q_squares = 0.0f;
    float k_squares = 0.0f;
    for (int i = lane; i < dk; i += kColumns) {
      q_squares += q[i] * q[i];
      k_squares += k[i] * k[i];
    }
    q_squares = warp_sum(q_squares);
    k_squares = warp_sum(k_squares);
    const float q_norm = q_scale / fmaxf(sqrtf(q_squares), shape.eps);
    const float k_norm = 1.0f / fmaxf(sqrtf(k_squares), shape.eps);
    __syncthreads();  // the previous token's q and k are read
    for (int i = lane; i < dk; i += kColumns) {
      q_s[i] = q[i] * q_norm;
      k_s[i] = k[i] * k_norm;
    }
    __syncthreads();
    const float beta = 1.0f / (1.0f + expf(-b[token * gate_stride + h]));
    const float decay = expf(a[h] * softplus_of(alpha[token * gate_stride + h] + dt[h]));
    if (has_col) {
      const float v = row[2 * key_dim + static_cast<int64_t>(h) * dv + col];
      float kv = 0.0f;
      for (int i = 0; i < dk; ++i) {
        const float decayed = S[i * kColumns + lane] * decay;
        S[i * kColumns + lane] = decayed;
        kv += decayed * k_s[i];
      }
      const float delta = beta * (v - kv);
      float o = 0.0f;
      for (int i = 0; i < dk; ++i) {
        const float updated = S[i * kColumns + lane] + k_s[i] * delta;
        S[i * kColumns + lane] = updated;
        o += updated * q_s[i];
      }
      out[token * value_dim + static_cast<int64_t>(h) * dv + col] = o;
    }
  }
  if (state && has_col) {
    for (int i = 0; i < dk; ++i) state[static_cast<int64_t>(i) * dv + col] = S[i * kColumns + lane];
  }
}

constexpr int kNormWarps = 4;

// grid (ceil(tokens * heads / kNormWarps)); block kNormWarps warps, one per (token, head).
template <typename T>
__global__ void gated_rms_norm_kernel(const float* __restrict__ o, const float* __restrict__ z,
                                      int64_t z_stride, const float* __restrict__ weight, float eps,
                                      T* __restrict__ out, int num_heads, int head_dim,
                                      int64_t num_rows) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kNormWarps + threadIdx.x / 32;
  if (row >= num_rows) return;  // the whole warp leaves together
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t token = row / num_heads;
  const int64_t offset = (row % num_heads) * head_dim;
  const int64_t width = static_cast<int64_t>(num_heads) * head_dim;
  const float* x = o + token * width + offset;
  const float* gate = z + token * z_stride + offset;
  T* y = out + token * width + offset;
  float squares = 0.0f;
  for (int i = lane; i < head_dim; i += 32) squares += x[i] * x[i];
  squares = warp_sum(squares);
  const float scale = rsqrtf(squares / static_cast<float>(head_dim) + eps);
  for (int i = lane; i < head_dim; i += 32) {
    y[i] = from_float<T>(x[i] * scale * weight[i] * silu_of(gate[i]));
  }
}

}  // namespace

KernelStatus deltanet_conv(float* x, int64_t x_stride, const float* taps, int conv_dim, int kernel,
                           const DeltaNetRequests& requests, int64_t conv_offset,
                           cudaStream_t stream) {
  if (conv_dim <= 0 || kernel < 1 || kernel > kMaxDeltaNetConvKernel || x_stride < conv_dim ||
      requests.num_requests < 0)
    return detail::invalid_argument();
  if (requests.num_requests == 0) return kKernelOk;
  const dim3 grid((conv_dim + kConvThreads - 1) / kConvThreads,
                  static_cast<unsigned int>(requests.num_requests));
  detail::launch_kernel(deltanet_conv_kernel, grid, kConvThreads, 0, stream, x, x_stride, taps,
                        conv_dim, kernel, requests, conv_offset);
  return detail::launch_status();
}

KernelStatus gated_delta_rule(const float* qkv, int64_t qkv_stride, const float* b,
                              const float* alpha, int64_t gate_stride, const float* a,
                              const float* dt, float* out, const DeltaRuleShape& shape,
                              const DeltaNetRequests& requests, int64_t recurrent_offset,
                              cudaStream_t stream) {
  if (shape.num_k_heads <= 0 || shape.num_v_heads <= 0 || shape.k_head_dim <= 0 ||
      shape.v_head_dim <= 0 || shape.num_v_heads % shape.num_k_heads != 0 ||
      requests.num_requests < 0)
    return detail::invalid_argument();
  const size_t shared = (static_cast<size_t>(shape.k_head_dim) * (kColumns + 2)) * sizeof(float);
  if (shared > kMaxSharedBytes) return detail::invalid_argument();
  if (requests.num_requests == 0) return kKernelOk;
  const dim3 grid((shape.v_head_dim + kColumns - 1) / kColumns,
                  static_cast<unsigned int>(shape.num_v_heads),
                  static_cast<unsigned int>(requests.num_requests));
  detail::launch_kernel(gated_delta_rule_kernel, grid, kColumns, shared, stream, qkv, qkv_stride, b,
                        alpha, gate_stride, a, dt, out, shape, requests, recurrent_offset);
  return detail::launch_status();
}

template <typename T>
KernelStatus gated_rms_norm(const float* o, const float* z, int64_t z_stride, const float* weight,
                            float eps, T* out, int num_tokens, int num_heads, int head_dim,
                            cudaStream_t stream) {
  if (num_tokens < 0 || num_heads <= 0 || head_dim <= 0) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const int64_t rows = static_cast<int64_t>(num_tokens) * num_heads;
  const auto blocks = static_cast<unsigned int>((rows + kNormWarps - 1) / kNormWarps);
  detail::launch_kernel(gated_rms_norm_kernel<T>, blocks, kNormWarps * 32, 0, stream, o, z,
                        z_stride, weight, eps, out, num_heads, head_dim, rows);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_GATED_RMS_NORM(T)                                                 \
  template KernelStatus gated_rms_norm<T>(const float*, const float*, int64_t, const float*, \
                                          float, T*, int, int, int, cudaStream_t);
SLUICE_INSTANTIATE_GATED_RMS_NORM(float)
SLUICE_INSTANTIATE_GATED_RMS_NORM(__nv_bfloat16)
SLUICE_INSTANTIATE_GATED_RMS_NORM(__half)
#undef SLUICE_INSTANTIATE_GATED_RMS_NORM

}  // namespace sluice::kernels
