#include "app/generation_job.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "app/job_rows.h"
#include "app/prompt_truncation.h"
#include "engine/core/error.h"
#include "engine/core/sha256.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/job_table.h"

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

// Options only a local model has are refused for a remote job, before anything runs.
void check_remote_options(const GenerationSpec& spec) {
  if (!spec.remote.is_remote()) return;
  if (!spec.prompt.chat_template.empty())
    fail(
        "a remote job cannot use --chat-template: the servers apply their own chat template (give "
        "--no-chat-template to send the filled-in text as a plain completion)");
  if (spec.with_token_ids) fail("a remote job cannot keep output token ids: the servers send text");
}

}  // namespace

struct GenerationJob::PendingRow {
  DatasetRow row;
  BuiltPrompt prompt;
  bool is_chat = true;              // for a service that takes text: chat or text completion
  std::optional<int64_t> own_seed;  // a batch line's own seed (remote servers)
  // The spec's, or a batch line's own; its grammar is the spec's source, or the row's own (its
  // schema column's, its batch line's), which the service compiles.
  SamplingParams sampling;
  bool has_own_grammar = false;
  std::unique_ptr<RequestHandle> handle;
  std::vector<FinishedRequest> samples;
  int num_finished = 0;
};

GenerationJob::GenerationJob(GenerationSpec spec, std::unique_ptr<JobStore> store)
    : spec_(std::move(spec)), store_(std::move(store)) {}

GenerationJob::~GenerationJob() = default;

std::unique_ptr<GenerationJob> GenerationJob::create(const GenerationSpec& spec,
                                                     const std::string& job_path) {
  check_remote_options(spec);
  // Locked before the file is looked at: two runs starting one new job must not both create it.
  auto lock = JobLock::acquire(job_path);
  const bool replaces_uninitialised = is_uninitialised_job_file(job_path);
  if (std::filesystem::exists(job_path) && !replaces_uninitialised) {
    fail(job_path, ": a job file already exists; resume it with --resume ", job_path,
         " or remove it");
  }
  if (!std::filesystem::is_regular_file(spec.input_path)) fail(spec.input_path, ": no such file");
  GenerationSpec stored = spec;
  stored.input_path = std::filesystem::absolute(spec.input_path).string();
  auto job = std::unique_ptr<GenerationJob>(new GenerationJob(stored, nullptr));
  job->job_path_ = job_path;  // the store is created by load(), once the model is known
  job->replaces_uninitialised_job_ = replaces_uninitialised;
  job->lock_taken_over_ = lock->taken_over();
  job->lock_ = std::move(lock);
  return job;
}

std::unique_ptr<GenerationJob> GenerationJob::resume(const std::string& job_path,
                                                     const std::string& device, int num_threads) {
  // A missing job is named as one, not as a lock file that cannot be created.
  if (!std::filesystem::exists(job_path)) fail(job_path, ": no such job file");
  // Locked before the finished rows are read: a second process would run all the others again.
  auto lock = JobLock::acquire(job_path);
  auto store = JobStore::open(job_path);
  GenerationSpec spec = spec_from_json(store->info().params);
  spec.device = device;
  spec.num_threads = num_threads;
  check_remote_options(spec);
  if (!std::filesystem::exists(spec.input_path))
    fail(job_path, ": the job's input ", spec.input_path, " is gone");
  if (sha256_file_hex(spec.input_path) != store->info().source_sha256) {
    fail(job_path, ": the input ", spec.input_path,
         " changed since the job started; its rows would not match");
  }
  auto job = std::unique_ptr<GenerationJob>(new GenerationJob(std::move(spec), std::move(store)));
  job->is_resume_ = true;
  job->lock_taken_over_ = lock->taken_over();
  job->lock_ = std::move(lock);
  return job;
}

std::string GenerationJob::model_identity() const {
  // A remote job's model is the name the servers serve it under: resuming it elsewhere is fine
  // as long as the name is the same.
  if (takes_text()) return sha256_hex(str_cat("remote|", lease_.model_name));
  const Model& m = *lease_.session->model;
  return sha256_hex(str_cat(m.format_name(), "|", m.config.describe(), "|", m.weight_dtypes(), "|",
                            m.weight_bytes(), "|", lease_.session->tokenizer->describe()));
}

