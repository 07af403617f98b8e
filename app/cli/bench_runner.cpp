#include "app/cli/bench_runner.h"

#include <algorithm>
#include <chrono>

#include "app/cli/read_bandwidth.h"
#include "engine/backend/borrowed_backend.h"
#include "engine/core/error.h"
#include "engine/memory_plan.h"
#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_roofline.h"
#endif

namespace sluice::cli {

namespace {

struct RooflineTally {
  int64_t num_steps = 0;
  int64_t num_memory_bound = 0;
  double step_ms = 0.0;
  double roofline_s = 0.0;
  double bytes = 0.0;
  double flops = 0.0;

  void add(const RooflineModel::Step& step, double ms) {
    ++num_steps;
    num_memory_bound += step.is_memory_bound ? 1 : 0;
    step_ms += ms;
    roofline_s += step.seconds;
    bytes += step.bytes;
    flops += step.flops;
  }
  // Fills p's means over the tallied steps.
  void fill(RooflinePoint& p) const {
    p.num_steps = num_steps;
    if (num_steps == 0) return;
    const auto n = static_cast<double>(num_steps);
    p.step_ms = step_ms / n;
    p.roofline_ms = 1000.0 * roofline_s / n;
    p.bytes_per_step = bytes / n;
    p.flops_per_step = flops / n;
    p.is_memory_bound = 2 * num_memory_bound >= num_steps;
  }
};

struct Accumulator {
  int64_t num_steps = 0;
  int64_t scheduled_requests = 0;
  int64_t reserved_slots = 0;  // sum over steps of blocks held x block size
  int64_t used_slots = 0;      // sum over steps of token slots in use
  int peak_blocks = 0;
  int64_t peak_used_slots = 0;  // token slots in use at the step with peak_blocks
  int peak_running = 0;
  int num_state_slots = 0;  // hybrid models: the state slots, the most held, the bytes of one
  int peak_state_slots = 0;
  size_t state_slot_bytes = 0;
  int64_t output_tokens = 0;
  int64_t prompt_tokens = 0;
  int64_t preemptions = 0;

  // Roofline bookkeeping, when a model is given: decode-only steps (with full_batch requests,
  // unless full_batch is 0) and all steps.
  const RooflineModel* roofline = nullptr;
  int full_batch = 0;
  RooflineTally decode;
  RooflineTally all;

