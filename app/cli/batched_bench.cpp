#include "app/cli/batched_bench.h"

#include <chrono>
#include <random>

#include "engine/backend/borrowed_backend.h"
#include "engine/core/error.h"
#include "engine/memory_plan.h"

namespace sluice::cli {

std::vector<std::vector<int32_t>> random_prompts(const ModelSession& session, int count, int length,
                                                 uint32_t seed) {
  const int vocab = session.model->config.vocab_size;
  const int32_t bos = session.tokenizer->bos_id();
  const int32_t eos = session.tokenizer->eos_id();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, vocab - 1);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(count));
  for (auto& p : prompts) {
    p.reserve(static_cast<size_t>(length));
    while (p.size() < static_cast<size_t>(length)) {
      const int32_t id = pick(rng);
      if (id != bos && id != eos) p.push_back(id);
    }
  }
  return prompts;
}

BatchedReport run_batched_bench(const ModelSession& session, const BenchSpec& spec,
                                const std::vector<int>& batch_sizes, int prompt_tokens) {
  const std::unique_ptr<Backend> backend = make_bench_backend(*session.model, spec);
  BatchedReport report;
  report.backend = backend->describe();
  report.weight_bytes_held = backend->memory().weight_bytes;
  if (backend->memory().device_total_bytes == 0) {
    report.bandwidth = measure_host_read_bandwidth(spec.num_threads);
    report.weight_bytes_per_step = streamed_weight_bytes(*session.model, 0);
  } else {
    const GpuCeilings gpu = measure_gpu_ceilings(spec.device);
    report.bandwidth = {gpu.memory_bytes_per_s, "device copy bandwidth, " + gpu.device};
    report.weight_bytes_per_step =
        streamed_weight_bytes(*session.model, gpu_element_bytes(spec));
  }
  SamplingParams sampling = spec.sampling;
  sampling.ignore_eos = true;  // every request decodes max_tokens tokens
  for (const int batch : batch_sizes) {
    EngineConfig config = spec.engine;
    config.max_num_seqs = batch;
    // The previous engine's pool is still allocated: shrink it to one block so the plan for
    // this engine sees that memory free again.
    backend->allocate_kv_cache(1, config.block_size);
    config = fit_engine_to_backend(*backend, config);
    Engine engine(session.model->config, *session.tokenizer,
                  std::make_unique<BorrowedBackend>(*backend), config);
    report.kv_pool_bytes = backend->memory().kv_cache_bytes;
    report.kv_pool_tokens = static_cast<int64_t>(engine.num_kv_blocks()) * config.block_size;
    const auto prompts =
        random_prompts(session, batch, prompt_tokens, 0x5eed0000u + static_cast<uint32_t>(batch));
    BatchedPoint p;
    p.batch = batch;
    p.prompt_tokens = prompt_tokens;
    const auto begin = std::chrono::steady_clock::now();
    for (size_t i = 0; i < prompts.size(); ++i) engine.add_request(prompts[i], sampling, i);
    while (engine.has_unfinished()) {
      const StepResult step = engine.step();
      for (const auto& f : step.finished) {
        if (f.finish_reason == FinishReason::Error) fail("bench: a request failed: ", f.error);
      }
      const StepStats& s = step.stats;
      p.generated_tokens += s.num_generation_tokens;
      if (s.num_prompt_tokens > 0) {
        p.prefill_tokens += s.num_prompt_tokens;
        p.prefill_s += s.step_time_ms / 1000.0;
      } else if (s.num_scheduled_requests > 0) {
        ++p.decode_steps;
        p.decode_tokens += s.num_generation_tokens;
        p.decode_s += s.step_time_ms / 1000.0;
      }
    }
    p.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (p.prefill_tokens != static_cast<int64_t>(batch) * prompt_tokens)
      fail("bench: batch ", batch, " recomputed prompt tokens (", p.prefill_tokens, " for ",
           static_cast<int64_t>(batch) * prompt_tokens,
           "): the KV pool is too small for it; give --kv-cache-bytes");
    report.points.push_back(p);
  }
  return report;
}

}  // namespace sluice::cli
