#include "app/pipeline/model_step.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/generation_job.h"
#include "app/model_host.h"
#include "app/pipeline/whole_file.h"
#include "engine/core/error.h"
#include "engine/core/sha256.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/job_store.h"

namespace sluice {

std::string model_facts_path(const std::string& job_path) {
  return job_path + ".model.json";
}

namespace {

// What the model was, beside its job: the dataset card's provenance reads it even when the step
// is cached and no model is loaded.
void write_model_facts(const GenerationJob& job, const std::string& path) {
  nlohmann::ordered_json facts;
  if (job.is_remote()) {
    facts = {{"remote_model", job.lease().model_name},
             {"servers", job.lease().service->describe()}};
  } else {
    const Model& m = *job.session().model;
    const std::string& chat_template =
        job.spec().prompt.chat_template.empty() ? m.chat_template : job.spec().prompt.chat_template;
    facts = {{"file", std::filesystem::path(job.spec().model_path).filename().string()},
             {"format", m.format_name()},
             {"architecture", m.config.describe()},
             {"weights", m.weight_dtypes()},
             {"weight_bytes", m.weight_bytes()},
             {"tokenizer", job.session().tokenizer->describe()},
             {"chat_template_sha256", chat_template.empty() ? "" : sha256_hex(chat_template)}};
  }
  write_whole_file(path, facts.dump(1) + "\n");
}

}  // namespace

bool is_job_complete(const std::string& job_path) {
  if (!std::filesystem::exists(job_path) || is_uninitialised_job_file(job_path)) return false;
  const JobCounts counts = JobStore::open(job_path)->counts();
  return counts.total_rows >= 0 && counts.unreadable == 0 && counts.finished() >= counts.total_rows;
}

bool run_model_step(const GenerationSpec& spec, const std::string& job_path, ModelHost& host,
                    const ModelStepEvents& events, const std::atomic<bool>* cancel, StepRun& run) {
  const auto start = std::chrono::steady_clock::now();
  const bool is_resume = std::filesystem::exists(job_path) && !is_uninitialised_job_file(job_path);
  auto job = is_resume ? GenerationJob::resume(job_path, spec.device, spec.num_threads)
                       : GenerationJob::create(spec, job_path);
  if (events.on_note && is_resume) events.on_note("resuming " + job_path);
  job->load(host.lend_for_job(job->spec(), {}, events.on_note));
  write_model_facts(*job, model_facts_path(job_path));
  const RunSummary summary = job->run(
      [&](const RowResult& r, double) {
        run.prompt_tokens += r.prompt_tokens;
        for (const SampleResult& s : r.samples) {
          ++run.model_calls;
          run.generated_tokens += s.output_tokens;
        }
      },
      [&](const StepStats& stats, const JobProgress& progress) {
        if (events.on_progress) events.on_progress(stats, progress);
      },
      cancel);
  run.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (summary.is_cancelled) return false;
  if (!summary.stop_error.empty())
    fail(summary.stop_error, " (the rows finished before it are in ", job_path, ")");
  const JobCounts counts = job->store().counts();
  run.rows_in = counts.total_rows;
  run.rows_out = counts.done;
  return true;
}

}  // namespace sluice