void GenerationJob::change_remote(const std::function<void(RemoteSpec&)>& change) {
  if (!spec_.remote.is_remote())
    fail(store_ ? store_->path() : job_path_, ": the job runs a local model (", spec_.model_path,
         "); --endpoint cannot resume it");
  change(spec_.remote);
}

void GenerationJob::load(ServiceLease lease) {
  if (!lease.service) fail("generation job: no service to run the rows on");
  if (is_remote() && lease.session) fail("generation job: a remote job runs no local model");
  if (!is_remote() && !lease.session)
    fail("generation job: a local job needs its model's session beside its service");
  lease_ = std::move(lease);
  reader_ = open_dataset(spec_.input_path, spec_.format);
  // Everything that can refuse the job (the prompt template, the schema column, the grammar)
  // comes before the job file, so a refused start leaves nothing behind to resume or remove.
  const auto fields = discover_fields(spec_.input_path, reader_->format());
  check_schema_column(fields);
  open_input(fields);
  // The job's grammar is checked by the service that runs it (compiled through its cache, for a
  // local one): a grammar it refuses leaves no job file behind.
  std::vector<std::string> notes;
  if (spec_.sampling.grammar) notes = lease_.service->check_grammar(*spec_.sampling.grammar);
  open_job_store();
  if (spec_.sampling.grammar) note_grammar(*spec_.sampling.grammar, notes);
  unreadable_rows_.clear();
  for (const int64_t row_index : store_->finished_row_indices(&unreadable_rows_))
    finished_rows_[row_index] = true;
  results_ = std::make_unique<JobResults>(*store_, unreadable_rows_);
}

void GenerationJob::note_grammar(const GrammarSource& source,
                                 const std::vector<std::string>& notes) {
  const size_t num_left_out = grammar_notes_.num_left_out();
  const std::vector<std::string> kept = grammar_notes_.add(source, notes);
  const bool has_more = grammar_notes_.num_left_out() > num_left_out;
  if (!kept.empty() || has_more) store_->add_grammar_notes(kept, has_more);
}

void GenerationJob::check_schema_column(const std::vector<FieldInfo>& fields) const {
  if (spec_.schema_column.empty()) return;
  const bool has_column = std::any_of(fields.begin(), fields.end(), [&](const FieldInfo& f) {
    return f.name == spec_.schema_column;
  });
  if (has_column) return;
  std::string names;
  for (const FieldInfo& f : fields) names += (names.empty() ? "" : ", ") + f.name;
  fail(spec_.input_path, ": no column '", spec_.schema_column,
       "' for --schema-column (the rows have: ", names, ")");
}

// The prompt builder (the model's chat template, or text for a service that takes text), a batch
// file's rows and the rows' own schemas.
void GenerationJob::open_input(const std::vector<FieldInfo>& fields) {
  const DatasetFormat format = reader_->format();
  PromptOptions options = spec_.prompt;
  // A constrained answer: the reasoning is opened for the model, the grammar follows it.
  options.constrained_answer = spec_.sampling.grammar != nullptr || !spec_.schema_column.empty();
  if (takes_text()) {
    prompt_builder_ = std::make_unique<PromptBuilder>(options, format, fields);
  } else {
    const ModelSession& session = *lease_.session;
    prompt_builder_ =
        std::make_unique<PromptBuilder>(options, session.model->chat_template, *session.tokenizer,
                                        format, fields, session.model->chat_template_origin);
  }
  if (format == DatasetFormat::OpenAiBatch) {
    batch_rows_ = std::make_unique<BatchRows>(
        spec_.input_path, takes_text() ? nullptr : &*lease_.session->tokenizer, spec_.json_grammar);
  }
  if (!spec_.schema_column.empty())
    row_schemas_ =
        std::make_unique<RowSchemas>(spec_.schema_column, spec_.input_path, spec_.json_grammar);
  inbox_ = std::make_shared<JobInbox>();
  // A prompt that cannot fit is refused before it is tokenized (a hostile row costs no tokens).
  const int max_model_len = lease_.service->max_model_len();
  prompt_builder_->set_max_model_len(max_model_len);
  if (batch_rows_) batch_rows_->set_max_model_len(max_model_len);
}

