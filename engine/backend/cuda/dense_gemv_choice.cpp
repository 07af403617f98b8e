#include "engine/backend/cuda/dense_gemv_choice.h"

#include <cstdio>

#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/stream_timer.h"
#include "kernels/quant_linear.cuh"

namespace sluice {

#ifndef SLUICE_KERNEL_EMULATOR
namespace {

constexpr int kChoiceWarmups = 3;
constexpr int kChoiceRuns = 10;

// The widest matrix of the first layer held in the activation type (the one a decode step spends
// most time on). A mixture of experts' router is a float matrix in fp32 whatever the activation
// type, and multiplied by its own kernel: not one of them.
const CudaMatrix* widest_dense_matrix(const CudaWeights& weights, size_t element_bytes,
                                      const char** name) {
  const CudaMatrix* best = nullptr;
  for (const WeightRole role : all_weight_roles()) {
    if (!is_layer_role(role) || weight_kind(role) != WeightKind::Matrix) continue;
    const CudaMatrix& m = weights.layer(0).matrices[role];
    if (!m.dense() || m.cols % 8 != 0) continue;
    if (m.runs.front().row_bytes != static_cast<size_t>(m.cols) * element_bytes) continue;
    if (!best ||
        static_cast<int64_t>(m.rows) * m.cols > static_cast<int64_t>(best->rows) * best->cols) {
      best = &m;
      *name = weight_role_name(role);
    }
  }
  return best;
}

}  // namespace
#endif

DenseGemvChoice choose_dense_gemv(const CudaWeights& weights, const CublasGemm& gemm,
                                  ActivationDType dtype, cudaStream_t stream) {
#ifdef SLUICE_KERNEL_EMULATOR
  (void)weights;
  (void)gemm;
  (void)dtype;
  (void)stream;
  return {false, "cuBLAS (the emulator measures nothing)"};
#else
  const char* name = "";
  const size_t element_bytes = activation_element_bytes(dtype);
  const CudaMatrix* m = widest_dense_matrix(weights, element_bytes, &name);
  if (!m) return {false, "cuBLAS (no float matrix)"};
  DeviceBuffer x(static_cast<size_t>(m->cols) * element_bytes, "the GEMV measurement");
  DeviceBuffer y(static_cast<size_t>(m->rows) * element_bytes, "the GEMV measurement");
  SLUICE_CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), stream));
  const cudaDataType ab_type = cuda_data_type(dtype);
  const float cublas_ms = time_calls_ms(stream, kChoiceWarmups, kChoiceRuns, [&] {
    gemm.linear(x.get(), m->dense(), y.get(), 1, m->cols, m->rows, ab_type, ab_type);
  });
  float gemv_ms = 0.0f;
  visit_activation_type(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CudaMatrixRun& run = m->runs.front();
    gemv_ms = time_calls_ms(stream, kChoiceWarmups, kChoiceRuns, [&] {
      SLUICE_KERNEL_CHECK((kernels::quant_linear<T, T>(
          kernels::QuantFormat::Dense, static_cast<const uint8_t*>(run.data), run.row_bytes,
          run.rows, m->cols, static_cast<const T*>(x.get()), 0, static_cast<T*>(y.get()), 0, 1,
          stream)));
    });
  });
  char reason[160];
  std::snprintf(reason, sizeof reason, "%s (GEMV %.3f ms vs cuBLAS %.3f ms on %s %d x %d)",
                gemv_ms < cublas_ms ? "GEMV" : "cuBLAS", gemv_ms, cublas_ms, name, m->rows,
                m->cols);
  return {gemv_ms < cublas_ms, reason};
#endif
}

}  // namespace sluice
