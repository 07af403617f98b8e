// `sluice bench --batched 1,8,32`: the measurement of llama.cpp's llama-batched-bench on the
// engine, so the two read the same way. For each batch size B, B prompts of P random token ids
// are prefilled together, then every request decodes max_tokens tokens (ignore_eos); prefill
// and decode are timed apart from the engine's own step times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/cli/bench_runner.h"
#include "app/cli/read_bandwidth.h"

namespace sluice::cli {

struct BatchedPoint {
  int batch = 0;
  int prompt_tokens = 0;  // per request
  int64_t prefill_tokens = 0;
  double prefill_s = 0.0;  // steps that computed prompt tokens (they also sample a first token)
  int64_t decode_steps = 0;
  int64_t decode_tokens = 0;
  double decode_s = 0.0;         // steps without prompt tokens
  int64_t generated_tokens = 0;  // every sampled token, the first ones of the prefill included
  double total_s = 0.0;          // wall time from the first request to the last token

  double prefill_tokens_per_s() const { return prefill_s > 0 ? prefill_tokens / prefill_s : 0.0; }
  double decode_tokens_per_s() const { return decode_s > 0 ? decode_tokens / decode_s : 0.0; }
  double decode_step_ms() const {
    return decode_steps > 0 ? 1000.0 * decode_s / static_cast<double>(decode_steps) : 0.0;
  }
  // Prompt and generated tokens over the wall time, llama-batched-bench's S.
  double total_tokens_per_s() const {
    return total_s > 0 ? static_cast<double>(prefill_tokens + generated_tokens) / total_s : 0.0;
  }
};

// The prompts of one batch: `count` requests of `length` ids drawn uniformly from the
// vocabulary (BOS and EOS left out) with a fixed seed, so every run sees the same ids.
std::vector<std::vector<int32_t>> random_prompts(const ModelSession& session, int count, int length,
                                                 uint32_t seed);

struct BatchedReport {
  std::string backend;  // Backend::describe of the backend measured
  std::vector<BatchedPoint> points;
  // The floor of a decode step: the weights it streams over the measured read bandwidth.
  ReadBandwidth bandwidth;
  double weight_bytes_per_step = 0.0;
  size_t weight_bytes_held = 0;  // the weights as the backend holds them (VRAM on a GPU)
  // The KV pool the last batch's engine ran with: its bytes and the tokens it holds.
  size_t kv_pool_bytes = 0;
  int64_t kv_pool_tokens = 0;
  double floor_step_ms() const {
    return bandwidth.bytes_per_s > 0 ? 1000.0 * weight_bytes_per_step / bandwidth.bytes_per_s : 0.0;
  }
};

// Measures the floor (the host's read bandwidth with the run's threads, or the GPU's), then runs
// every batch size on one backend, one engine each. Throws Error when a request fails.
BatchedReport run_batched_bench(const ModelSession& session, const BenchSpec& spec,
                                const std::vector<int>& batch_sizes, int prompt_tokens);

}  // namespace sluice::cli
