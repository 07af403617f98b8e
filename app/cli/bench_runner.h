// The modes of `sluice bench` on one instruction file: sequential (one request at a time),
// static batching (batches of B, each waiting for its longest member) and continuous batching
// (the whole file, paged). Each mode runs on a fresh engine over the same loaded model.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/model_session.h"

namespace sluice::cli {

enum class BenchMode { Sequential, Static, Continuous };

// "sequential", "static" or "continuous".
const char* to_string(BenchMode mode);
// Parses a mode name; throws Error for an unknown one.
BenchMode parse_bench_mode(const std::string& name);

struct BenchSpec {
  EngineConfig engine;      // KV pool and limits shared by every mode
  SamplingParams sampling;  // max_tokens etc.
  int static_batch = 32;
  std::string device = "cpu";
  int num_threads = 0;
};

struct BenchResult {
  BenchMode mode = BenchMode::Continuous;
  int batch_cap = 0;  // max requests per step in this mode
  size_t num_requests = 0;
  double wall_s = 0.0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t num_steps = 0;
  double mean_batch = 0.0;      // requests per step
  double mean_occupancy = 0.0;  // mean_batch / batch_cap
  int peak_kv_blocks = 0;
  size_t kv_pool_bytes = 0;                  // the whole pool allocated
  size_t peak_kv_reserved_bytes = 0;         // blocks held at the peak
  double kv_reserved_over_used = 0;          // over all steps: block slots held / token slots used
  double kv_reserved_over_used_at_peak = 0;  // the same at the step holding the most blocks
  size_t naive_reserved_bytes = 0;           // peak concurrent requests x max_model_len tokens
  int64_t num_preemptions = 0;

  double requests_per_s() const {
    return wall_s > 0 ? static_cast<double>(num_requests) / wall_s : 0.0;
  }
  double output_tokens_per_s() const {
    return wall_s > 0 ? static_cast<double>(output_tokens) / wall_s : 0.0;
  }
};

// Runs one mode over the prompts (token ids). Throws Error when a request fails.
BenchResult run_bench_mode(BenchMode mode, const ModelSession& session,
                           const std::vector<std::vector<int32_t>>& prompts, const BenchSpec& spec);

}  // namespace sluice::cli
