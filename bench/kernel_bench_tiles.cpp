// sluice_kernel_bench's tiles part: quant_linear's tile kernel (kernels/quant_tile_mma.cuh) and
// the integer tiles (kernels/quant_mmq.cuh, each launch after its activations' quantization and
// with K split as the backend splits it, as a step runs them) on the Llama-3.1-8B matrices in Q4_K,
// Q6_K and Q8_0 at 8-512 tokens (the tiles alone: no GEMV range), and cuBLAS on the same matrices
// in BF16 (the dense model's products, through the backend's CublasGemm): a step's sum over 32
// layers and the LM head, the share of the copy bandwidth the weights stream at, and the tensor
// throughput.
#include "bench/kernel_bench_support.h"
#include "engine/backend/cuda/cublas_gemm.h"
#include "kernels/quant_gemv_int8.cuh"
#include "kernels/quant_linear.cuh"
#include "kernels/quant_mmq.cuh"

namespace sluice::kernel_bench {
namespace {

constexpr int kTokenCounts[] = {8, 16, 32, 64, 128, 256, 512};
constexpr int kMaxTokens = 512;
constexpr int kMaxCols = 14336;

// One row of the table: each shape's us, the step's sum and its throughput.
template <typename Run>
void print_row(const char* name, int tokens, const std::vector<size_t>& bytes, double bandwidth,
               Run&& run) {
  double step_us = 0.0, flops = 0.0, step_bytes = 0.0;
  std::string cells;
  for (size_t i = 0; i < std::size(kShapes); ++i) {
    const Shape& s = kShapes[i];
    const double us = run(i);
    step_us += us * s.per_step;
    flops += 2.0 * tokens * s.rows * static_cast<double>(s.cols) * s.per_step;
    step_bytes += static_cast<double>(bytes[i]) * s.per_step;
    char cell[48];
    std::snprintf(cell, sizeof cell, " %.1f |", us);
    cells += cell;
  }
  std::printf("| %s | %d |%s %.0f | %.0f%% | %.0f |\n", name, tokens, cells.c_str(), step_us,
              100.0 * step_bytes / (step_us * 1e3) / bandwidth, flops / (step_us * 1e6));
}

}  // namespace

void bench_tiles(double bandwidth) {
  std::mt19937 rng(11);
  std::vector<__nv_bfloat16> x_host(static_cast<size_t>(kMaxTokens) * kMaxCols);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto& v : x_host) v = __float2bfloat16(uniform(rng));
  __nv_bfloat16 *x = nullptr, *y = nullptr;
  check(cudaMalloc(&x, x_host.size() * sizeof(__nv_bfloat16)), "cudaMalloc");
  check(cudaMemcpy(x, x_host.data(), x_host.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice),
        "upload");
  check(cudaMalloc(&y, static_cast<size_t>(kMaxTokens) * 128256 * sizeof(__nv_bfloat16)),
        "cudaMalloc");
  void* q8_buffer = nullptr;
  check(cudaMalloc(&q8_buffer, sluice::kernels::q8_rows_bytes(kMaxTokens, kMaxCols)), "cudaMalloc");
  // The integer tiles split K as the backend does (quant_mmq_parts of the shape on this GPU).
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  size_t partial_floats = 1;
  for (const Shape& s : kShapes) {
    const int parts = sluice::kernels::quant_mmq_parts(s.rows, s.cols, prop.multiProcessorCount);
    partial_floats = std::max(partial_floats,
                              sluice::kernels::quant_mmq_partial_floats(s.rows, kMaxTokens, parts));
  }
  float* partials = nullptr;
  check(cudaMalloc(&partials, partial_floats * sizeof(float)), "cudaMalloc");
  std::printf(
      "quant_linear's tiles and the integer tiles (\"integer\": the activations' quantization "
      "included), bf16 activations, against cuBLAS on BF16 weights: us a launch; a "
      "step's sum over 32 layers and the head, the weights' share of the copy bandwidth, "
      "TFLOP/s\n\n| weights | tokens |");
  for (const Shape& s : kShapes) std::printf(" %s %dx%d |", s.name, s.rows, s.cols);
  std::printf(" step us | of bandwidth | TFLOP/s |\n|---|---:|");
  for (size_t i = 0; i < std::size(kShapes); ++i) std::printf("---:|");
  std::printf("---:|---:|---:|\n");

