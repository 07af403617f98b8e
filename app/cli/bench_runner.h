// The modes of `sluice bench` on one instruction file: sequential (one request at a time),
// static batching (batches of B, each waiting for its longest member) and continuous batching
// (the whole file, paged). Each mode runs on a fresh engine over the same loaded model.
#pragma once

#include <memory>
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
  // sampling.grammar compiled: the benchmark drives engines directly, without a service to
  // compile it (null: free text).
  std::shared_ptr<const Grammar> grammar;
  int static_batch = 32;
  std::string device = "cpu";
  int num_threads = 0;
  std::string activations = "bf16";  // CUDA: activation and KV type (bf16, fp16, fp32)
  bool cuda_graphs = true;           // CUDA: replay decode steps as graphs
};

// A step's cost against a GPU's ceilings: the bytes it must move (every weight matrix once, the
// LM head included, plus the K and V of every context token it attends to) over the measured
// memory bandwidth, and its flops (2 x matrix parameters per token, the LM head per logits row,
// 4 x layers x q_size per query-context pair) over the measured BF16 tensor rate. The roofline
// time is the larger of the two.
struct RooflineModel {
  double weight_bytes_per_step = 0.0;
  double kv_bytes_per_context_token = 0.0;
  double flops_per_token = 0.0;
  double flops_per_logits_row = 0.0;
  double flops_per_attention_pair = 0.0;
  double memory_bytes_per_s = 0.0;
  double flops_per_s = 0.0;

  struct Step {
    double bytes = 0.0;
    double flops = 0.0;
    double seconds = 0.0;
    bool is_memory_bound = true;
  };
  // num_context_tokens: the context tokens the step's queries read (for a decode step, the sum
  // of the running requests' lengths: StepStats::num_kv_tokens).
  Step step(int num_tokens, int num_logits_rows, int64_t num_context_tokens) const;
};

// The bytes of one activation (and float weight) on a GPU run of spec: its --activations type.
size_t gpu_element_bytes(const BenchSpec& spec);

// Returns the model for a model shape with element_bytes per weight and KV element.
RooflineModel make_roofline_model(const ModelConfig& config, size_t element_bytes,
                                  double memory_bytes_per_s, double flops_per_s);

// The device's measured ceilings (engine/backend/cuda/cuda_roofline.h).
struct GpuCeilings {
  std::string device;
  double memory_bytes_per_s = 0.0;
  double bf16_flops_per_s = 0.0;
  size_t copy_bytes = 0;
  int gemm_size = 0;
};

// Measures the GPU named by device ("cuda", "cuda:N" or "auto"). Throws Error saying why when
// this build has no CUDA backend or there is no usable GPU.
GpuCeilings measure_gpu_ceilings(const std::string& device);

// Decode at one batch size (or the whole file's continuous run) against the roofline.
struct RooflinePoint {
  std::string label;  // "batch 8" or "continuous"
  int batch_size = 0;
  int64_t num_steps = 0;  // decode steps measured
  double step_ms = 0.0;   // mean decode step (engine step, host sampling included)
  double output_tokens_per_s = 0.0;
  double bytes_per_step = 0.0;  // mean, of the measured steps
  double flops_per_step = 0.0;
  double roofline_ms = 0.0;  // mean roofline time of the measured steps
  bool is_memory_bound = true;
  double fraction() const { return step_ms > 0 ? roofline_ms / step_ms : 0.0; }
};

struct RooflineReport {
  GpuCeilings gpu;
  std::string backend;  // Backend::describe of the backend measured
  std::vector<RooflinePoint> points;
};

// Measures the GPU, then decodes batch_sizes.size() fixed batches (batch b: b prompts, cycled
// from the file, each generating sampling.max_tokens tokens with ignore_eos) and the whole file
// with continuous batching, on one backend. Throws Error as measure_gpu_ceilings does.
RooflineReport run_roofline_bench(const ModelSession& session,
                                  const std::vector<std::vector<int32_t>>& prompts,
                                  const BenchSpec& spec, const std::vector<int>& batch_sizes);

// Builds the backend a bench runs on: CUDA with spec's activation type and graph switch, or
// what make_backend gives for spec.device.
std::unique_ptr<Backend> make_bench_backend(const Model& model, const BenchSpec& spec);

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
  // Hybrid models: the state slots beside the blocks, the most held at once, the bytes of one.
  int num_state_slots = 0;
  int peak_state_slots = 0;
  size_t state_slot_bytes = 0;
  bool is_constrained = false;  // the requests carried a grammar
  int64_t num_masks = 0;        // grammar masks computed (one per constrained row per step)
  double mask_p50_us = 0.0;
  double mask_p99_us = 0.0;

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
