// Interleaved rows (cpu_quant_interleave.h): the kernels that read the tiles give the scalar
// definition's bits, for every type with tiles, on llama.cpp's tensors and on random rows whose
// count leaves a tail of rows outside the tiles.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/backend/cpu/cpu_linear.h"
#include "engine/backend/cpu/cpu_quant_gemm.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "tests/unit/backend/quant_test_data.h"

namespace sluice {
namespace {

constexpr DType kInterleavedTypes[] = {DType::Q4_K, DType::Q6_K, DType::Q8_0};

// The rows of a matrix as tiles plus a copy of its rows whose interleaved part is zeroed: a
// product that read those rows instead of the tiles would come out wrong.
struct Interleaved {
  std::vector<uint8_t> tiles;
  std::vector<uint8_t> tail_only;
  QuantMatrixView view;

  explicit Interleaved(const QuantMatrixView& w)
      : tiles(interleaved_bytes(w.dtype, w.rows, w.cols)),
        tail_only(w.data, w.data + static_cast<size_t>(w.rows) * w.row_bytes),
        view(w) {
    interleave_rows(w.dtype, w.data, w.row_bytes, w.rows, w.cols, tiles.data());
    std::memset(tail_only.data(), 0, interleaved_bytes(w.dtype, w.rows, w.cols));
    view.interleaved = tiles.data();
  }

  // The view every product takes: the tiles replace the rows they hold, whatever the number of
  // tokens or kernel version (interleaved kernels, panels packed from the tiles, or rows restored
  // from them), so the zeroed rows catch any product that reads the rows.
  QuantMatrixView tiles_only() const {
    QuantMatrixView v = view;
    v.data = tail_only.data();
    return v;
  }
};

void expect_scalar_bits(const QuantMatrixView& w, int64_t num_tokens, ThreadPool& pool,
                        QuantKernelIsa isa = best_quant_kernel_isa()) {
  const Interleaved interleaved(w);
  const std::vector<float> x = test::random_activations(num_tokens, w.cols, 29);
  std::vector<float> scalar(static_cast<size_t>(num_tokens * w.rows));
  quant_gemm(w, x.data(), num_tokens, scalar.data(), w.rows, pool, QuantKernelIsa::Scalar);
  std::vector<float> y(scalar.size(), -1.0f);
  quant_gemm(interleaved.tiles_only(), x.data(), num_tokens, y.data(), w.rows, pool, isa);
  const char* path = uses_interleaved_kernels(interleaved.view, num_tokens, isa) ? "tiles"
                     : has_quant_panel_kernel(isa)                               ? "panels"
                                                                                 : "restored rows";
  EXPECT_EQ(std::memcmp(y.data(), scalar.data(), y.size() * sizeof(float)), 0)
      << dtype_name(w.dtype) << " " << w.rows << "x" << w.cols << ", " << num_tokens << " tokens, "
      << quant_kernel_isa_name(isa) << " (" << path << ")";
}

TEST(QuantInterleave, TilesGiveTheScalarBits) {
  const bool has_tiles = has_interleaved_kernel(DType::Q4_K, best_quant_kernel_isa());
  std::printf("interleaved kernels on this CPU: %s\n", has_tiles ? "yes" : "no (rows only)");
  // AVX2 and AVX-512 VNNI have tile kernels.
  EXPECT_EQ(has_tiles, quant_kernel_isa_supported(QuantKernelIsa::Avx2));
  ThreadPool pool(2);
  for (const DType dtype : kInterleavedTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const test::FixtureTensor fixture = test::load_attn_k(dtype);
    const QuantMatrixView file{dtype, fixture.data, fixture.rows, fixture.cols, fixture.row_bytes};
    // 53 rows: three groups of 16 and a tail of 5; 7 blocks of 32 or 3 super-blocks.
    const int64_t cols = dtype == DType::Q8_0 ? 7 * 32 : 3 * 256;
    const std::vector<uint8_t> random = test::random_quant_rows(dtype, 53, cols, 11);
    const QuantMatrixView odd{dtype, random.data(), 53, cols, dtype_num_bytes(dtype, cols)};
    for (const int64_t num_tokens : {1, 2, 3, 4, 5, 6, 7, 8}) {
      expect_scalar_bits(odd, num_tokens, pool);
    }
    // Past eight tokens: the tiles again eight tokens at a time up to 16 (Q6_K) or 32 (Q4_K);
    // then panels packed from the tiles, six tokens at a time.
    for (const int64_t num_tokens : {9, 11, 12, 16, 17, 32, 33, 70}) {
      expect_scalar_bits(odd, num_tokens, pool);
    }
    for (const int64_t num_tokens : {1, 3, 8, 13, 40}) expect_scalar_bits(file, num_tokens, pool);
    // AVX2: its tile kernels four tokens at a time (Q4_K and Q8_0 at any count, Q6_K up to 64),
    // then rows restored from the tiles, as for the scalar version.
    if (quant_kernel_isa_supported(QuantKernelIsa::Avx2)) {
      for (const int64_t num_tokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 40, 64, 65, 70})
        expect_scalar_bits(odd, num_tokens, pool, QuantKernelIsa::Avx2);
      for (const int64_t num_tokens : {1, 3, 8}) {
        expect_scalar_bits(file, num_tokens, pool, QuantKernelIsa::Avx2);
      }
    }
    for (const int64_t num_tokens : {1, 7, 13, 40})
      expect_scalar_bits(odd, num_tokens, pool, QuantKernelIsa::Scalar);
  }
}

// A group of products whose activations are shared between an interleaved matrix (signed
// activations) and a plain one of the same type (offset activations on AVX-512): each still
// gets its own kind, and the bits of quant_gemm.
TEST(QuantInterleave, GroupsShareActivationsOnlyOfOneKind) {
  ThreadPool pool(2);
  for (const DType dtype : kInterleavedTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const int64_t cols = dtype == DType::Q8_0 ? 5 * 32 : 2 * 256;
    const std::vector<uint8_t> rows = test::random_quant_rows(dtype, 37, cols, 3);
    const QuantMatrixView plain{dtype, rows.data(), 37, cols, dtype_num_bytes(dtype, cols)};
    const Interleaved interleaved(plain);
    for (const int64_t num_tokens : {1, 6}) {
      const std::vector<float> x = test::random_activations(num_tokens, cols, 5);
      std::vector<float> expected(static_cast<size_t>(num_tokens * 37));
      quant_gemm(plain, x.data(), num_tokens, expected.data(), 37, pool, QuantKernelIsa::Scalar);
      std::vector<float> a(expected.size(), -1.0f), b(expected.size(), -1.0f);
      std::vector<float> c(expected.size(), -1.0f);
      const QuantMatrixView tiles = interleaved.tiles_only();
      const QuantProduct products[] = {
          {plain, x.data(), num_tokens, a.data(), 37},
          {tiles, x.data(), num_tokens, b.data(), 37, 0},
          {plain, x.data(), num_tokens, c.data(), 37, 1},
      };
      quant_gemm_group(products, pool);
      const std::vector<float>* outputs[] = {&a, &b, &c};
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(std::memcmp(outputs[i]->data(), expected.data(), expected.size() * sizeof(float)),
                  0)
            << num_tokens << " tokens, product " << i;
      }
    }
  }
}