  for (const Format& f : kFormats) {
    std::vector<Matrix> matrices;
    std::vector<size_t> bytes;
    for (const Shape& s : kShapes) {
      matrices.push_back(make_matrix(f, s, rng));
      bytes.push_back(matrices.back().bytes);
    }
    for (const int tokens : kTokenCounts) {
      print_row(f.name, tokens, bytes, bandwidth, [&](size_t i) {
        const Shape& s = kShapes[i];
        const Matrix& m = matrices[i];
        return time_us(static_cast<int>(m.copies.size()), [&](int c) {
          check(sluice::kernels::quant_linear<__nv_bfloat16, __nv_bfloat16>(
                    f.format, m.copies[static_cast<size_t>(c)], m.row_bytes, s.rows, s.cols, x,
                    kMaxCols, y, 0, tokens, nullptr, /*gemv_max_tokens=*/0),
                "quant_linear");
        });
      });
    }
    const std::string mmq_name = std::string(f.name) + " integer";
    for (const int tokens : kTokenCounts) {
      print_row(mmq_name.c_str(), tokens, bytes, bandwidth, [&](size_t i) {
        const Shape& s = kShapes[i];
        const Matrix& m = matrices[i];
        const sluice::kernels::Q8Rows q8 = sluice::kernels::q8_rows_in(q8_buffer, tokens, s.cols);
        const int parts =
            sluice::kernels::quant_mmq_parts(s.rows, s.cols, prop.multiProcessorCount);
        return time_us(static_cast<int>(m.copies.size()), [&](int c) {
          check(sluice::kernels::quantize_q8_rows<__nv_bfloat16>(x, kMaxCols, q8, nullptr),
                "quantize_q8_rows");
          check(sluice::kernels::quant_mmq<__nv_bfloat16>(
                    f.format, m.copies[static_cast<size_t>(c)], m.row_bytes, s.rows, q8, y, 0,
                    nullptr, sluice::kernels::MmqSplit{parts, partials}),
                "quant_mmq");
        });
      });
    }
    for (Matrix& m : matrices) free_matrix(m);
  }

  // BF16 weights through cuBLAS (random bf16 values: the bytes of a Dense "format").
  const sluice::CublasGemm gemm(nullptr, size_t{32} << 20);
  const Format bf16{"BF16", QuantFormat::Dense, 1, 2, {}};
  std::vector<Matrix> matrices;
  std::vector<size_t> bytes;
  for (const Shape& s : kShapes) {
    Matrix m = make_matrix(bf16, s, rng);
    // Random bytes include NaNs and infinities: overwrite with finite values.
    std::vector<__nv_bfloat16> values(static_cast<size_t>(s.rows) * s.cols);
    for (auto& v : values) v = __float2bfloat16(uniform(rng) * 0.05f);
    for (uint8_t* d : m.copies)
      check(cudaMemcpy(d, values.data(), m.bytes, cudaMemcpyHostToDevice), "upload");
    bytes.push_back(m.bytes);
    matrices.push_back(std::move(m));
  }
  for (const int tokens : kTokenCounts) {
    print_row("BF16 cuBLAS", tokens, bytes, bandwidth, [&](size_t i) {
      const Shape& s = kShapes[i];
      const Matrix& m = matrices[i];
      return time_us(static_cast<int>(m.copies.size()), [&](int c) {
        gemm.linear(x, m.copies[static_cast<size_t>(c)], y, tokens, s.cols, s.rows, CUDA_R_16BF,
                    CUDA_R_16BF, kMaxCols);
      });
    });
  }
  for (Matrix& m : matrices) free_matrix(m);
  cudaFree(x);
  cudaFree(y);
  cudaFree(q8_buffer);
  cudaFree(partials);
  std::printf("\n");
}

}  // namespace sluice::kernel_bench
