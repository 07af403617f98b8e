// Shared by sluice_kernel_bench's parts (bench/kernel_bench*.cpp): the 8B model's matrices in
// random valid blocks, copies of each rotated so the weights come from memory, and event timing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/dequantize.cuh"
#include "kernels/status.h"

namespace sluice::kernel_bench {

using sluice::kernels::QuantFormat;

using sluice::kernels::QuantFormat;

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "sluice_kernel_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

inline void check(sluice::kernels::KernelStatus s, const char* what) {
  if (s != sluice::kernels::kKernelOk) {
    std::fprintf(stderr, "sluice_kernel_bench: %s failed (%d)\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

struct Format {
  const char* name;
  QuantFormat format;
  int block_values;
  int block_bytes;
  std::vector<int> half_offsets;  // fp16 fields, set to finite values
};

inline const Format kFormats[] = {
    {"Q4_K", QuantFormat::Q4_K, 256, 144, {0, 2}},
    {"Q6_K", QuantFormat::Q6_K, 256, 210, {208}},
    {"Q8_0", QuantFormat::Q8_0, 32, 34, {0}},
};

struct Shape {
  const char* name;
  int rows, cols, per_step;  // per_step: times in one decode step (32 layers, or the head once)
};

// Llama-3.1-8B: q|k|v, o, gate|up, down, and the LM head.
inline const Shape kShapes[] = {{"qkv", 6144, 4096, 32},
                                {"o", 4096, 4096, 32},
                                {"gate_up", 28672, 4096, 32},
                                {"down", 4096, 14336, 32},
                                {"head", 128256, 4096, 1}};

// Copies of one matrix in a format, random valid blocks.
struct Matrix {
  std::vector<uint8_t*> copies;
  size_t row_bytes = 0;
  size_t bytes = 0;
};

inline Matrix make_matrix(const Format& f, const Shape& s, std::mt19937& rng) {
  Matrix m;
  m.row_bytes = static_cast<size_t>(s.cols / f.block_values) * f.block_bytes;
  m.bytes = m.row_bytes * s.rows;
  std::vector<uint8_t> host(m.bytes);
  for (auto& b : host) b = static_cast<uint8_t>(rng());
  // Scales 2^-7 .. 2^-4 (fp16 0x2000 .. 0x2C00), either sign.
  const size_t blocks = m.bytes / f.block_bytes;
  for (size_t i = 0; i < blocks; ++i) {
    for (const int off : f.half_offsets) {
      const uint16_t h = static_cast<uint16_t>(0x2000 + (rng() % 0xC00)) | ((rng() & 1) << 15);
      std::memcpy(&host[i * f.block_bytes + off], &h, 2);
    }
  }
  const size_t copies = std::max<size_t>(2, ((size_t{256} << 20) + m.bytes - 1) / m.bytes);
  for (size_t c = 0; c < copies; ++c) {
    uint8_t* d = nullptr;
    check(cudaMalloc(&d, m.bytes), "cudaMalloc");
    check(cudaMemcpy(d, host.data(), m.bytes, cudaMemcpyHostToDevice), "upload");
    m.copies.push_back(d);
  }
  return m;
}

inline void free_matrix(Matrix& m) {
  for (uint8_t* d : m.copies) cudaFree(d);
  m.copies.clear();
}

// Median microseconds of one launch of fn(copy).
template <typename Fn>
double time_us(int copies, Fn&& fn) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  for (int i = 0; i < copies; ++i) fn(i);  // warm-up
  std::vector<double> rounds;
  constexpr int kLaunches = 16;
  for (int r = 0; r < 7; ++r) {
    check(cudaEventRecord(start), "record");
    for (int i = 0; i < kLaunches; ++i) fn(i % copies);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    rounds.push_back(1000.0 * ms / kLaunches);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

inline double copy_bandwidth_gbs() {
  const size_t bytes = size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMemset(a, 1, bytes), "memset");
  const double us =
      time_us(1, [&](int) { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); });
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / (us * 1e3);  // read + write
}

inline std::vector<float> download_bf16(const __nv_bfloat16* d, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  check(cudaMemcpy(h.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "download");
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = __bfloat162float(h[i]);
  return out;
}

// Times quant_linear's tiles (bf16 activations) on the same matrices at 17-512 tokens, beside
// cuBLAS on the matrices in BF16: the numbers behind quant_products' choice past the GEMV.
void bench_tiles(double bandwidth);

}  // namespace sluice::kernel_bench
