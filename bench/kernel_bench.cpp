// sluice_kernel_bench [all|gemv|tiles]: times the integer GEMV's variants
// (kernels/quant_gemv_int8.cuh) on the matrices of a Llama-3.1-8B decode step, in the block formats
// of its Q4_K_M and Q8_0 files, at 1-16 tokens, against the device's copy bandwidth: the numbers
// that choose kDefaultQuantGemvVariant. Needs a CUDA device; prints markdown tables.
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

#include "bench/kernel_bench_support.h"
#include "kernels/quant_gemv_int8.cuh"

namespace {

using namespace sluice::kernel_bench;  // NOLINT: the bench's own helpers
using sluice::kernels::QuantGemvVariant;

const QuantGemvVariant kVariants[] = {{1, 1, 1}, {2, 1, 1}, {4, 1, 1}, {1, 2, 1},
                                      {2, 2, 1}, {1, 4, 1}, {1, 1, 2}, {2, 1, 2}};

}  // namespace

int main(int argc, char** argv) {
  const std::string part = argc > 1 ? argv[1] : "all";
  if (part != "all" && part != "gemv" && part != "tiles") {
    std::fprintf(stderr, "usage: sluice_kernel_bench [all|gemv|tiles]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "sluice_kernel_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  const double bandwidth = copy_bandwidth_gbs();
  std::printf("device: %s, copy bandwidth %.0f GB/s\n\n", prop.name, bandwidth);
  if (part == "tiles") {
    bench_tiles(bandwidth);
    return 0;
  }

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
  if (part == "all") bench_tiles(bandwidth);
  if (failed) {
    std::fprintf(stderr, "sluice_kernel_bench: a variant's output differs from the default's\n");
    return 1;
  }
  return 0;
}
