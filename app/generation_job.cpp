#include "app/generation_job.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

nlohmann::ordered_json sample_json(const FinishedRequest& f, bool with_token_ids) {
  nlohmann::ordered_json s;
  s["output"] = f.output_text;
  s["output_tokens"] = f.output_token_ids.size();
  s["finish_reason"] = to_string(f.finish_reason);
  if (!f.error.empty()) s["error"] = f.error;
  if (with_token_ids) s["output_token_ids"] = f.output_token_ids;
  return s;
}

}  // namespace

std::string dump_jsonl_row(const nlohmann::ordered_json& row) {
  return row.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

GenerationJob::GenerationJob(GenerationJobSpec spec) : spec_(std::move(spec)) {}

GenerationJob::~GenerationJob() = default;

void GenerationJob::load(const LoadOptions& load_options) {
  rows_ = read_prompt_file(spec_.input_path, spec_.limit);
  session_ = open_model_session(spec_.model_path, spec_.tokenizer_path, load_options);
  engine_ = std::make_unique<Engine>(session_.model->config, *session_.tokenizer,
                                     make_backend(*session_.model, spec_.device, spec_.num_threads),
                                     spec_.engine);
}

size_t GenerationJob::run(const std::function<void(const RowOutcome&)>& on_row,
                          const std::function<void(const StepStats&, size_t)>& on_step,
                          const std::atomic<bool>* cancel) {
  if (!engine_) fail("generation job: run() before load()");
  const EncodeOptions encode{.add_bos = session_.tokenizer->add_bos_default()};
  row_states_.assign(rows_.size(), RowState{});
  results_.assign(rows_.size(), nlohmann::ordered_json());
  for (size_t i = 0; i < rows_.size(); ++i) {
    row_of_[engine_->add_request(session_.tokenizer->encode(rows_[i].prompt, encode),
                                 spec_.sampling, i)] = i;
  }
  size_t rows_done = 0, rows_failed = 0;
  bool is_cancelled = false;
  while (engine_->has_unfinished()) {
    if (!is_cancelled && cancel && cancel->load()) {
      is_cancelled = true;
      for (const auto& [group_id, row_idx] : row_of_) {
        if (row_states_[row_idx].num_finished < spec_.sampling.n) engine_->abort(group_id);
      }
    }
    StepResult step = engine_->step();
    for (auto& f : step.finished) {
      const size_t row_idx = row_of_.at(f.group_id);
      RowState& state = row_states_[row_idx];
      state.samples.resize(static_cast<size_t>(spec_.sampling.n));
      const size_t sample_idx = f.sample_idx;
      state.samples[sample_idx] = std::move(f);
      if (++state.num_finished < spec_.sampling.n) continue;
      RowOutcome outcome = complete_row(row_idx);
      ++rows_done;
      rows_failed += outcome.has_error ? 1 : 0;
      if (on_row) on_row(outcome);
    }
    if (on_step) on_step(step.stats, rows_done);
  }
  return rows_failed;
}

RowOutcome GenerationJob::complete_row(size_t row_idx) {
  const RowState& state = row_states_[row_idx];
  const PromptRow& row = rows_[row_idx];
  nlohmann::ordered_json out;
  out["id"] = row.id.is_null() ? nlohmann::ordered_json(row_idx) : row.id;
  out["prompt"] = row.prompt;
  const FinishedRequest& first = state.samples.front();
  out["prompt_tokens"] = first.num_prompt_tokens;
  if (state.samples.size() == 1) {
    out.update(sample_json(first, spec_.with_token_ids));
  } else {
    nlohmann::ordered_json samples = nlohmann::ordered_json::array();
    for (const auto& s : state.samples) samples.push_back(sample_json(s, spec_.with_token_ids));
    out["samples"] = std::move(samples);
  }
  double total_ms = 0.0;
  RowOutcome outcome;
  for (const auto& s : state.samples) {
    total_ms = std::max(total_ms, s.total_ms);
    if (s.finish_reason == FinishReason::Error && !outcome.has_error) {
      outcome.has_error = true;
      outcome.error = s.error;
    }
  }
  out["timings"] = {
      {"queue_ms", first.queue_ms}, {"ttft_ms", first.ttft_ms}, {"total_ms", total_ms}};
  outcome.row_idx = row_idx;
  outcome.row = &row;
  outcome.json = out;
  results_[row_idx] = std::move(out);
  return outcome;
}

}  // namespace sluice