// A CpuMatrix made with interleave (the pool's threads sharing the copying) multiplies with the
// bits of one without, and counts its tiles among the bytes it owns.
TEST(QuantInterleave, MatrixWithTilesMultipliesAsWithout) {
  ThreadPool pool(2);
  const test::FixtureTensor fixture = test::load_attn_k(DType::Q6_K);
  WeightTensor weight;
  weight.name = "blk.0.attn_k.weight";
  weight.dtype = DType::Q6_K;
  weight.shape = {fixture.rows, fixture.cols};
  weight.data = fixture.data;
  weight.num_bytes = static_cast<size_t>(fixture.rows) * fixture.row_bytes;
  const CpuMatrix plain(weight), tiled(weight, /*interleave=*/true, &pool);
  EXPECT_EQ(plain.owned_bytes(), 0u);
  const bool has_tiles = has_interleaved_kernel(DType::Q6_K, best_quant_kernel_isa());
  EXPECT_EQ(tiled.owned_bytes(),
            has_tiles ? interleaved_bytes(DType::Q6_K, fixture.rows, fixture.cols) : 0u);
  for (const int64_t num_tokens : {1, 4, 12}) {
    const std::vector<float> x = test::random_activations(num_tokens, fixture.cols, 17);
    std::vector<float> a(static_cast<size_t>(num_tokens * fixture.rows), -1.0f), b(a.size(), -2.0f);
    plain.multiply(x.data(), num_tokens, a.data(), pool);
    tiled.multiply(x.data(), num_tokens, b.data(), pool);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << num_tokens;
  }
}

}  // namespace
}  // namespace sluice
