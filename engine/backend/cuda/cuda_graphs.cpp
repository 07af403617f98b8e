#include "engine/backend/cuda/cuda_graphs.h"

#include "engine/backend/cuda/cuda_check.h"

namespace sluice {

namespace {

// Captures what enqueue puts on stream into an executable graph.
cudaGraphExec_t capture_graph(cudaStream_t stream, const std::function<void()>& enqueue) {
  // Thread-local mode: only this thread's unsafe calls (say a cudaMalloc) break the capture,
  // so another engine on another thread cannot spoil it.
  SLUICE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);  // leave capture mode whatever happened
    if (partial) cudaGraphDestroy(partial);
    cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  SLUICE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  SLUICE_CUDA_CHECK(status);
  return exec;
}

}  // namespace

void CudaGraphCache::capture(const CudaGraphKey& key, cudaStream_t stream,
                             const std::function<void()>& enqueue) {
  const cudaGraphExec_t exec = capture_graph(stream, enqueue);
  const auto [it, is_new] = graphs_.emplace(key, exec);
  if (!is_new) {
    cudaGraphExecDestroy(it->second);
    it->second = exec;
  }
}

void CudaGraphCache::launch(const CudaGraphKey& key, cudaStream_t stream) const {
  SLUICE_CUDA_CHECK(cudaGraphLaunch(graphs_.at(key), stream));
}

void CudaGraphCache::clear() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  graphs_.clear();
}

}  // namespace sluice