// A new job's file is created; a resumed one's model is checked against the one it started with.
void GenerationJob::open_job_store() {
  if (is_resume_) {
    if (store_->info().model_identity == model_identity()) return;
    if (takes_text())
      fail(store_->path(), ": the servers serve '", lease_.model_name,
           "', not the model the job started with");
    fail(store_->path(), ": the model at ", spec_.model_path,
         " is not the one the job started with");
  }
  JobInfo info;
  info.source_path = spec_.input_path;
  info.source_sha256 = sha256_file_hex(spec_.input_path);
  info.source_size_bytes = static_cast<int64_t>(std::filesystem::file_size(spec_.input_path));
  info.source_format = to_string(reader_->format());
  info.model_path = takes_text()
                        ? str_cat(lease_.model_name, " at ", spec_.remote.endpoints.front())
                        : spec_.model_path;
  info.model_identity = model_identity();
  info.params = spec_to_json(spec_);
  store_ = JobStore::create(job_path_, info,
                            replaces_uninitialised_job_ ? JobStore::IfExists::ReplaceUninitialised
                                                        : JobStore::IfExists::Fail);
}

void GenerationJob::handle_bad_row(const DatasetRowError& e, JobProgress& progress,
                                   RunSummary& summary, const DatasetRow* row) {
  last_row_index_ = std::max(last_row_index_, e.row_index);
  if (spec_.on_bad_row == BadRowPolicy::Stop) {
    summary.stop_error = e.what();  // the reader names the file, line and column
    is_stopping_ = true;
    return;
  }
  if (finished_rows_.count(e.row_index)) return;
  RowResult skipped;
  skipped.row_index = e.row_index;
  skipped.line = e.line;
  skipped.status = RowStatus::Skipped;
  skipped.error = e.what();
  if (row) skipped.input = row->fields;  // a batch line keeps its custom_id for the export
  store_result(skipped, progress, 0.0);
}

bool GenerationJob::build_batch_row(const DatasetRow& row, PendingRow& pending,
                                    JobProgress& progress, RunSummary& summary) {
  try {
    BatchRow batch = batch_rows_->build(row, *prompt_builder_, spec_.sampling);
    pending.prompt = std::move(batch.prompt);
    pending.sampling = std::move(batch.sampling);
    // A line without structured output of its own keeps the job's (the same source).
    pending.has_own_grammar =
        pending.sampling.grammar && pending.sampling.grammar != spec_.sampling.grammar;
    pending.is_chat = batch.is_chat;
    pending.own_seed = batch.own_seed;
  } catch (const Error& e) {
    handle_bad_row(DatasetRowError(e.what(), row.line, row.row_index), progress, summary, &row);
    return false;
  }
  return true;
}

ServiceRequest GenerationJob::request_for(const BuiltPrompt& prompt, const SamplingParams& sampling,
                                          int64_t row_index, bool is_chat) const {
  ServiceRequest request{prompt.token_ids, sampling, static_cast<uint64_t>(row_index), false};
  request.sampling.reasoning = prompt.reasoning;
  if (takes_text()) {
    request.messages = prompt.messages;
    request.prompt_text = prompt.text;
    request.is_chat = is_chat;
  }
  return request;
}

// Submits a row to the service; returns false (keeping the row) when the service's queue is full.
// A row whose own grammar the service refuses is recorded (failed, or a bad batch line) and
// dropped; the job's own grammar refused stops the job (load() checked it: it cannot happen).
bool GenerationJob::submit(std::unique_ptr<PendingRow>& pending, JobProgress& progress,
                           RunSummary& summary) {
  const uint64_t row_key = next_row_key_;
  ServiceRequest request =
      request_for(pending->prompt, pending->sampling, pending->row.row_index, pending->is_chat);
  request.exact_seed = pending->own_seed;
  try {
    // A row's own grammar is checked first for its notes (the service compiles it once: submit
    // finds it in its cache); remote servers compile it their own way and have none to give.
    if (pending->has_own_grammar && !is_remote()) {
      const GrammarSource& source = *pending->sampling.grammar;
      note_grammar(source, lease_.service->check_grammar(source));
    }
    pending->handle = lease_.service->submit(std::move(request),
                                             [inbox = inbox_, row_key] { inbox->post(row_key); });
  } catch (const QueueFull&) {
    return false;
  } catch (const InvalidGrammar& e) {
    if (!pending->has_own_grammar) throw;
    const PendingRow& p = *pending;
    if (row_schemas_) {
      store_result(refused_row(p.row, p.prompt, spec_, e.what()), progress, 0.0);
    } else {  // a batch line's body: the line is refused as a bad one
      handle_bad_row(DatasetRowError(e.what(), p.row.line, p.row.row_index), progress, summary,
                     &p.row);
    }
    pending.reset();
    return true;
  }
  ++next_row_key_;
  in_flight_[row_key] = std::move(pending);
  return true;
}

