// Matrix products through cuBLAS, which is loaded with dlopen at run time rather than linked.
//
// Why dlopen: the toolkit ships cuBLAS only as a shared library (no libcublas_static.a in CUDA
// 13), and a DT_NEEDED entry on libcublas.so.13 would stop `sluice --version` (and the CPU
// backend) from starting on a machine without CUDA, and would make dpkg-shlibdeps look for a
// Debian package providing it. Loading it when the first CUDA backend is built keeps the binary
// free of that dependency; a machine with a GPU but without cuBLAS gets a clear error then.
//
// Layout: weights are [out_features, in_features] row-major (as every model file stores them)
// and activations [num_rows, features] row-major, so y = x · wᵀ is, in cuBLAS's column-major
// terms, yᵀ[out, rows] = w(ᵀ)[out, in] · xᵀ[in, rows]: cublasGemmEx(OP_T, OP_N, m = out,
// n = rows, k = in, A = w, lda = in, B = x, ldb = in, C = y, ldc = out).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace sluice {

// The cuBLAS entry points the backend uses, resolved once per process.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  // cublasGemmEx is overloaded in C++ (a legacy cudaDataType compute type), hence spelled out.
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasGetProperty) get_property = nullptr;
  std::string library_path;  // the file that was loaded

  // Returns the loaded API; loads libcublas on the first call. Throws Error saying which files
  // were tried (and dlerror's text) when cuBLAS cannot be loaded.
  static const CublasApi& get();
};

// Throws sluice::Error when a cuBLAS call fails, naming the call, file:line and the status.
[[noreturn]] void throw_cublas_error(const char* call, const char* file, int line,
                                     cublasStatus_t status);

#define SLUICE_CUBLAS_CHECK(call)                                              \
  do {                                                                         \
    const cublasStatus_t sluice_status_ = (call);                              \
    if (sluice_status_ != CUBLAS_STATUS_SUCCESS)                               \
      ::sluice::throw_cublas_error(#call, __FILE__, __LINE__, sluice_status_); \
  } while (0)

// One cuBLAS handle bound to a stream, with its own workspace so that products can be captured
// into CUDA graphs (cuBLAS must not allocate during capture).
class CublasGemm {
 public:
  // Precondition: the device the handle is for is current.
  CublasGemm(cudaStream_t stream, size_t workspace_bytes);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // y[num_rows, out_features] = x[num_rows, in_features] · w[out_features, in_features]ᵀ.
  // x and w are of type ab_type (CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF), y of y_type (ab_type
  // or CUDA_R_32F); products accumulate in fp32 (pure fp32, no TF32, for CUDA_R_32F).
  // x_row_stride / y_row_stride: elements from one row of x / y to the next (0: in_features /
  // out_features, dense rows; a larger y_row_stride writes the column range of a wider output).
  void linear(const void* x, const void* w, void* y, int num_rows, int in_features,
              int out_features, cudaDataType ab_type, cudaDataType y_type, int x_row_stride = 0,
              int y_row_stride = 0) const;

  // C[m, n] = A[m, k] · B[n, k]ᵀ row-major, the shape of linear() under other names; used by
  // the roofline bench to time a large product.
  void gemm_nt(const void* a, const void* b, void* c, int m, int n, int k, cudaDataType ab_type,
               cudaDataType c_type) const {
    linear(a, b, c, m, k, n, ab_type, c_type);
  }

  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  const CublasApi& api_;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace sluice
