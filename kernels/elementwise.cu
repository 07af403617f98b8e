// Small element-wise ops of a decoder block. Each is a grid-stride loop over groups of elements
// that move as one vector access (16 bytes of T, or 8 elements for convert) when every
// pointer is aligned for it, then a scalar loop over the tail; unaligned inputs take the scalar
// loop throughout. Arithmetic is in float.
#include "kernels/elementwise.cuh"

#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/q8_quantize.cuh"
#include "kernels/row_gather.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::global_thread_idx;
using detail::grid_stride;
using detail::Pack;
using detail::to_float;
using detail::Vec;

constexpr int kThreads = 256;

// The activations of a gated feed-forward, each as the CPU backend computes it
// (engine/backend/cpu/cpu_ops.cpp), in float.
using Gate = GatedActivation;

template <Gate kGate>
__device__ __forceinline__ float gated(float gate, float up) {
  if constexpr (kGate == Gate::Silu) {
    return gate / (1.0f + expf(-gate)) * up;
  } else if constexpr (kGate == Gate::SwigluOai) {
    // gpt-oss: the gate clamped above and the up clamped both ways at 7, then
    // g * sigmoid(1.702 g) * (u + 1).
    constexpr float kAlpha = 1.702f;
    constexpr float kLimit = 7.0f;
    const float g = fminf(gate, kLimit);
    const float u = fminf(fmaxf(up, -kLimit), kLimit);
    return g / (1.0f + expf(-kAlpha * g)) * (u + 1.0f);
  } else {
    // GELU's tanh approximation (Gemma's gelu_pytorch_tanh), with the CPU's float constants.
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * gate * (1.0f + tanhf(kSqrt2OverPi * (gate + 0.044715f * gate * gate * gate))) *
           up;
  }
}

// gate, up, out: [rows, cols], rows row_stride apart (out may alias gate: each element is read
// before it is written). Packed: cols and row_stride are whole packs and the bases aligned.
template <Gate kGate, typename T>
__global__ void gated_mul_kernel(const T* gate, const T* __restrict__ up, T* out, int64_t rows,
                                 int64_t cols, int64_t row_stride, bool is_packed) {
  using P = Pack<T>;
  const int unit = is_packed ? P::kSize : 1;
  const int64_t units_per_row = cols / unit;
  const int64_t units = rows * units_per_row;
  for (int64_t u = global_thread_idx(); u < units; u += grid_stride()) {
    const int64_t r = u / units_per_row;
    const int64_t i = r * row_stride + (u - r * units_per_row) * unit;
    if (is_packed) {
      const P gate_pack = *reinterpret_cast<const P*>(gate + i);
      const P up_pack = *reinterpret_cast<const P*>(up + i);
      P out_pack;
#pragma unroll
      for (int j = 0; j < P::kSize; ++j) {
        out_pack.values[j] =
            from_float<T>(gated<kGate>(to_float(gate_pack.values[j]), to_float(up_pack.values[j])));
      }
      *reinterpret_cast<P*>(out + i) = out_pack;
    } else {
      out[i] = from_float<T>(gated<kGate>(to_float(gate[i]), to_float(up[i])));
    }
  }
}

constexpr int kQuantizeThreads = 128;

// gated_mul_kernel's values, eight lanes per 32 of a row (four each), then quantized by the
// eight together (q8_quantize.cuh) from the values as stored in T.
template <Gate kGate, typename T>
__global__ void gated_mul_q8_kernel(const T* gate, const T* __restrict__ up, T* out, int64_t rows,
                                    int64_t cols, int64_t row_stride, Q8Rows q8) {
  const int64_t blocks_per_row = cols / 32;
  const int64_t thread =
      static_cast<int64_t>(blockIdx.x) * kQuantizeThreads + static_cast<int64_t>(threadIdx.x);
  const int64_t i = thread / 8;
  const int part = static_cast<int>(thread % 8);
  const bool active = i < rows * blocks_per_row;
  const int64_t r = active ? i / blocks_per_row : 0, b = active ? i % blocks_per_row : 0;
  float v[4] = {};
  if (active) {
    const int64_t at = r * row_stride + 32 * b + 4 * part;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const T value = from_float<T>(gated<kGate>(to_float(gate[at + j]), to_float(up[at + j])));
      out[at + j] = value;
      v[j] = to_float(value);
    }
  }
  detail::quantize_q8_quad(v, active, part, reinterpret_cast<uint32_t*>(q8.qs + r * cols + 32 * b),
                           q8.scales + (active ? i : 0));
}

// x: [n]; x[i] = cap * tanh(x[i] / cap), as the CPU's soft_cap.
template <typename T>
__global__ void soft_cap_kernel(T* __restrict__ x, int64_t n, float cap) {
  for (int64_t i = global_thread_idx(); i < n; i += grid_stride()) {
    x[i] = from_float<T>(cap * tanhf(to_float(x[i]) / cap));
  }
}