// Reads rows into the service until the window is full; returns false when nothing more can
// come.
bool GenerationJob::fill_window(JobProgress& progress, RunSummary& summary) {
  const size_t window = window_size();
  if (deferred_ && !is_stopping_ && submit(deferred_, progress, summary)) deferred_.reset();
  while (!deferred_ && !is_reader_done_ && !is_stopping_ && in_flight_.size() < window) {
    std::optional<DatasetRow> row;
    try {
      row = reader_->next();
    } catch (const DatasetRowError& e) {
      handle_bad_row(e, progress, summary);
      continue;
    }
    if (!row || (spec_.limit > 0 && row->row_index >= static_cast<int64_t>(spec_.limit))) {
      is_reader_done_ = true;
      progress.rows_total = rows_read();
      break;
    }
    last_row_index_ = std::max(last_row_index_, row->row_index);
    if (finished_rows_.count(row->row_index)) {
      if (batch_rows_) batch_rows_->remember(*row);
      ++progress.rows_resumed;
      continue;
    }
    std::unique_ptr<PendingRow> pending = prepare_row(std::move(*row), progress, summary);
    // Kept for later when other clients filled the queue.
    if (pending && !submit(pending, progress, summary)) deferred_ = std::move(pending);
  }
  if (is_stopping_) deferred_.reset();
  progress.file_fraction = reader_->progress();
  progress.rows_in_flight = static_cast<int64_t>(in_flight_.size());
  return !in_flight_.empty() || deferred_ != nullptr;
}

std::unique_ptr<GenerationJob::PendingRow> GenerationJob::prepare_row(DatasetRow row,
                                                                      JobProgress& progress,
                                                                      RunSummary& summary) {
  auto pending = std::make_unique<PendingRow>();
  pending->sampling = spec_.sampling;
  pending->is_chat = spec_.prompt.use_chat_template;
  if (batch_rows_) {
    if (!build_batch_row(row, *pending, progress, summary)) return nullptr;
  } else {
    try {
      pending->prompt = prompt_builder_->build(row);
    } catch (const DatasetRowError& e) {
      handle_bad_row(DatasetRowError(str_cat(spec_.input_path, ":", e.line, ": ", e.what()), e.line,
                                     e.row_index),
                     progress, summary);
      return nullptr;
    }
  }
  if (!fit_context(row, pending->prompt, progress)) return nullptr;
  if (row_schemas_) {
    try {
      pending->sampling.grammar =
          std::make_shared<const GrammarSource>(row_schemas_->source_for(row));
      pending->has_own_grammar = true;
    } catch (const Error& e) {
      store_result(refused_row(row, pending->prompt, spec_, e.what()), progress, 0.0);
      return nullptr;
    }
  }
  pending->row = std::move(row);
  pending->samples.resize(static_cast<size_t>(pending->sampling.n));
  return pending;
}

bool GenerationJob::fit_context(const DatasetRow& row, BuiltPrompt& prompt, JobProgress& progress) {
  const int max_model_len = lease_.service->max_model_len();
  if (max_model_len <= 0) return true;  // a remote server checks the length itself
  const bool is_refused = !prompt.refusal.empty();
  if (!is_refused && prompt.token_ids.size() < static_cast<size_t>(max_model_len)) return true;
  switch (spec_.on_long_prompt) {
    case LongPromptPolicy::Fail:
      if (!is_refused) return true;  // the engine refuses it with its own error
      store_result(refused_row(row, prompt, spec_, prompt.refusal), progress, 0.0);
      return false;
    case LongPromptPolicy::Skip: {
      const RowResult skipped = unrun_row(
          row, prompt, spec_, RowStatus::Skipped,
          str_cat(spec_.input_path, ":", row.line, ": the prompt does not fit the context of ",
                  max_model_len, " tokens (",
                  is_refused ? prompt.refusal : str_cat(prompt.token_ids.size(), " tokens"),
                  "); skipped as the job asks (on_long_prompt skip)"));
      store_result(skipped, progress, 0.0);
      return false;
    }
    case LongPromptPolicy::Truncate:
      truncate_prompt(prompt, *prompt_builder_, max_model_len, spec_.sampling.max_tokens,
                      lease_.session->tokenizer->bos_id());
      return true;
  }
  return true;
}

