// The emulated cuBLAS: the entry points the CUDA backend resolves with dlopen, as a shared
// library (SLUICE_CUBLAS names it in the emulated backend tests). A product is queued on the
// handle's stream through the test program's emulator (emu_submit_work), so it is ordered,
// deferred and captured into graphs like a kernel. It computes in fp32: the operands are widened
// from their type, the result rounded once to the output type (round to nearest even), which is
// what CUBLAS_COMPUTE_32F without reduced-precision reductions promises. Every element is summed
// in the CPU backend's fixed order (engine/backend/cpu/cpu_gemm.h), so within the emulator a
// token's products do not depend on the batch: what differs between schedules there comes from
// the kernels, which is what the emulated determinism tests are after.
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "engine/backend/cpu/cpu_gemm.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
};

namespace {

bool is_supported(cudaDataType type) {
  return type == CUDA_R_32F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

float load(const void* base, cudaDataType type, size_t i) {
  switch (type) {
    case CUDA_R_16F:
      return __half2float(static_cast<const __half*>(base)[i]);
    case CUDA_R_16BF:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}

void store(void* base, cudaDataType type, size_t i, float value) {
  switch (type) {
    case CUDA_R_16F:
      static_cast<__half*>(base)[i] = __float2half_rn(value);
      break;
    case CUDA_R_16BF:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(value);
      break;
    default:
      static_cast<float*>(base)[i] = value;
  }
}

// A column-major matrix of rows x cols with leading dimension ld, widened to a dense fp32 one.
std::vector<float> widen(const void* base, cudaDataType type, int rows, int cols, int ld) {
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r)
      out[static_cast<size_t>(c) * rows + r] = load(base, type, static_cast<size_t>(c) * ld + r);
  return out;
}

// op(M) of a column-major matrix widened to [outer, k] row-major: row i holds op(M)'s i-th row
// (outer = m, for A) or column (outer = n, for B), so every product is a dot of two rows.
std::vector<float> widen_rows(const void* base, cudaDataType type, bool is_transposed,
                              bool rows_of_op, int outer, int k, int ld) {
  std::vector<float> out(static_cast<size_t>(outer) * k);
  for (int i = 0; i < outer; ++i) {
    for (int j = 0; j < k; ++j) {
      // Element (i, j) of op(M) (rows_of_op) or of op(M)^T: stored at (row, col) of M.
      const bool swap = is_transposed == rows_of_op;
      const int row = swap ? j : i;
      const int col = swap ? i : j;
      out[static_cast<size_t>(i) * k + j] =
          load(base, type, static_cast<size_t>(col) * ld + static_cast<size_t>(row));
    }
  }
  return out;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void*, size_t) {
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t) {
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}

// C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C, column-major, as cuBLAS defines it.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType a_type, int lda, const void* b,
                            cudaDataType b_type, int ldb, const void* beta, void* c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute_type,
                            cublasGemmAlgo_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const int a_rows = transa == CUBLAS_OP_N ? m : k;
  const int b_rows = transb == CUBLAS_OP_N ? k : n;
  if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (compute_type != CUBLAS_COMPUTE_32F || !is_supported(a_type) || !is_supported(b_type) ||
      !is_supported(c_type)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  // Scalars are read at the call (host pointer mode); the matrices when the stream runs it.
  const float alpha_value = *static_cast<const float*>(alpha);
  const float beta_value = *static_cast<const float*>(beta);
  std::function<void()> work = [=] {
    // C[row, col] = sum_j op(A)[row, j] * op(B)[j, col]: rows of op(A) against columns of op(B).
    const std::vector<float> a_rows_wide =
        widen_rows(a, a_type, transa != CUBLAS_OP_N, /*rows_of_op=*/true, m, k, lda);
    const std::vector<float> b_cols_wide =
        widen_rows(b, b_type, transb != CUBLAS_OP_N, /*rows_of_op=*/false, n, k, ldb);
    std::vector<float> product(static_cast<size_t>(m) * n, 0.0f);  // column-major, ld m
    if (k > 0) {
      sluice::gemm_nt_fixed_order(b_cols_wide.data(), n, a_rows_wide.data(), m, k, product.data(),
                                  m);
    }
    std::vector<float> wide_c(static_cast<size_t>(m) * n, 0.0f);
    if (beta_value != 0.0f) wide_c = widen(c, c_type, m, n, ldc);
    for (size_t i = 0; i < product.size(); ++i)
      wide_c[i] = alpha_value * product[i] + beta_value * wide_c[i];
    for (int col = 0; col < n; ++col)
      for (int row = 0; row < m; ++row)
        store(c, c_type, static_cast<size_t>(col) * ldc + row,
              wide_c[static_cast<size_t>(col) * m + row]);
  };
  emu_submit_work(handle->stream, &work);
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  *value = type == MAJOR_VERSION ? CUBLAS_VER_MAJOR : 0;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
