// The two ceilings of a decode step on one GPU, measured rather than taken from a data sheet:
// memory bandwidth (a large device-to-device cudaMemcpy, counting the bytes read and written)
// and the BF16 tensor-core rate (a large cuBLAS product with fp32 accumulation). The bench sets
// each step's bytes and flops against them. No CUDA header here: the app includes it.
#pragma once

#include <cstddef>
#include <string>

namespace sluice {

struct CudaRoofline {
  std::string device;  // "cuda:0 NVIDIA H100 80GB HBM3"
  double memory_bytes_per_s = 0.0;
  double bf16_flops_per_s = 0.0;
  size_t copy_bytes = 0;  // size of the timed copy
  int gemm_size = 0;      // m = n = k of the timed product
};

// Measures device_index's bandwidth and BF16 rate (about a second). Throws Error when there is
// no usable device or the buffers cannot be had.
CudaRoofline measure_cuda_roofline(int device_index);

}  // namespace sluice