void GenerationJob::store_result(const RowResult& result, JobProgress& progress, double arrival_s) {
  finished_rows_[result.row_index] = true;
  results_->add(result, progress, arrival_s);
}

void GenerationJob::collect(uint64_t row_key, FinishedRequest finished, JobProgress& progress) {
  const auto it = in_flight_.find(row_key);
  if (it == in_flight_.end()) return;
  PendingRow& p = *it->second;
  const size_t sample_idx = finished.sample_idx;
  p.samples[sample_idx] = std::move(finished);
  if (++p.num_finished < p.sampling.n) return;
  RowResult r = finished_row(p.row, p.prompt, p.sampling, p.samples, spec_.with_token_ids);
  // Judged as it finishes, by what its structured output means (kept in the job file).
  if (p.sampling.grammar && r.status == RowStatus::Done) validity_.judge(r, *p.sampling.grammar);
  const bool is_aborted =
      std::any_of(p.samples.begin(), p.samples.end(),
                  [](const FinishedRequest& s) { return s.finish_reason == FinishReason::Abort; });
  // A shared service's clock started with its first client: this job's timeline starts at run().
  const double arrival_s = std::max(0.0, p.samples.front().arrival_s - arrival_origin_s_);
  in_flight_.erase(it);    // no lock held: the handle's callback may be running
  if (is_aborted) return;  // cancelled: stays pending, a resume runs it again
  store_result(r, progress, arrival_s);
}

// Takes the results of every row whose stream has news, waiting briefly for the first.
void GenerationJob::collect_ready(JobProgress& progress) {
  for (const uint64_t row_key : inbox_->take(std::chrono::milliseconds(100))) {
    const auto it = in_flight_.find(row_key);
    if (it == in_flight_.end()) continue;
    for (auto& event : it->second->handle->stream().take_all()) {
      if (event.is_finished) collect(row_key, std::move(event.finished), progress);
    }
  }
}

