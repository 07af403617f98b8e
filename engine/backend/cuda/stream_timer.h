// Timing work on a CUDA stream with events, for the measurements the backend makes when it is
// built (dense_gemv_choice, quant_products) and the roofline bench (cuda_roofline).
#pragma once

#include <cuda_runtime.h>

#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_check.h"

namespace sluice {

// Milliseconds per call of fn, which enqueues work on stream: `warmups` calls untimed, then
// `runs` calls between two events.
template <typename Fn>
float time_calls_ms(cudaStream_t stream, int warmups, int runs, Fn&& fn) {
  for (int i = 0; i < warmups; ++i) fn();
  CudaEvent begin(cudaEventDefault);
  CudaEvent end(cudaEventDefault);
  SLUICE_CUDA_CHECK(cudaEventRecord(begin.get(), stream));
  for (int i = 0; i < runs; ++i) fn();
  SLUICE_CUDA_CHECK(cudaEventRecord(end.get(), stream));
  SLUICE_CUDA_CHECK(cudaEventSynchronize(end.get()));
  float ms = 0.0f;
  SLUICE_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  return ms / static_cast<float>(runs);
}

}  // namespace sluice
