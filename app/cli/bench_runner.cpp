#include "app/cli/bench_runner.h"

#include <algorithm>
#include <chrono>

#include "engine/core/error.h"

namespace sluice::cli {

namespace {

struct Accumulator {
  int64_t num_steps = 0;
  int64_t scheduled_requests = 0;
  int64_t reserved_slots = 0;  // sum over steps of blocks held x block size
  int64_t used_slots = 0;      // sum over steps of token slots in use
  int peak_blocks = 0;
  int64_t peak_used_slots = 0;  // token slots in use at the step with peak_blocks
  int peak_running = 0;
  int64_t output_tokens = 0;
  int64_t prompt_tokens = 0;
  int64_t preemptions = 0;

  void add(const StepStats& s, int block_size) {
    ++num_steps;
    scheduled_requests += s.num_scheduled_requests;
    reserved_slots += static_cast<int64_t>(s.num_kv_blocks_used) * block_size;
    used_slots += s.num_kv_tokens;
    if (s.num_kv_blocks_used > peak_blocks) {
      peak_blocks = s.num_kv_blocks_used;
      peak_used_slots = s.num_kv_tokens;
    }
    peak_running = std::max(peak_running, s.num_running);
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
  Engine engine(session.model->config, *session.tokenizer,
                make_backend(*session.model, spec.device, spec.num_threads), config);
  Accumulator acc;
  int64_t preemptions_base = 0;
  const auto begin = std::chrono::steady_clock::now();
  if (mode == BenchMode::Continuous) {
    for (size_t i = 0; i < prompts.size(); ++i) engine.add_request(prompts[i], spec.sampling, i);
    drain(engine, acc, preemptions_base);
  } else {
    // Sequential is static batching with batches of one: a batch starts when the last ends.
    for (size_t start = 0; start < prompts.size(); start += static_cast<size_t>(batch)) {
      const size_t end = std::min(prompts.size(), start + static_cast<size_t>(batch));
      for (size_t i = start; i < end; ++i) engine.add_request(prompts[i], spec.sampling, i);
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
  return r;
}

}  // namespace sluice::cli
