#include "app/cli/read_bandwidth.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#include "engine/backend/cuda/cuda_weight_layout.h"
#include "engine/core/error.h"
#include "engine/core/huge_page_buffer.h"
#include "engine/core/thread_pool.h"

namespace sluice::cli {

namespace {

constexpr size_t kProbeBytes = size_t{512} << 20;
constexpr int kPasses = 5;

// Sums a slice with four independent accumulators, so the loads, not one add chain, bound it.
uint64_t sum_words(const uint64_t* words, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a += words[i];
    b += words[i + 1];
    c += words[i + 2];
    d += words[i + 3];
  }
  for (; i < n; ++i) a += words[i];
  return a + b + c + d;
}

}  // namespace

ReadBandwidth measure_host_read_bandwidth(int num_threads) {
  ThreadPool pool(num_threads);
  const size_t num_words = kProbeBytes / sizeof(uint64_t);
  // In huge pages where the kernel lends them, as the CPU backend's weight tiles.
  HugePageBuffer memory;
  memory.allocate(kProbeBytes);
  auto* buffer = reinterpret_cast<uint64_t*>(memory.data());
  // Touched by the threads that will read it (first touch places pages near them).
  pool.parallel_for(static_cast<int64_t>(num_words), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) buffer[static_cast<size_t>(i)] = static_cast<uint64_t>(i);
  });
  std::atomic<uint64_t> sink{0};  // the sums are stored: no pass can be optimised away
  double best_s = 0.0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(
        static_cast<int64_t>(num_words),
        [&](int64_t begin, int64_t end) {
          sink += sum_words(buffer + begin, static_cast<size_t>(end - begin));
        },
        static_cast<int64_t>(num_words) / pool.num_threads());
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pass == 0 || s < best_s) best_s = s;
  }
  ReadBandwidth out;
  out.bytes_per_s = static_cast<double>(kProbeBytes) / best_s;
  out.how =
      str_cat("host read, ", pool.num_threads(), " thread", pool.num_threads() == 1 ? "" : "s",
              ", ", kProbeBytes >> 20, " MiB, best of ", kPasses, " passes");
  return out;
}

double streamed_weight_bytes(const Model& model, size_t gpu_element_bytes) {
  const auto bytes = [&](const WeightTensor& t) {
    if (t.empty()) return 0.0;
    return static_cast<double>(gpu_element_bytes == 0 ? t.num_bytes
                                                      : cuda_matrix_bytes(t, gpu_element_bytes));
  };
  double total = bytes(model.weights.lm_head);
  for (const LayerWeights& l : model.weights.layers) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role) && weight_kind(role) == WeightKind::Matrix) total += bytes(l[role]);
    }
  }
  // A mixture of experts: the experts one token uses (the least a step reads; a batch's tokens
  // may choose more of them, up to every one).
  const int num_experts_used = model.config.num_experts_used;
  for (const LayerExperts& l : model.weights.experts) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role) || weight_kind(role) != WeightKind::ExpertMatrices) continue;
      if (!l[role].empty()) total += num_experts_used * bytes(l[role].front());
    }
  }
  return total;
}

}  // namespace sluice::cli
