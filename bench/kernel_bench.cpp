// sluice_kernel_bench: times the integer GEMV's variants (kernels/quant_gemv_int8.cuh) on the
// matrices of a Llama-3.1-8B decode step, in the block formats of its Q4_K_M and Q8_0 files, at
// 1-16 tokens, against the device's copy bandwidth: the numbers that choose
// kDefaultQuantGemvVariant. Needs a CUDA device; prints markdown tables.
//
// Each timing launches the product over several copies of the matrix in turn (at least 256 MiB
// in all, five times the H200's L2), so the weights come from memory as in a model's step, and
// takes the median of 7 rounds of 16 launches timed with events. Every variant's output is
// compared with the default's (it must be the same function): the largest difference relative to
// the largest output is printed, and over 1e-2 fails the run (the outputs are bf16, 2^-8 apart
// near the largest, and a split row sums in another order).
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

#include "kernels/quant_gemv_int8.cuh"

namespace {

using sluice::kernels::QuantFormat;
using sluice::kernels::QuantGemvVariant;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "sluice_kernel_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(sluice::kernels::KernelStatus s, const char* what) {
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

const Format kFormats[] = {
    {"Q4_K", QuantFormat::Q4_K, 256, 144, {0, 2}},
    {"Q6_K", QuantFormat::Q6_K, 256, 210, {208}},
    {"Q8_0", QuantFormat::Q8_0, 32, 34, {0}},
};

struct Shape {
  const char* name;
  int rows, cols, per_step;  // per_step: times in one decode step (32 layers, or the head once)
};

// Llama-3.1-8B: q|k|v, o, gate|up, down, and the LM head.
const Shape kShapes[] = {{"qkv", 6144, 4096, 32},
                         {"o", 4096, 4096, 32},
                         {"gate_up", 28672, 4096, 32},
                         {"down", 4096, 14336, 32},
                         {"head", 128256, 4096, 1}};

const QuantGemvVariant kVariants[] = {{1, 1, 1}, {2, 1, 1}, {4, 1, 1}, {1, 2, 1},
                                      {2, 2, 1}, {1, 4, 1}, {1, 1, 2}, {2, 1, 2}};

// Copies of one matrix in a format, random valid blocks.
struct Matrix {
  std::vector<uint8_t*> copies;
  size_t row_bytes = 0;
  size_t bytes = 0;
};

Matrix make_matrix(const Format& f, const Shape& s, std::mt19937& rng) {
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

void free_matrix(Matrix& m) {
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

double copy_bandwidth_gbs() {
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

std::vector<float> download_bf16(const __nv_bfloat16* d, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  check(cudaMemcpy(h.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "download");
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = __bfloat162float(h[i]);
  return out;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "sluice_kernel_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  const double bandwidth = copy_bandwidth_gbs();
  std::printf("device: %s, copy bandwidth %.0f GB/s\n\n", prop.name, bandwidth);

  constexpr int kMaxTokens = 16;
  const int max_cols = 14336;
  std::mt19937 rng(7);
  // Activations: random bf16 in [-1, 1), quantized once per token count.
  std::vector<__nv_bfloat16> x_host(static_cast<size_t>(kMaxTokens) * max_cols);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto& v : x_host) v = __float2bfloat16(uniform(rng));
  __nv_bfloat16* x = nullptr;
  check(cudaMalloc(&x, x_host.size() * sizeof(__nv_bfloat16)), "cudaMalloc");
  check(cudaMemcpy(x, x_host.data(), x_host.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice),
        "upload");
  void* q8_buffer = nullptr;
  check(cudaMalloc(&q8_buffer, sluice::kernels::q8_rows_bytes(kMaxTokens, max_cols)), "cudaMalloc");
  __nv_bfloat16* y = nullptr;
  check(cudaMalloc(&y, static_cast<size_t>(kMaxTokens) * 128256 * sizeof(__nv_bfloat16)),
        "cudaMalloc");

  std::printf(
      "quantize_q8_rows (bf16), us a launch:\n\n| tokens | 4096 | 14336 |\n|---:|---:|---:|\n");
  for (const int tokens : {1, 8, 16}) {
    double us[2];
    int i = 0;
    for (const int cols : {4096, 14336}) {
      const auto q8 = sluice::kernels::q8_rows_in(q8_buffer, tokens, cols);
      us[i++] = time_us(1, [&](int) {
        check(sluice::kernels::quantize_q8_rows<__nv_bfloat16>(x, cols, q8, nullptr), "quantize");
      });
    }
    std::printf("| %d | %.2f | %.2f |\n", tokens, us[0], us[1]);
  }
  std::printf("\n");

  bool failed = false;
  for (const Format& f : kFormats) {
    std::vector<Matrix> matrices;
    for (const Shape& s : kShapes) matrices.push_back(make_matrix(f, s, rng));
    double step_bytes = 0.0;
    for (size_t i = 0; i < matrices.size(); ++i)
      step_bytes += static_cast<double>(matrices[i].bytes) * kShapes[i].per_step;
    const double floor_us = step_bytes / (bandwidth * 1e3);
    std::printf(
        "%s: us a launch (and the share of the copy bandwidth it streams at); a step's sum "
        "over 32 layers and the head, floor %.0f us\n\n",
        f.name, floor_us);
    std::printf("| tokens | unroll x split x rows |");
    for (const Shape& s : kShapes) std::printf(" %s %dx%d |", s.name, s.rows, s.cols);
    std::printf(" step us | of floor | max diff |\n|---:|---|");
    for (size_t i = 0; i < std::size(kShapes); ++i) std::printf("---:|");
    std::printf("---:|---:|---:|\n");
    for (const int tokens : {1, 2, 4, 8, 16}) {
      std::vector<std::vector<float>> reference(std::size(kShapes));
      for (const QuantGemvVariant& v : kVariants) {
        double step_us = 0.0, max_diff = 0.0;
        std::string cells;
        for (size_t i = 0; i < std::size(kShapes); ++i) {
          const Shape& s = kShapes[i];
          const Matrix& m = matrices[i];
          const auto q8 = sluice::kernels::q8_rows_in(q8_buffer, tokens, s.cols);
          check(sluice::kernels::quantize_q8_rows<__nv_bfloat16>(x, max_cols, q8, nullptr),
                "quantize");
          const auto run = [&](int c) {
            check(sluice::kernels::quant_gemv_int8_variant<__nv_bfloat16>(
                      f.format, m.copies[static_cast<size_t>(c)], m.row_bytes, s.rows, q8, y, 0, v,
                      nullptr),
                  "quant_gemv_int8_variant");
          };
          const double us = time_us(static_cast<int>(m.copies.size()), run);
          run(0);
          check(cudaDeviceSynchronize(), "the GEMV");
          const std::vector<float> out = download_bf16(y, static_cast<size_t>(tokens) * s.rows);
          if (reference[i].empty()) reference[i] = out;
          float largest = 0.0f, diff = 0.0f;
          for (size_t k = 0; k < out.size(); ++k) {
            largest = std::max(largest, std::fabs(reference[i][k]));
            diff = std::max(diff, std::fabs(out[k] - reference[i][k]));
          }
          max_diff =
              std::max(max_diff, largest > 0.0f ? diff / largest : (diff > 0.0f ? 1.0 : 0.0));
          step_us += us * s.per_step;
          char cell[64];
          std::snprintf(cell, sizeof cell, " %.1f (%.0f%%) |", us,
                        100.0 * static_cast<double>(m.bytes) / (us * 1e3) / bandwidth);
          cells += cell;
        }
        if (!(max_diff <= 1e-2)) failed = true;
        std::printf("| %d | %d x %d x %d |%s %.0f | %.0f%% | %.1e |\n", tokens, v.unroll, v.split,
                    v.rows, cells.c_str(), step_us, 100.0 * floor_us / step_us, max_diff);
      }
    }
    std::printf("\n");
    for (Matrix& m : matrices) free_matrix(m);
  }
  cudaFree(x);
  cudaFree(q8_buffer);
  cudaFree(y);
  if (failed) {
    std::fprintf(stderr, "sluice_kernel_bench: a variant's output differs from the default's\n");
    return 1;
  }
  return 0;
}
