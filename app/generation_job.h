// One run of a model over an instruction file, kept in a job store. Rows are read lazily (a
// bounded window is in the service at a time, so a 2 GB file never sits in memory), turned into
// requests, submitted to the one RequestService the job is lent (a local model's engine service
// or remote servers: the job does not care where its tokens come from), and committed to the job
// as they finish. A resumed job skips every row the store already holds. Used by `sluice
// generate`, the GUI's EngineWorker and the headless demo. Plain C++: the caller chooses the
// thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/batch_rows.h"
#include "app/generation_spec.h"
#include "app/grammar_notes.h"
#include "app/job_inbox.h"
#include "app/job_progress.h"
#include "app/job_results.h"
#include "app/job_validity.h"
#include "app/output_row.h"
#include "app/row_schemas.h"
#include "app/service_lease.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/prompt_builder.h"
#include "engine/jobs/job_lock.h"
#include "engine/jobs/job_store.h"

namespace sluice {

// A job runs in one process at a time: create() and resume() take the job's lock (job_lock.h)
// and throw JobInUse, naming the holder's pid, when another process runs it; the lock is held
// until run() returns (or the job is destroyed without running).
class GenerationJob {
 public:
  // A new job stored at job_path, which must not exist yet or be an uninitialised job file (one
  // whose run stopped before its first commit; it holds no rows): load() then replaces it.
  // Throws Error for a remote spec with options only a local model has.
  static std::unique_ptr<GenerationJob> create(const GenerationSpec& spec,
                                               const std::string& job_path);
  // Resumes the job at job_path with its stored parameters; device and threads may differ.
  static std::unique_ptr<GenerationJob> resume(const std::string& job_path,
                                               const std::string& device, int num_threads);
  ~GenerationJob();

  // Takes the service the rows run on (ModelHost::lend_for_job(spec()) lends it), opens the
  // input, has the service check the job's grammar, and creates the job store (a new job) or
  // checks the model against it (a resumed one). A local spec needs a lease with the model's
  // session (its tokenizer builds the prompts); a remote one, a service that takes text. Throws
  // Error; everything that can refuse the job comes before the job file is created.
  void load(ServiceLease lease);

  // Generates every row not yet in the job. on_row sees each result once it is committed to the
  // job file (rows finish into the store's queue and are announced a commit at a time), with when
  // its request arrived (seconds since run() started; 0 for skipped rows);
  // on_step runs when the job wakes and the service has stepped since (at least every 100 ms
  // while it runs). While *pause is true the job submits no new row and takes no result: its
  // rows in the engine may finish there, but nothing is committed or announced until the pause
  // ends (the service goes on serving its other clients).
  // Returns when the file is done, the job is cancelled (*cancel; unfinished rows stay pending
  // for a resume) or a bad row stops it.
  RunSummary run(const std::function<void(const RowResult&, double arrival_s)>& on_row,
                 const std::function<void(const StepStats&, const JobProgress&)>& on_step,
                 const std::atomic<bool>* cancel = nullptr,
                 const std::atomic<bool>* pause = nullptr);

  // Generates one committed row again through the job's service (the same parameters and sample
  // key; beside whatever else runs there) and returns its samples, to check that a row does not
  // depend on its batch. May be called on another thread while run() runs or is paused (after
  // load()): it reads the row through its own connection to the job file and shares only the
  // thread-safe service and const state with run(). on_wait (may be empty) is told, in words,
  // what the row waits for: requests ahead of it in the engine's queue (a paused job's rows
  // already there still run), or a full queue (it retries until a place frees). Once *cancel is
  // true the request is aborted (its samples end with "abort"). Throws Error naming the job file
  // and row when the row has no result or was skipped.
  std::vector<SampleResult> run_row_alone(
      int64_t row_index, const std::atomic<bool>* cancel = nullptr,
      const std::function<void(const std::string& reason)>& on_wait = {});

  // Changes where a resumed remote job's requests go (its endpoints, limits, key variable)
  // before load(). Throws Error for a job that runs a local model.
  void change_remote(const std::function<void(RemoteSpec&)>& change);

  // The process that held the job before and died without releasing it (killed, crashed), whose
  // lock create() or resume() took over; nullopt when the job was free.
  const std::optional<JobLockHolder>& lock_taken_over() const { return lock_taken_over_; }

  // True when create() found an uninitialised job file at the path, which load() replaces.
  bool replaces_uninitialised_job() const { return replaces_uninitialised_job_; }
  // Stored rows that did not read back when load() opened the job; run() generates them again.
  const std::vector<UnreadableRow>& unreadable_rows() const { return unreadable_rows_; }
  // What compiling this run's grammars ignored or dropped: the job's own (after load()) and each
  // row's own schema or batch line's structure as it is first submitted (a local service's only:
  // remote servers compile their own way). Kept in the job too (JobInfo::grammar_notes). Read it
  // on run()'s thread (in on_row, on_step or after run()).
  const GrammarNotes& grammar_notes() const { return grammar_notes_; }

