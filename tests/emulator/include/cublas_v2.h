// The CPU kernel emulator's stand-in for <cublas_v2.h>: the types and entry points the CUDA
// backend resolves with dlopen. tests/emulator/emulated_cublas.cpp implements them in a shared
// library that the emulated backend tests load through SLUICE_CUBLAS, as the real one is loaded.
#pragma once

#include <cstddef>

#include "cuda_runtime.h"
#include "library_types.h"

#define CUBLAS_VER_MAJOR 13

typedef struct cublasContext* cublasHandle_t;

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
};
enum cublasMath_t {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};
enum cublasComputeType_t {
  CUBLAS_COMPUTE_32F = 68,
};
enum cublasGemmAlgo_t {
  CUBLAS_GEMM_DEFAULT = -1,
};

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t* handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType a_type, int lda, const void* b,
                            cudaDataType b_type, int ldb, const void* beta, void* c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute_type,
                            cublasGemmAlgo_t algo);
const char* cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value);
}