// x:    [num_tokens, dim], n = num_tokens * dim
// bias: [dim]
template <typename T>
__global__ void add_bias_kernel(T* __restrict__ x, const float* __restrict__ bias, int64_t n,
                                int dim, bool is_packed) {
  using P = Pack<T>;
  // Packed only when dim is a multiple of the pack, so a pack never straddles two rows.
  const int64_t num_packs = is_packed ? n / P::kSize : 0;
  for (int64_t p = global_thread_idx(); p < num_packs; p += grid_stride()) {
    P pack = reinterpret_cast<const P*>(x)[p];
    const int first_column = static_cast<int>((p * P::kSize) % dim);
#pragma unroll
    for (int j = 0; j < P::kSize; ++j) {
      pack.values[j] = from_float<T>(to_float(pack.values[j]) + bias[first_column + j]);
    }
    reinterpret_cast<P*>(x)[p] = pack;
  }
  for (int64_t i = num_packs * P::kSize + global_thread_idx(); i < n; i += grid_stride()) {
    x[i] = from_float<T>(to_float(x[i]) + bias[i % dim]);
  }
}

template <typename From, typename To>
__device__ __forceinline__ To convert_value(From value) {
  if constexpr (std::is_same_v<From, To>) {
    return value;
  } else {
    return from_float<To>(to_float(value));
  }
}

constexpr int kConvertGroup = 8;

// in, out: [n]
template <typename From, typename To>
__global__ void convert_kernel(const From* __restrict__ in, To* __restrict__ out, int64_t n,
                               bool is_packed) {
  using InVec = Vec<From, kConvertGroup>;
  using OutVec = Vec<To, kConvertGroup>;
  const int64_t num_groups = is_packed ? n / kConvertGroup : 0;
  for (int64_t g = global_thread_idx(); g < num_groups; g += grid_stride()) {
    const InVec in_vec = reinterpret_cast<const InVec*>(in)[g];
    OutVec out_vec;
#pragma unroll
    for (int j = 0; j < kConvertGroup; ++j) {
      out_vec.values[j] = convert_value<From, To>(in_vec.values[j]);
    }
    reinterpret_cast<OutVec*>(out)[g] = out_vec;
  }
  for (int64_t i = num_groups * kConvertGroup + global_thread_idx(); i < n; i += grid_stride()) {
    out[i] = convert_value<From, To>(in[i]);
  }
}

template <Gate kGate, typename T>
KernelStatus gated_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                            int64_t row_stride, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || (rows > 1 && row_stride < cols)) return detail::invalid_argument();
  if (rows == 0 || cols == 0) return kKernelOk;
  constexpr int kPack = Pack<T>::kSize;
  const bool is_packed = detail::is_aligned_16(gate) && detail::is_aligned_16(up) &&
                         detail::is_aligned_16(out) && cols % kPack == 0 && row_stride % kPack == 0;
  const int64_t units = rows * (is_packed ? cols / kPack : cols);
  detail::launch_kernel(gated_mul_kernel<kGate, T>, detail::grid_stride_blocks(units, kThreads),
                        kThreads, 0, stream, gate, up, out, rows, cols, row_stride, is_packed);
  return detail::launch_status();
}

}  // namespace

template <typename T>
KernelStatus silu_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                           int64_t row_stride, cudaStream_t stream) {
  return gated_mul_rows<Gate::Silu>(gate, up, out, rows, cols, row_stride, stream);
}

template <typename T>
KernelStatus gelu_tanh_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                                int64_t row_stride, cudaStream_t stream) {
  return gated_mul_rows<Gate::GeluTanh>(gate, up, out, rows, cols, row_stride, stream);
}

template <typename T>
KernelStatus swiglu_oai_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                                 int64_t row_stride, cudaStream_t stream) {
  return gated_mul_rows<Gate::SwigluOai>(gate, up, out, rows, cols, row_stride, stream);
}

template <typename T>
KernelStatus soft_cap(T* x, int64_t n, float cap, cudaStream_t stream) {
  if (n < 0 || !(cap > 0.0f)) return detail::invalid_argument();
  if (n == 0) return kKernelOk;
  detail::launch_kernel(soft_cap_kernel<T>, detail::grid_stride_blocks(n, kThreads), kThreads, 0,
                        stream, x, n, cap);
  return detail::launch_status();
}

template <typename T>
KernelStatus silu_mul(const T* gate, const T* up, T* out, int64_t n, cudaStream_t stream) {
  if (n < 0) return detail::invalid_argument();
  // Split into rows of whole packs plus a scalar tail, so a long vector keeps 16-byte accesses.
  constexpr int kPack = Pack<T>::kSize;
  const int64_t head = n - n % kPack;
  KernelStatus status = silu_mul_rows(gate, up, out, 1, head, head, stream);
  if (status != kKernelOk || head == n) return status;
  return silu_mul_rows(gate + head, up + head, out + head, 1, n - head, n - head, stream);
}