  void add(const StepStats& s, int block_size) {
    if (roofline && s.num_scheduled_requests > 0) {
      const RooflineModel::Step step =
          roofline->step(s.num_scheduled_tokens, s.num_generation_tokens, s.num_kv_tokens);
      all.add(step, s.step_time_ms);
      if (s.num_prompt_tokens == 0 && (full_batch == 0 || s.num_scheduled_requests == full_batch))
        decode.add(step, s.step_time_ms);
    }
    ++num_steps;
    scheduled_requests += s.num_scheduled_requests;
    reserved_slots += static_cast<int64_t>(s.num_kv_blocks_used) * block_size;
    used_slots += s.num_kv_tokens;
    if (s.num_kv_blocks_used > peak_blocks) {
      peak_blocks = s.num_kv_blocks_used;
      peak_used_slots = s.num_kv_tokens;
    }
    peak_running = std::max(peak_running, s.num_running);
    num_state_slots = s.num_state_slots;
    state_slot_bytes = s.state_slot_bytes;
    peak_state_slots = std::max(peak_state_slots, s.num_state_slots_used);
    output_tokens += s.num_generation_tokens;
    prompt_tokens += s.num_prompt_tokens;
  }
};

// Steps the engine until it is idle, failing on any request error.
void drain(Engine& engine, Accumulator& acc, int64_t& preemptions_base) {
  while (engine.has_unfinished()) {
    const StepResult step = engine.step();
    for (const auto& f : step.finished) {
      if (f.finish_reason == FinishReason::Error) fail("bench: a request failed: ", f.error);
    }
    acc.add(step.stats, engine.config().block_size);
    acc.preemptions = preemptions_base + step.stats.num_preemptions;
  }
}

}  // namespace

const char* to_string(BenchMode mode) {
  switch (mode) {
    case BenchMode::Sequential:
      return "sequential";
    case BenchMode::Static:
      return "static";
    case BenchMode::Continuous:
      return "continuous";
  }
  return "?";
}

BenchMode parse_bench_mode(const std::string& name) {
  if (name == "sequential") return BenchMode::Sequential;
  if (name == "static") return BenchMode::Static;
  if (name == "continuous") return BenchMode::Continuous;
  fail("unknown bench mode '", name, "' (sequential, static, continuous)");
}

BenchResult run_bench_mode(BenchMode mode, const ModelSession& session,
                           const std::vector<std::vector<int32_t>>& prompts,
                           const BenchSpec& spec) {
  EngineConfig config = spec.engine;
  int batch = 0;
  switch (mode) {
    case BenchMode::Sequential:
      batch = 1;
      break;
    case BenchMode::Static:
      batch = spec.static_batch;
      break;
    case BenchMode::Continuous:
      batch = config.max_num_seqs;
      break;
  }
  config.max_num_seqs = batch;
  Engine engine(session.model->config, *session.tokenizer, make_bench_backend(*session.model, spec),
                config);
  Accumulator acc;
  int64_t preemptions_base = 0;
  const auto begin = std::chrono::steady_clock::now();
  if (mode == BenchMode::Continuous) {
    for (size_t i = 0; i < prompts.size(); ++i)
      engine.add_request(prompts[i], spec.sampling, i, spec.grammar);
    drain(engine, acc, preemptions_base);
  } else {
    // Sequential is static batching with batches of one: a batch starts when the last ends.
    for (size_t start = 0; start < prompts.size(); start += static_cast<size_t>(batch)) {
      const size_t end = std::min(prompts.size(), start + static_cast<size_t>(batch));
      for (size_t i = start; i < end; ++i)
        engine.add_request(prompts[i], spec.sampling, i, spec.grammar);
      drain(engine, acc, preemptions_base);
    }
  }
  BenchResult r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  r.mode = mode;
  r.batch_cap = batch;
  r.num_requests = prompts.size();
  r.prompt_tokens = acc.prompt_tokens;
  r.output_tokens = acc.output_tokens;
  r.num_steps = acc.num_steps;
  r.mean_batch = acc.num_steps > 0 ? static_cast<double>(acc.scheduled_requests) /
                                         static_cast<double>(acc.num_steps)
                                   : 0;
  r.mean_occupancy = batch > 0 ? r.mean_batch / batch : 0.0;
  const size_t block_bytes = engine.backend().kv_block_bytes(config.block_size);
  const size_t token_bytes = block_bytes / static_cast<size_t>(config.block_size);
  r.peak_kv_blocks = acc.peak_blocks;
  r.num_state_slots = acc.num_state_slots;
  r.peak_state_slots = acc.peak_state_slots;
  r.state_slot_bytes = acc.state_slot_bytes;
  r.kv_pool_bytes = static_cast<size_t>(engine.num_kv_blocks()) * block_bytes;
  r.peak_kv_reserved_bytes = static_cast<size_t>(acc.peak_blocks) * block_bytes;
  r.kv_reserved_over_used = acc.used_slots > 0 ? static_cast<double>(acc.reserved_slots) /
                                                     static_cast<double>(acc.used_slots)
                                               : 0.0;
  r.kv_reserved_over_used_at_peak = acc.peak_used_slots > 0
                                        ? static_cast<double>(acc.peak_blocks) * config.block_size /
                                              static_cast<double>(acc.peak_used_slots)
                                        : 0.0;
  r.naive_reserved_bytes = static_cast<size_t>(acc.peak_running) *
                           static_cast<size_t>(engine.max_model_len()) * token_bytes;
  r.num_preemptions = acc.preemptions;
  r.is_constrained = spec.grammar != nullptr;
  std::vector<float> mask_us = engine.grammar_constraints().mask_times_us();
  r.num_masks = static_cast<int64_t>(mask_us.size());
  if (!mask_us.empty()) {
    std::sort(mask_us.begin(), mask_us.end());
    r.mask_p50_us = mask_us[mask_us.size() / 2];
    r.mask_p99_us = mask_us[std::min(mask_us.size() - 1, mask_us.size() * 99 / 100)];
  }
  return r;
}

std::unique_ptr<Backend> make_bench_backend(const Model& model, const BenchSpec& spec) {
#ifdef SLUICE_HAS_CUDA
  if (spec.device == "cuda" || spec.device.starts_with("cuda:")) {
    return std::make_unique<CudaBackend>(
        model, CudaBackendOptions{.device_index = parse_cuda_device(spec.device),
                                  .activation_dtype = parse_activation_dtype(spec.activations),
                                  .enable_cuda_graphs = spec.cuda_graphs,
                                  .kv_cache_dtype = spec.engine.kv_cache_dtype,
                                  .num_host_expert_layers = spec.engine.num_cpu_moe_layers,
                                  .num_host_threads = spec.num_threads});
  }
#endif
  return make_backend(model, spec.device, spec.num_threads, spec.engine.kv_cache_dtype,
                      spec.engine.num_cpu_moe_layers);
}

RooflineModel::Step RooflineModel::step(int num_tokens, int num_logits_rows,
                                        int64_t num_context_tokens) const {
  Step out;
  out.bytes =
      weight_bytes_per_step + kv_bytes_per_context_token * static_cast<double>(num_context_tokens);
  out.flops = flops_per_token * num_tokens + flops_per_logits_row * num_logits_rows +
              flops_per_attention_pair * static_cast<double>(num_context_tokens);
  const double memory_s = memory_bytes_per_s > 0 ? out.bytes / memory_bytes_per_s : 0.0;
  const double compute_s = flops_per_s > 0 ? out.flops / flops_per_s : 0.0;
  out.is_memory_bound = memory_s >= compute_s;
  out.seconds = std::max(memory_s, compute_s);
  return out;
}

size_t gpu_element_bytes(const BenchSpec& spec) {
  return spec.activations == "fp32" ? 4 : 2;  // bf16 and fp16 (bench_command checks the names)
}

RooflineModel make_roofline_model(const ModelConfig& c, size_t element_bytes,
                                  double memory_bytes_per_s, double flops_per_s) {
  const double hidden = c.hidden_size;
  const double layer_params = hidden * (c.q_size() + 2.0 * c.kv_size()) + c.q_size() * hidden +
                              3.0 * hidden * c.intermediate_size;
  const double lm_head_params = hidden * c.vocab_size;
  RooflineModel m;
  m.weight_bytes_per_step =
      (c.num_layers * layer_params + lm_head_params) * static_cast<double>(element_bytes);
  m.kv_bytes_per_context_token =
      2.0 * c.num_layers * c.kv_size() * static_cast<double>(element_bytes);
  m.flops_per_token = 2.0 * c.num_layers * layer_params;
  m.flops_per_logits_row = 2.0 * lm_head_params;
  m.flops_per_attention_pair = 4.0 * c.num_layers * c.q_size();
  m.memory_bytes_per_s = memory_bytes_per_s;
  m.flops_per_s = flops_per_s;
  return m;
}

GpuCeilings measure_gpu_ceilings(const std::string& device) {
#ifdef SLUICE_HAS_CUDA
  const int index = device == "auto" ? 0 : parse_cuda_device(device);
  const CudaRoofline r = measure_cuda_roofline(index);
  return GpuCeilings{r.device, r.memory_bytes_per_s, r.bf16_flops_per_s, r.copy_bytes, r.gemm_size};
#else
  fail(
      "the GPU roofline needs the CUDA backend, and this build has none (SLUICE_CUDA=OFF); "
      "asked for device ",
      device);
#endif
}

namespace {

// Runs one engine over the backend and returns its roofline points: one for a fixed batch
// (its full-batch decode steps), two for the continuous run (decode steps, all steps).
std::vector<RooflinePoint> run_roofline_engine(int batch, bool is_continuous, Backend& backend,
                                               const ModelSession& session,
                                               const std::vector<std::vector<int32_t>>& prompts,
                                               const BenchSpec& spec, const RooflineModel& model) {
  EngineConfig config = spec.engine;
  config.max_num_seqs = batch;
  // The previous engine's pool is still allocated: shrink it to one block so the plan for this
  // engine sees that memory free again.
  backend.allocate_kv_cache(1, config.block_size);
  config = fit_engine_to_backend(backend, config);
  Engine engine(session.model->config, *session.tokenizer,
                std::make_unique<BorrowedBackend>(backend), config);
  SamplingParams sampling = spec.sampling;
  sampling.ignore_eos = true;  // every request decodes max_tokens: full batches throughout
  const size_t count = is_continuous ? prompts.size() : static_cast<size_t>(batch);
  for (size_t i = 0; i < count; ++i)
    engine.add_request(prompts[i % prompts.size()], sampling, i, spec.grammar);
  Accumulator acc;
  acc.roofline = &model;
  acc.full_batch = is_continuous ? 0 : batch;
  int64_t preemptions_base = 0;
  const auto begin = std::chrono::steady_clock::now();
  drain(engine, acc, preemptions_base);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  RooflinePoint decode;
  decode.batch_size = batch;
  acc.decode.fill(decode);
  if (!is_continuous) {
    decode.label = "batch " + std::to_string(batch);
    decode.output_tokens_per_s = decode.step_ms > 0 ? 1000.0 * batch / decode.step_ms : 0.0;
    return {decode};
  }
  const double tokens_per_s = wall_s > 0 ? static_cast<double>(acc.output_tokens) / wall_s : 0.0;
  decode.label = "continuous, decode steps";
  decode.output_tokens_per_s = tokens_per_s;
  RooflinePoint all = decode;
  acc.all.fill(all);
  all.label = "continuous, all steps";
  return {decode, all};
}

}  // namespace

RooflineReport run_roofline_bench(const ModelSession& session,
                                  const std::vector<std::vector<int32_t>>& prompts,
                                  const BenchSpec& spec, const std::vector<int>& batch_sizes) {
  if (prompts.empty()) fail("bench: no prompts");
  RooflineReport report;
  report.gpu = measure_gpu_ceilings(spec.device);
  const std::unique_ptr<Backend> backend = make_bench_backend(*session.model, spec);
  if (backend->memory().device_total_bytes == 0)
    fail("the GPU roofline needs a CUDA device; device ", spec.device, " is ", backend->name());
  report.backend = backend->describe();
  const ModelConfig& config = session.model->config;
  const size_t element_bytes = gpu_element_bytes(spec);
  RooflineModel model = make_roofline_model(config, element_bytes, report.gpu.memory_bytes_per_s,
                                            report.gpu.bf16_flops_per_s);
  // The cache as the backend holds it (an FP8 cache's codes and scales).
  model.kv_bytes_per_context_token = static_cast<double>(backend->kv_block_bytes(1));
  // The matrices as the device holds them: quantized ones stream their blocks.
  model.weight_bytes_per_step = streamed_weight_bytes(*session.model, element_bytes);
  for (const int batch : batch_sizes) {
    for (auto& p : run_roofline_engine(batch, false, *backend, session, prompts, spec, model))
      report.points.push_back(std::move(p));
  }
  for (auto& p : run_roofline_engine(spec.engine.max_num_seqs, true, *backend, session, prompts,
                                     spec, model)) {
    report.points.push_back(std::move(p));
  }
  return report;
}

}  // namespace sluice::cli
