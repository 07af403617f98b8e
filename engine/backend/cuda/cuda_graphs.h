// CUDA graphs of decode-only steps, one per (batch bucket, context bucket), captured right after
// the first step of that shape ran eagerly and replayed for every later one. A graph bakes in every
// device address it was captured with (weights, step buffers, the staged inputs' device buffer, the
// KV pool, the attention workspace), so the backend clears the cache whenever one of them moves.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <utility>

namespace sluice {

struct CudaGraphKey {
  int batch_size = 0;   // padded number of decode requests
  int max_seq_len = 0;  // context bucket the attention launch is sized for
  auto operator<=>(const CudaGraphKey&) const = default;
};

class CudaGraphCache {
 public:
  CudaGraphCache() = default;
  ~CudaGraphCache() { clear(); }
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  bool contains(const CudaGraphKey& key) const { return graphs_.contains(key); }

  // Captures what `enqueue` puts on stream (it must only enqueue work: no allocation, no
  // synchronisation) as the graph for key; nothing runs. Call it after the same work ran once
  // eagerly, so that lazily loaded kernels and cuBLAS's heuristics are warm before capture.
  // Throws Error when capture fails (the stream has left capture mode by then).
  void capture(const CudaGraphKey& key, cudaStream_t stream, const std::function<void()>& enqueue);

  // Launches the graph for key on stream. Precondition: contains(key).
  void launch(const CudaGraphKey& key, cudaStream_t stream) const;

  // Destroys every graph.
  void clear();
  size_t size() const { return graphs_.size(); }

 private:
  std::map<CudaGraphKey, cudaGraphExec_t> graphs_;
};

}  // namespace sluice