RunSummary GenerationJob::run(
    const std::function<void(const RowResult&, double)>& on_row,
    const std::function<void(const StepStats&, const JobProgress&)>& on_step,
    const std::atomic<bool>* cancel, const std::atomic<bool>* pause) {
  if (!results_) fail("generation job: run() before load()");
  RequestService& service = *lease_.service;
  RunSummary summary;
  JobProgress& progress = summary.progress;
  results_->set_on_row(on_row);  // bad rows found while reading are reported too
  progress.job = store_->counts();
  auto last_flush = Clock::now();
  int64_t last_step_seen = service.num_steps();
  arrival_origin_s_ = service.seconds_since_start();
  while (fill_window(progress, summary)) {
    while (pause && pause->load() && !(cancel && cancel->load())) {
      results_->flush(progress);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (cancel && cancel->load() && !summary.is_cancelled) {
      summary.is_cancelled = true;
      is_stopping_ = true;
      for (const auto& [row_key, pending] : in_flight_) pending->handle->abort();
    }
    collect_ready(progress);
    if (Clock::now() - last_flush >= std::chrono::seconds(1)) {
      results_->flush(progress);  // no finished row waits in memory for more than a second
      last_flush = Clock::now();
    }
    progress.rows_in_flight = static_cast<int64_t>(in_flight_.size());
    progress.rows_committing = static_cast<int64_t>(results_->num_unannounced());
    const int64_t num_steps = service.num_steps();
    if (on_step && num_steps != last_step_seen) on_step(service.metrics().latest_step, progress);
    last_step_seen = num_steps;
  }
  if (is_reader_done_ && !is_stopping_) {
    progress.rows_total = rows_read();
    store_->set_total_rows(progress.rows_total);
    progress.job.total_rows = progress.rows_total;
  }
  results_->flush(progress);
  // Every row this run adds is committed: another process may take the job from here on (the
  // app keeps a finished job to run rows alone, which writes nothing).
  lock_.reset();
  return summary;
}

int64_t GenerationJob::rows_read() const {
  const int64_t num_rows = last_row_index_ + 1;
  return spec_.limit > 0 ? std::min<int64_t>(static_cast<int64_t>(spec_.limit), num_rows)
                         : num_rows;
}

std::vector<SampleResult> GenerationJob::run_row_alone(
    int64_t row_index, const std::atomic<bool>* cancel,
    const std::function<void(const std::string&)>& on_wait) {
  if (!results_) fail("generation job: run_row_alone() before load()");
  // Its own connection: run() may be committing through store_ on another thread.
  const std::optional<RowResult> stored = JobTable::open(store_->path())->row(row_index);
  if (!stored) fail(store_->path(), ": row ", row_index, " has no result yet");
  if (stored->status == RowStatus::Skipped)
    fail(store_->path(), ": row ", row_index, " was skipped: ", stored->error);
  return run_alone(stored_row_request(*stored), cancel, on_wait);
}

// The same request as the run submitted: the stored text encoded by the same rules (a batch
// line's own prompt and parameters built again from its line), its prompt cut as fit_context()
// cut it, the row's own schema.
ServiceRequest GenerationJob::stored_row_request(const RowResult& stored) const {
  const int64_t row_index = stored.row_index;
  ServiceRequest request{{}, spec_.sampling, static_cast<uint64_t>(row_index), false};
  const auto truncate_stored = [this](BuiltPrompt& prompt) {
    if (const int max_model_len = lease_.service->max_model_len(); max_model_len > 0)
      truncate_prompt(prompt, *prompt_builder_, max_model_len, spec_.sampling.max_tokens,
                      lease_.session->tokenizer->bos_id());
  };
  if (takes_text() && batch_rows_) {
    BatchRow batch = batch_rows_->rebuild(stored, *prompt_builder_, spec_.sampling);
    request = request_for(batch.prompt, batch.sampling, row_index, batch.is_chat);
    request.exact_seed = batch.own_seed;
  } else if (takes_text()) {
    request = request_for(BuiltPrompt{stored.messages, stored.prompt, {}, "", {}}, spec_.sampling,
                          row_index, spec_.prompt.use_chat_template);
  } else if (batch_rows_) {
    BatchRow batch = batch_rows_->rebuild(stored, *prompt_builder_, spec_.sampling);
    if (spec_.on_long_prompt == LongPromptPolicy::Truncate) truncate_stored(batch.prompt);
    request.prompt_token_ids = std::move(batch.prompt.token_ids);
    request.sampling = std::move(batch.sampling);
  } else if (spec_.on_long_prompt == LongPromptPolicy::Truncate) {
    // The stored prompt is the whole text; the run gave the engine its end.
    BuiltPrompt prompt{
        stored.messages, stored.prompt, prompt_builder_->encode_whole(stored.prompt), "", {}};
    truncate_stored(prompt);
    request.prompt_token_ids = std::move(prompt.token_ids);
  } else {
    request.prompt_token_ids = prompt_builder_->encode(stored.prompt);
  }
  if (row_schemas_)
    request.sampling.grammar =
        std::make_shared<const GrammarSource>(row_schemas_->source_for(stored));
  if (!batch_rows_) {  // the job's controls again (a batch line's are its own, rebuilt above)
    std::string text = stored.prompt;
    request.sampling.reasoning = prompt_builder_->reasoning_of(text);
  }
  return request;
}

// Submits request (retrying while the queue is full) and returns its samples.
std::vector<SampleResult> GenerationJob::run_alone(
    const ServiceRequest& request, const std::atomic<bool>* cancel,
    const std::function<void(const std::string&)>& on_wait) {
  RequestService& service = *lease_.service;
  std::unique_ptr<RequestHandle> handle;
  for (bool told_full = false; !handle;) {
    if (cancel && cancel->load()) throw Cancelled();
    const int num_ahead = service.metrics().num_waiting;
    try {
      handle = service.submit(request);
    } catch (const QueueFull& e) {
      if (on_wait && !told_full)
        on_wait(str_cat(e.what(), "; the row is submitted when a place frees"));
      told_full = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (on_wait && num_ahead > 0) {
      on_wait(
          str_cat(num_ahead,
                  " requests are ahead of it in the engine's queue (a paused job's rows already ",
                  "there still run); it starts when the engine reaches it"));
    }
  }
  std::vector<SampleResult> samples(static_cast<size_t>(request.sampling.n));
  while (!handle->stream().is_drained()) {
    if (cancel && cancel->load()) handle->abort();
    const auto event = handle->stream().pop(Clock::now() + std::chrono::milliseconds(100));
    if (event && event->is_finished)
      samples[event->finished.sample_idx] = sample_from(event->finished, spec_.with_token_ids);
  }
  return samples;
}

}  // namespace sluice
