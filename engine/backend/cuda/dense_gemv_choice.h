// Whether products of float matrices (weights in the activation type) with few tokens go through
// the GEMV of kernels/quant_linear.cuh or cuBLAS, which is tuned for wide products and streams a
// lone row at two thirds of the memory bandwidth (issue 29). The answer is measured on the device
// when the backend is built: both run a one-token product of the model's widest float matrix a
// few times, and the GEMV is taken when it is faster. The CPU kernel emulator measures nothing
// (its timings mean nothing): there cuBLAS stays unless the options ask for the GEMV.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "engine/backend/cuda/cublas_gemm.h"
#include "engine/backend/cuda/cuda_weights.h"

namespace sluice {

// The most tokens a float matrix's product takes through the GEMV when it is chosen.
inline constexpr int kDenseGemvMaxTokens = 8;

struct DenseGemvChoice {
  bool use_gemv = false;
  std::string reason;  // for describe(): "GEMV 0.061 ms vs cuBLAS 0.082 ms on gate|up 28672 x 4096"
};

// Measures (or, under the emulator, declines to) and returns the choice for these weights.
DenseGemvChoice choose_dense_gemv(const CudaWeights& weights, const CublasGemm& gemm,
                                  ActivationDType dtype, cudaStream_t stream);

// Returns true when matrix m is multiplied by the GEMV for num_tokens tokens under the choice.
inline bool takes_dense_gemv(const CudaMatrix& m, int num_tokens, bool use_gemv) {
  return use_gemv && num_tokens <= kDenseGemvMaxTokens && m.dense() != nullptr && m.cols % 8 == 0;
}

}  // namespace sluice