template <typename T>
KernelStatus add_bias(T* x, const float* bias, int num_tokens, int dim, cudaStream_t stream) {
  if (num_tokens < 0 || dim < 0) return detail::invalid_argument();
  const int64_t n = static_cast<int64_t>(num_tokens) * dim;
  if (n == 0) return kKernelOk;
  const bool is_packed = detail::is_aligned_16(x) && dim % Pack<T>::kSize == 0;
  const int64_t units = is_packed ? n / Pack<T>::kSize : n;
  detail::launch_kernel(add_bias_kernel<T>, detail::grid_stride_blocks(units, kThreads), kThreads,
                        0, stream, x, bias, n, dim, is_packed);
  return detail::launch_status();
}

template <typename T>
KernelStatus gather_rows(const T* in, const int32_t* rows, T* out, int num_rows, int dim,
                         cudaStream_t stream) {
  return detail::launch_row_gather(in, rows, out, num_rows, dim, /*num_in_rows=*/-1,
                                   /*scale=*/1.0f, stream);
}

template <typename From, typename To>
KernelStatus convert(const From* in, To* out, int64_t n, cudaStream_t stream) {
  if (n < 0) return detail::invalid_argument();
  if (n == 0) return kKernelOk;
  const bool is_packed = detail::is_aligned(in, alignof(Vec<From, kConvertGroup>)) &&
                         detail::is_aligned(out, alignof(Vec<To, kConvertGroup>));
  const int64_t units = is_packed ? n / kConvertGroup : n;
  detail::launch_kernel(convert_kernel<From, To>, detail::grid_stride_blocks(units, kThreads),
                        kThreads, 0, stream, in, out, n, is_packed);
  return detail::launch_status();
}

template <typename T>
KernelStatus gated_mul_rows_q8(GatedActivation activation, const T* gate, const T* up, T* out,
                               int64_t rows, int64_t cols, int64_t row_stride, const Q8Rows& q8,
                               cudaStream_t stream) {
  if (rows < 0 || cols % 32 != 0 || (rows > 1 && row_stride < cols) || q8.num_tokens != rows ||
      q8.cols != cols) {
    return detail::invalid_argument();
  }
  if (rows == 0 || cols == 0) return kKernelOk;
  const int64_t lanes = 8 * rows * (cols / 32);
  const auto blocks = static_cast<unsigned int>((lanes + kQuantizeThreads - 1) / kQuantizeThreads);
  const auto launch = [&](auto kernel) {
    detail::launch_kernel(kernel, dim3(blocks), dim3(kQuantizeThreads), 0, stream, gate, up, out,
                          rows, cols, row_stride, q8);
  };
  switch (activation) {
    case GatedActivation::Silu:
      launch(gated_mul_q8_kernel<Gate::Silu, T>);
      break;
    case GatedActivation::GeluTanh:
      launch(gated_mul_q8_kernel<Gate::GeluTanh, T>);
      break;
    case GatedActivation::SwigluOai:
      launch(gated_mul_q8_kernel<Gate::SwigluOai, T>);
      break;
  }
  return detail::launch_status();
}

// ---- instantiations --------------------------------------------------------------------------

#define SLUICE_INSTANTIATE_ELEMENTWISE(T)                                                         \
  template KernelStatus silu_mul<T>(const T*, const T*, T*, int64_t, cudaStream_t);               \
  template KernelStatus silu_mul_rows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t,       \
                                         cudaStream_t);                                           \
  template KernelStatus gelu_tanh_mul_rows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t,  \
                                              cudaStream_t);                                      \
  template KernelStatus swiglu_oai_mul_rows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, \
                                               cudaStream_t);                                     \
  template KernelStatus gated_mul_rows_q8<T>(GatedActivation, const T*, const T*, T*, int64_t,    \
                                             int64_t, int64_t, const Q8Rows&, cudaStream_t);      \
  template KernelStatus soft_cap<T>(T*, int64_t, float, cudaStream_t);                            \
  template KernelStatus add_bias<T>(T*, const float*, int, int, cudaStream_t);                    \
  template KernelStatus gather_rows<T>(const T*, const int32_t*, T*, int, int, cudaStream_t);
SLUICE_INSTANTIATE_ELEMENTWISE(float)
SLUICE_INSTANTIATE_ELEMENTWISE(__nv_bfloat16)
SLUICE_INSTANTIATE_ELEMENTWISE(__half)
#undef SLUICE_INSTANTIATE_ELEMENTWISE

#define SLUICE_INSTANTIATE_CONVERT(From, To) \
  template KernelStatus convert<From, To>(const From*, To*, int64_t, cudaStream_t);
SLUICE_INSTANTIATE_CONVERT(float, float)
SLUICE_INSTANTIATE_CONVERT(float, __nv_bfloat16)
SLUICE_INSTANTIATE_CONVERT(__nv_bfloat16, float)
SLUICE_INSTANTIATE_CONVERT(float, __half)
SLUICE_INSTANTIATE_CONVERT(__half, float)
#undef SLUICE_INSTANTIATE_CONVERT

}  // namespace sluice::kernels