  const GenerationSpec& spec() const { return spec_; }
  JobStore& store() { return *store_; }  // after load()
  bool is_remote() const { return spec_.remote.is_remote(); }
  // What the job was lent (after load()): its service, and a local model's session.
  const ServiceLease& lease() const { return lease_; }
  RequestService& service() { return *lease_.service; }            // after load()
  const ModelSession& session() const { return *lease_.session; }  // a local job's, after load()

 private:
  struct PendingRow;

  GenerationJob(GenerationSpec spec, std::unique_ptr<JobStore> store);
  // load()'s steps.
  void open_input(const std::vector<FieldInfo>& fields);
  void check_schema_column(const std::vector<FieldInfo>& fields) const;
  void open_job_store();
  std::string model_identity() const;
  // Adds a grammar's notes to grammar_notes_ and, the new ones, to the job.
  void note_grammar(const GrammarSource& source, const std::vector<std::string>& notes);

  // run()'s steps.
  bool fill_window(JobProgress& progress, RunSummary& summary);
  // Returns row made ready to submit, or null when it was recorded (failed, skipped) or stopped
  // the job instead.
  std::unique_ptr<PendingRow> prepare_row(DatasetRow row, JobProgress& progress,
                                          RunSummary& summary);
  // Records a bad row (skipped, with row's fields when it was read) or stops, as the spec asks.
  void handle_bad_row(const DatasetRowError& e, JobProgress& progress, RunSummary& summary,
                      const DatasetRow* row = nullptr);
  // Builds a batch line's prompt and sampling into pending; returns false when the line was
  // refused (recorded as a bad row).
  bool build_batch_row(const DatasetRow& row, PendingRow& pending, JobProgress& progress,
                       RunSummary& summary);
  bool submit(std::unique_ptr<PendingRow>& pending, JobProgress& progress, RunSummary& summary);
  // Applies the spec's LongPromptPolicy to a prompt that does not fit the context (a fitting one
  // passes untouched); returns false when the row was recorded (failed or skipped) instead.
  bool fit_context(const DatasetRow& row, BuiltPrompt& prompt, JobProgress& progress);
  void collect(uint64_t row_key, FinishedRequest finished, JobProgress& progress);
  void collect_ready(JobProgress& progress);
  void store_result(const RowResult& result, JobProgress& progress, double arrival_s);
  size_t window_size() const { return job_window_size(spec_); }
  // True when the service takes text (remote servers): prompts go as messages or text.
  bool takes_text() const { return lease_.session == nullptr; }
  // The request a pending row (or a stored one, for run_row_alone) is submitted as.
  ServiceRequest request_for(const BuiltPrompt& prompt, const SamplingParams& sampling,
                             int64_t row_index, bool is_chat) const;
  // run_row_alone()'s steps: the stored row's request as its run submitted it, and its samples.
  ServiceRequest stored_row_request(const RowResult& stored) const;
  std::vector<SampleResult> run_alone(const ServiceRequest& request,
                                      const std::atomic<bool>* cancel,
                                      const std::function<void(const std::string&)>& on_wait);
  // Returns the rows read so far, bad ones included, within the spec's limit.
  int64_t rows_read() const;

  GenerationSpec spec_;
  std::unique_ptr<JobLock> lock_;  // held from create()/resume() until run() returns
  std::optional<JobLockHolder> lock_taken_over_;
  std::string job_path_;  // a new job's file, created by load()
  std::unique_ptr<JobStore> store_;
  bool is_resume_ = false;
  bool replaces_uninitialised_job_ = false;
  std::vector<UnreadableRow> unreadable_rows_;
  GrammarNotes grammar_notes_;
  ServiceLease lease_;  // what the rows run on
  std::unique_ptr<JobResults> results_;
  std::shared_ptr<JobInbox> inbox_;  // shared with the streams' callbacks
  std::unique_ptr<DatasetReader> reader_;
  std::unique_ptr<PromptBuilder> prompt_builder_;
  std::unique_ptr<RowSchemas> row_schemas_;  // when the spec names a schema column
  JobValidity validity_;                     // judges each finished row by its structured output
  std::unique_ptr<BatchRows> batch_rows_;    // when the input is an OpenAI Batch file
  std::unordered_map<int64_t, bool> finished_rows_;
  std::unordered_map<uint64_t, std::unique_ptr<PendingRow>> in_flight_;  // by row key
  std::unique_ptr<PendingRow> deferred_;  // read while the service's queue was full
  uint64_t next_row_key_ = 1;
  double arrival_origin_s_ = 0.0;  // the service's clock when run() started
  bool is_reader_done_ = false;
  bool is_stopping_ = false;
  int64_t last_row_index_ = -1;
};

}  // namespace sluice
