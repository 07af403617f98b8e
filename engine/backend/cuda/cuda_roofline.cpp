#include "engine/backend/cuda/cuda_roofline.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/cuda/cublas_gemm.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/stream_timer.h"

namespace sluice {

namespace {

constexpr int kRooflineWarmups = 3;
constexpr int kRooflineRepeats = 10;

// Times kRooflineRepeats calls of fn on stream (after kRooflineWarmups), in seconds.
template <typename Fn>
double time_on_stream(cudaStream_t stream, Fn&& fn) {
  return static_cast<double>(time_calls_ms(stream, kRooflineWarmups, kRooflineRepeats, fn)) *
         kRooflineRepeats / 1000.0;
}

}  // namespace

CudaRoofline measure_cuda_roofline(int device_index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    fail("the GPU roofline needs a CUDA device: ",
         status != cudaSuccess ? cudaGetErrorString(status) : "the CUDA runtime reports none");
  }
  if (device_index < 0 || device_index >= count)
    fail("device cuda:", device_index, ": there are ", count, " CUDA devices");
  make_device_current(device_index);
  cudaDeviceProp prop{};
  SLUICE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_index));
  CudaRoofline r;
  r.device = str_cat("cuda:", device_index, " ", prop.name);
  CudaStream stream;

  // Bandwidth: 1 GiB each way (or an eighth of free memory on small devices), far past the L2.
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  SLUICE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  r.copy_bytes = std::min<size_t>(size_t{1} << 30, free_bytes / 8) & ~size_t{255};
  {
    DeviceBuffer src(r.copy_bytes, "the bandwidth test");
    DeviceBuffer dst(r.copy_bytes, "the bandwidth test");
    SLUICE_CUDA_CHECK(cudaMemsetAsync(src.get(), 1, r.copy_bytes, stream.get()));
    const double seconds = time_on_stream(stream.get(), [&] {
      SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), r.copy_bytes,
                                        cudaMemcpyDeviceToDevice, stream.get()));
    });
    r.memory_bytes_per_s = 2.0 * static_cast<double>(r.copy_bytes) * kRooflineRepeats / seconds;
  }

  // Tensor rate: an 8192^3 BF16 product (about 1.1 TFLOP per call) with fp32 accumulation.
  r.gemm_size = 8192;
  {
    const auto n = static_cast<size_t>(r.gemm_size);
    DeviceBuffer a(n * n * 2, "the GEMM rate test");
    DeviceBuffer b(n * n * 2, "the GEMM rate test");
    DeviceBuffer c(n * n * 2, "the GEMM rate test");
    // Every byte 0x3c: each BF16 is 0x3c3c, about 0.0115, so no product overflows.
    SLUICE_CUDA_CHECK(cudaMemsetAsync(a.get(), 0x3c, a.bytes(), stream.get()));
    SLUICE_CUDA_CHECK(cudaMemsetAsync(b.get(), 0x3c, b.bytes(), stream.get()));
    const CublasGemm gemm(stream.get(), size_t{32} << 20);
    const double seconds = time_on_stream(stream.get(), [&] {
      gemm.gemm_nt(a.get(), b.get(), c.get(), r.gemm_size, r.gemm_size, r.gemm_size, CUDA_R_16BF,
                   CUDA_R_16BF);
    });
    r.bf16_flops_per_s = 2.0 * static_cast<double>(n * n * n) * kRooflineRepeats / seconds;
  }
  return r;
}

}  // namespace sluice
